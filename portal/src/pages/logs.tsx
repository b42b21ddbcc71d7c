import { useSignal } from "@preact/signals";
import { useEffect, useMemo, useRef } from "preact/hooks";
import { ansiLine } from "../ansi";
import { authHeaders, query } from "../api/client";
import { problemFrom } from "../api/problem";
import { ErrorBox } from "../components/error";

const LINE_PX = 18;
const OVERSCAN = 30;

/**
 * A step's log: virtualized (100k lines scroll as smoothly as 100), ANSI
 * colours, search with highlight, wrap, download, and follow while the
 * step runs (reads from the last offset every second; the server tails a
 * running step while someone reads it).
 */
export function LogView({ run, step, attempt, running }: { run: string; step: string; attempt: number; running: boolean }) {
  const text = useSignal<string | null>(null);
  const error = useSignal<unknown>(null);
  const find = useSignal("");
  const wrap = useSignal(false);
  const followOn = useSignal(true);
  const scrollTop = useSignal(0);
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let stop = false;
    let offset = 0;
    text.value = null;
    error.value = null;
    const read = async () => {
      const url = `/v1/runs/${encodeURIComponent(run)}/logs` + query({ step, attempt: attempt || undefined, offset: offset || undefined });
      const response = await fetch(url, { headers: authHeaders() });
      const body = await response.text();
      if (!response.ok) throw problemFrom(response.status, response.statusText, response.headers.get("content-type") ?? "", body);
      const next = Number(response.headers.get("couler-log-offset") ?? NaN);
      text.value = (offset ? (text.value ?? "") : "") + body;
      offset = Number.isFinite(next) ? next : offset + new TextEncoder().encode(body).length;
      return response.headers.get("couler-log-complete") !== "false";
    };
    (async () => {
      try {
        performance.mark("log-fetch-start");
        let complete = await read();
        performance.measure("log-fetch", "log-fetch-start");
        let followed = false;
        while (!stop && running && !complete) {
          followed = true;
          await new Promise((r) => setTimeout(r, 1000));
          if (!stop) complete = await read().catch(() => true);
        }
        // The stored log of a finished step replaces the live one (stdout,
        // then stderr): offsets into the live text no longer apply, so a
        // followed log is read again whole.
        if (followed && !stop) {
          offset = 0;
          await read();
        }
      } catch (e) {
        if (!stop) error.value = e;
      }
    })();
    return () => {
      stop = true;
    };
  }, [run, step, attempt, running]);

  // A final newline ends the last line; it does not start another.
  const lines = useMemo(() => (text.value ?? "").replace(/\n$/, "").split("\n"), [text.value]);
  const needle = find.value;
  const matches = useMemo(() => {
    if (!needle) return [];
    const out: number[] = [];
    lines.forEach((l, i) => {
      if (l.includes(needle)) out.push(i);
    });
    return out;
  }, [lines, needle]);

  // Follow: stay at the bottom as lines arrive.
  useEffect(() => {
    const el = box.current;
    if (el && followOn.value && running) el.scrollTop = el.scrollHeight;
  }, [lines.length]);

  if (error.value) return <ErrorBox error={error.value} />;
  if (text.value === null) return <p aria-busy="true">Loading log…</p>;

  const height = box.current?.clientHeight ?? 400;
  const first = wrap.value ? 0 : Math.max(0, Math.floor(scrollTop.value / LINE_PX) - OVERSCAN);
  const last = wrap.value ? lines.length : Math.min(lines.length, Math.ceil((scrollTop.value + height) / LINE_PX) + OVERSCAN);
  const state = { cls: "" };
  const download = () => {
    const blob = new Blob([text.value ?? ""], { type: "text/plain" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${step}-attempt-${attempt}.log`;
    a.click();
    URL.revokeObjectURL(a.href);
  };
  return (
    <div class="log">
      <div class="log-tools">
        <label>
          Search
          <input type="search" value={find.value} onInput={(e) => (find.value = (e.target as HTMLInputElement).value)} />
        </label>
        {needle && (
          <span class="muted">
            {matches.length} line{matches.length === 1 ? "" : "s"}
            {matches.length > 0 && (
              <button
                class="link"
                onClick={() => box.current && (box.current.scrollTop = matches[0] * LINE_PX)}
              >
                first
              </button>
            )}
          </span>
        )}
        <label class="check">
          <input type="checkbox" checked={wrap.value} onChange={(e) => (wrap.value = (e.target as HTMLInputElement).checked)} />
          Wrap
        </label>
        {running && (
          <label class="check">
            <input
              type="checkbox"
              checked={followOn.value}
              onChange={(e) => (followOn.value = (e.target as HTMLInputElement).checked)}
            />
            Follow
          </label>
        )}
        <button class="secondary" onClick={download}>
          Download
        </button>
        <span class="muted">{lines.length.toLocaleString()} lines</span>
      </div>
      <div
        class={`log-box mono${wrap.value ? " wrap" : ""}`}
        ref={box}
        tabIndex={0}
        aria-label={`Log of ${step}, attempt ${attempt}`}
        onScroll={(e) => (scrollTop.value = (e.currentTarget as HTMLDivElement).scrollTop)}
      >
        <div style={{ height: wrap.value ? undefined : `${lines.length * LINE_PX}px`, position: "relative" }}>
          {lines.slice(first, last).map((line, k) => {
            const i = first + k;
            return (
              <div
                class={`log-line${needle && line.includes(needle) ? " hit" : ""}`}
                style={wrap.value ? undefined : { position: "absolute", top: `${i * LINE_PX}px` }}
              >
                <span class="ln" aria-hidden="true">
                  {i + 1}
                </span>
                {ansiLine(line, state).map((s) => (s.cls ? <span class={s.cls}>{s.text}</span> : s.text))}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
