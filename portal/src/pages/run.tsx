import { useSignal } from "@preact/signals";
import { useEffect, useMemo, useRef } from "preact/hooks";
import { authHeaders, get, post, type RunView, type StepView } from "../api/client";
import { follow } from "../api/sse";
import { Badge } from "../components/badge";
import { ErrorBox } from "../components/error";
import { GraphView } from "../graph/GraphView";
import { linkProps, route, setQuery } from "../router";
import { session } from "../session";
import { between, cacheWords, duration, look, TERMINAL_RUN, when } from "../status";
import { StepDrawer } from "./step";
import { PlanTab } from "./plan";
import { Timeline } from "./timeline";

/** What `GET /v1/runs/{id}/graph` answers. */
export interface GraphData {
  ir_hash: string;
  nodes: { name: string; kind: string }[];
  edges: [number, number][];
}

/** A step of a run, as `GET /v1/runs/{id}` gives it. */
export type Step = StepView;

type Run = RunView;

const TABS = ["graph", "steps", "timeline", "plan", "events"] as const;

/** One run: its DAG with live statuses, the steps table, logs, the plan. */
export function RunPage({ id }: { id: string }) {
  const run = useSignal<Run | null>(null);
  const graph = useSignal<GraphData | null>(null);
  const error = useSignal<unknown>(null);
  const version = useSignal(0);
  const events = useSignal<{ id: string; kind: string; step?: string; status?: string }[]>([]);
  const live = useSignal<"connecting" | "live" | "ended" | "reconnecting">("connecting");
  const search = useSignal("");
  const confirm = useSignal<"cancel" | "retry" | null>(null);
  const actionError = useSignal<unknown>(null);
  // Bumped by a retry: the run is read again and its new events followed.
  const generation = useSignal(0);
  const q = route().query;
  const tab = (q.get("tab") as (typeof TABS)[number]) ?? "graph";
  const selectedName = q.get("step");
  // Step name → its view, updated in place by events.
  const steps = useRef(new Map<string, Step>());

  // The run read again after steps finish: never two reads at once, at
  // most one waiting, at most one a second.
  const reloading = useRef<{ busy: boolean; again: boolean }>({ busy: false, again: false });
  function reload() {
    const r = reloading.current;
    if (r.busy) {
      r.again = true;
      return;
    }
    r.busy = true;
    void loadRun()
      .catch(() => {})
      .then(() => new Promise((done) => setTimeout(done, 1000)))
      .then(() => {
        r.busy = false;
        if (r.again) {
          r.again = false;
          reload();
        }
      });
  }

  async function loadRun() {
    const r = await get<Run>(`/v1/runs/${encodeURIComponent(id)}`);
    steps.current = new Map((r.steps ?? []).map((s) => [s.name, s]));
    run.value = r;
    version.value++;
    return r;
  }

  useEffect(() => {
    const controller = new AbortController();
    (async () => {
      try {
        const [r, g] = await Promise.all([loadRun(), get<GraphData>(`/v1/runs/${encodeURIComponent(id)}/graph`)]);
        graph.value = g;
        if (TERMINAL_RUN.has(r.status)) {
          live.value = "ended";
          return;
        }
        // Applied in batches, once per frame.
        let pending: { kind: string; step?: string; status?: string; id: string; message?: string }[] = [];
        let scheduled = false;
        const apply = () => {
          scheduled = false;
          const batch = pending;
          pending = [];
          let refresh = false;
          for (const e of batch) {
            if (e.step && e.status) {
              const s = steps.current.get(e.step);
              if (s) steps.current.set(e.step, { ...s, status: e.status as Step["status"] });
              else steps.current.set(e.step, { name: e.step, status: e.status, attempt: 0, outputs: {} } as Step);
              if (e.status !== "running") refresh = true;
            } else if (e.kind.startsWith("run.") && run.value) {
              run.value = { ...run.value, status: e.kind.slice(4) as Run["status"] };
              refresh = true;
            }
          }
          events.value = [...events.value, ...batch].slice(-2000);
          version.value++;
          // Finished steps carry outputs and timings: read them once settled
          // (at most one read at a time, and one more after it for what
          // finished meanwhile).
          if (refresh) reload();
        };
        await follow(`/v1/runs/${encodeURIComponent(id)}/events`, {
          headers: authHeaders(),
          lastEventId: r.last_event_id != null ? String(r.last_event_id) : undefined,
          signal: controller.signal,
          onEvent: (e) => {
            live.value = "live";
            let data: { step?: string; status?: string; message?: string } = {};
            try {
              data = JSON.parse(e.data);
            } catch {
              // Not JSON: kept as an event without a step.
            }
            pending.push({ id: e.id ?? "", kind: e.event, step: data.step, status: data.status, message: data.message });
            if (!scheduled) {
              scheduled = true;
              requestAnimationFrame(apply);
            }
          },
          onError: () => (live.value = "reconnecting"),
          onEnd: () => {
            live.value = "ended";
            void loadRun().catch(() => {});
          },
        });
      } catch (e) {
        if (!controller.signal.aborted) error.value = e;
      }
    })();
    return () => controller.abort();
  }, [id, generation.value]);

  const g = graph.value;
  const index = useMemo(() => new Map((g?.nodes ?? []).map((n, i) => [n.name, i])), [g]);
  const instances = useMemo(() => {
    // `train[3]` → counts by status under `train`.
    const out = new Map<string, Map<string, number>>();
    for (const [name, s] of steps.current) {
      const m = /^(.*)\[\d+\]$/.exec(name);
      if (!m) continue;
      let c = out.get(m[1]);
      if (!c) out.set(m[1], (c = new Map()));
      c.set(s.status, (c.get(s.status) ?? 0) + 1);
    }
    return out;
  }, [version.value]);

  if (error.value) return <ErrorBox error={error.value} />;
  const r = run.value;
  if (!r || !g) return <p aria-busy="true">Loading run…</p>;

  const status = (i: number) => steps.current.get(g.nodes[i].name)?.status ?? "pending";
  const note = (i: number) => {
    const name = g.nodes[i].name;
    const s = steps.current.get(name);
    const counts = instances.get(name);
    if (counts) {
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      const done = (counts.get("succeeded") ?? 0) + (counts.get("cached") ?? 0);
      return `${done}/${total} done${counts.get("failed") ? `, ${counts.get("failed")} failed` : ""}`;
    }
    if (s?.cache?.saved_ms) return `saved ${duration(s.cache.saved_ms)}`;
    if (s?.wall_ms != null) return duration(s.wall_ms);
    if (s?.started_at) return duration(between(s.started_at, s.finished_at));
    return null;
  };
  const needle = search.value.trim().toLowerCase();
  const highlight = new Set<number>();
  if (needle) {
    g.nodes.forEach((n, i) => {
      if (n.name.toLowerCase().includes(needle) || status(i) === needle) highlight.add(i);
    });
  }
  const counts = new Map<string, number>();
  g.nodes.forEach((_, i) => counts.set(status(i), (counts.get(status(i)) ?? 0) + 1));
  const summary =
    `${g.nodes.length} steps: ` +
    [...counts].map(([s, n]) => `${n} ${s}`).join(", ");
  const selected = selectedName != null ? (index.get(selectedName) ?? null) : null;
  const select = (i: number | null) => setQuery({ step: i === null ? undefined : g.nodes[i].name });

  async function act(kind: "cancel" | "retry") {
    confirm.value = null;
    actionError.value = null;
    try {
      await post<Run>(`/v1/runs/${encodeURIComponent(id)}/${kind}`);
      if (kind === "retry") {
        live.value = "connecting";
        generation.value++;
      } else {
        await loadRun();
      }
    } catch (e) {
      actionError.value = e;
    }
  }

  return (
    <section class="run">
      <header class="run-head">
        <h1>
          <Badge status={r.status} /> {r.workflow_name} <span class="muted mono">{r.id}</span>
        </h1>
        <p class="muted">
          attempt {r.attempt} · created {when(r.created_at)} by {r.created_by} · ran{" "}
          {duration(between(r.started_at, r.finished_at))}
          {r.cache_saved_ms ? ` · the cache saved ${duration(r.cache_saved_ms)}` : ""}
          {r.cancel_requested && !TERMINAL_RUN.has(r.status) ? " · cancel requested" : ""} ·{" "}
          <span aria-live="polite">{live.value === "ended" ? "finished" : live.value}</span>
        </p>
        {r.message && <p class="message">{r.message}</p>}
        <div class="actions">
          {session.can("editor") && !TERMINAL_RUN.has(r.status) && !r.cancel_requested && (
            <button onClick={() => (confirm.value = "cancel")} class="danger">
              Cancel run
            </button>
          )}
          {session.can("editor") && r.status === "failed" && (
            <button onClick={() => (confirm.value = "retry")}>Retry from failure</button>
          )}
          <a class="button secondary" {...linkProps(`/compare?runs=${r.id}`)}>
            Compare with…
          </a>
        </div>
        {confirm.value && (
          <div class="confirm" role="alertdialog" aria-label="Confirm">
            <p>
              {confirm.value === "cancel"
                ? "Cancel this run? Running steps are stopped; exit handlers still run."
                : "Retry from the failed steps? Steps that succeeded are kept."}
            </p>
            <button class={confirm.value === "cancel" ? "danger" : ""} onClick={() => act(confirm.value!)}>
              Yes, {confirm.value}
            </button>
            <button class="secondary" onClick={() => (confirm.value = null)}>
              No
            </button>
          </div>
        )}
        <ErrorBox error={actionError.value} />
        <dl class="params">
          {Object.entries(r.parameters).map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </>
          ))}
          {Object.entries(r.labels).map(([k, v]) => (
            <>
              <dt>label {k}</dt>
              <dd>{v}</dd>
            </>
          ))}
        </dl>
      </header>
      <div role="tablist" aria-label="Run views" class="tabs">
        {TABS.map((t) => (
          <button
            role="tab"
            aria-selected={tab === t}
            onClick={() => setQuery({ tab: t === "graph" ? undefined : t })}
          >
            {t[0].toUpperCase() + t.slice(1)}
          </button>
        ))}
      </div>
      {tab === "graph" && (
        <div class="graph-tab">
          <label class="search">
            Find step
            <input
              type="search"
              value={search.value}
              placeholder="name, or a status such as failed"
              onInput={(e) => (search.value = (e.target as HTMLInputElement).value)}
            />
          </label>
          <GraphView
            nodes={g.nodes}
            edges={g.edges}
            shapeKey={g.ir_hash}
            status={status}
            note={note}
            version={version.value}
            selected={selected}
            onSelect={select}
            highlight={highlight}
            summary={summary}
          />
          <p class="legend" aria-hidden="true">
            {["pending", "running", "succeeded", "cached", "skipped", "failed", "cancelled"].map((s) => (
              <span>
                <Badge status={s} />
              </span>
            ))}
          </p>
        </div>
      )}
      {tab === "steps" && <StepsTable steps={[...steps.current.values()]} onSelect={(name) => setQuery({ step: name })} />}
      {tab === "timeline" && <Timeline steps={[...steps.current.values()]} onSelect={(name) => setQuery({ step: name })} />}
      {tab === "plan" && <PlanTab id={id} />}
      {tab === "events" && (
        <ol class="events mono">
          {events.value.map((e) => (
            <li>
              #{e.id} {e.kind} {e.step ?? ""} {e.status ?? ""}
            </li>
          ))}
        </ol>
      )}
      {selectedName && (
        <StepDrawer
          run={r}
          step={steps.current.get(selectedName) ?? ({ name: selectedName, status: "pending", attempt: 0, outputs: {} } as Step)}
          instances={instancesOf(steps.current, selectedName)}
          onSelect={(name) => setQuery({ step: name })}
          onClose={() => setQuery({ step: undefined })}
        />
      )}
    </section>
  );
}

