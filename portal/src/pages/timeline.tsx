import { useSignal } from "@preact/signals";
import { useMemo, useRef } from "preact/hooks";
import { duration, look, when } from "../status";
import type { Step } from "./run";

const ROW_PX = 28;
const OVERSCAN = 20;

/**
 * When each step ran, as bars on one time axis (a Gantt chart), in start
 * order. Virtualized: only the rows in view are in the DOM, so a run of
 * 50,000 steps scrolls as one of 50. Steps that did not run (pending,
 * cached, skipped) are listed under the chart, counted, not drawn.
 */
export function Timeline({ steps, onSelect }: { steps: Step[]; onSelect: (name: string) => void }) {
  const scrollTop = useSignal(0);
  const box = useRef<HTMLDivElement>(null);
  const now = Date.now();
  const { rows, start, span, notRun } = useMemo(() => {
    const ran = steps
      .filter((s) => s.started_at)
      .map((s) => {
        const from = Date.parse(s.started_at!);
        const to = s.finished_at ? Date.parse(s.finished_at) : now;
        return { step: s, from, to: Math.max(to, from) };
      })
      .sort((a, b) => a.from - b.from || a.step.name.localeCompare(b.step.name));
    const start = ran.length ? ran[0].from : now;
    const end = ran.reduce((m, r) => Math.max(m, r.to), start);
    const notRun = new Map<string, number>();
    for (const s of steps) if (!s.started_at) notRun.set(s.status, (notRun.get(s.status) ?? 0) + 1);
    return { rows: ran, start, span: Math.max(end - start, 1), notRun };
  }, [steps]);

  if (rows.length === 0) return <p class="muted">No step has started yet.</p>;
  const height = box.current?.clientHeight ?? 480;
  const first = Math.max(0, Math.floor(scrollTop.value / ROW_PX) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop.value + height) / ROW_PX) + OVERSCAN);
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <div class="timeline">
      <p class="muted">
        {rows.length.toLocaleString()} step{rows.length === 1 ? "" : "s"} ran over {duration(span)} from {when(new Date(start).toISOString())}
        {[...notRun].map(([status, n]) => `; ${n.toLocaleString()} ${status}`).join("")}.
      </p>
      <div class="timeline-axis" aria-hidden="true">
        {ticks.map((t) => (
          <span style={{ left: `calc(var(--tl-label) + (100% - var(--tl-label)) * ${t})` }}>+{duration(span * t)}</span>
        ))}
      </div>
      <div
        class="timeline-box"
        style={{ height: `min(55vh, ${rows.length * ROW_PX + 2}px)` }}
        ref={box}
        role="list"
        aria-label="Steps by start time"
        onScroll={(e) => (scrollTop.value = (e.currentTarget as HTMLDivElement).scrollTop)}
      >
        <div style={{ height: `${rows.length * ROW_PX}px`, position: "relative" }}>
          {rows.slice(first, last).map((r, k) => {
            const i = first + k;
            const l = look(r.step.status);
            const left = ((r.from - start) / span) * 100;
            const width = Math.max(((r.to - r.from) / span) * 100, 0.2);
            const took = duration(r.to - r.from);
            return (
              <div class="timeline-row" role="listitem" style={{ top: `${i * ROW_PX}px` }}>
                <button class="link timeline-name" onClick={() => onSelect(r.step.name)} title={r.step.name}>
                  {r.step.name}
                </button>
                <div class="timeline-track">
                  <span
                    class="timeline-bar"
                    style={{ left: `${left}%`, width: `${width}%`, background: l.fill }}
                    title={`${r.step.name}: ${l.label}, ${took}`}
                  />
                  {/* After the bar, or before it when the bar ends near the right edge. */}
                  <span
                    class="timeline-note"
                    style={left + width > 80 ? { right: `${100 - left}%`, paddingRight: "4px" } : { left: `${left + width}%`, paddingLeft: "4px" }}
                  >
                    {l.icon} {took}
                  </span>
                </div>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