/** Every step as a row: the accessible twin of the graph. */
function StepsTable({ steps, onSelect }: { steps: Step[]; onSelect: (name: string) => void }) {
  const filter = useSignal("");
  const rows = steps.filter((s) => !filter.value || s.name.includes(filter.value) || s.status === filter.value);
  return (
    <div>
      <label class="search">
        Filter
        <input type="search" value={filter.value} onInput={(e) => (filter.value = (e.target as HTMLInputElement).value)} />
      </label>
      <table class="grid">
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Status</th>
            <th scope="col">Attempt</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
            <th scope="col">Cache</th>
            <th scope="col">CPU</th>
            <th scope="col">Peak memory</th>
            <th scope="col">Exit</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr>
              <td>
                <button class="link" onClick={() => onSelect(s.name)}>
                  {s.name}
                </button>
              </td>
              <td>
                <Badge status={s.status} />
              </td>
              <td>{s.attempt || "—"}</td>
              <td>{when(s.started_at)}</td>
              <td>{s.wall_ms != null ? duration(s.wall_ms) : duration(between(s.started_at, s.finished_at))}</td>
              <td>
                {s.cache ? `${cacheWords(s.cache.status)}${s.cache.saved_ms ? `, saved ${duration(s.cache.saved_ms)}` : ""}` : "—"}
                {s.cache?.reason ? <div class="muted">{s.cache.reason}</div> : null}
              </td>
              <td>{s.cpu_ms != null ? duration(s.cpu_ms) : "—"}</td>
              <td>{s.max_rss_kb != null ? `${(s.max_rss_kb / 1024).toFixed(1)} MiB` : "—"}</td>
              <td>{s.exit_code ?? "—"}</td>
              <td>{s.message ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The instances `name[0]`, `name[1]`, … of a fan-out, in index order. */
function instancesOf(steps: Map<string, Step>, name: string): Step[] {
  const out: [number, Step][] = [];
  const prefix = `${name}[`;
  for (const [n, s] of steps) {
    if (n.startsWith(prefix) && n.endsWith("]")) {
      const i = Number(n.slice(prefix.length, -1));
      if (Number.isInteger(i)) out.push([i, s]);
    }
  }
  return out.sort((a, b) => a[0] - b[0]).map(([, s]) => s);
}

export { look };
