import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { get, query, type RunView, type Schemas } from "../api/client";
import { Badge } from "../components/badge";
import { ErrorBox } from "../components/error";
import { linkProps, route, setQuery } from "../router";
import { between, duration, TERMINAL_RUN, when } from "../status";

type Page = Schemas["List_RunView"];
const STATUSES = ["queued", "planning", "running", "succeeded", "failed", "cancelled"];
/** How often the list refreshes while the tab is visible. */
const REFRESH_MS = 5000;

/** Runs, newest first, filtered as the API filters (kept in the URL). */
export function Runs() {
  const q = route().query;
  const filters = {
    status: q.get("status") ?? "",
    workflow: q.get("workflow") ?? "",
    label: q.get("label") ?? "",
    created_after: q.get("created_after") ?? "",
    created_before: q.get("created_before") ?? "",
  };
  const key = JSON.stringify(filters);
  const runs = useSignal<RunView[] | null>(null);
  const next = useSignal<string | null>(null);
  const error = useSignal<unknown>(null);

  async function load(cursor?: string) {
    try {
      const page = await get<Page>(
        "/v1/runs" +
          query({
            ...filters,
            created_after: filters.created_after && new Date(filters.created_after).toISOString(),
            created_before: filters.created_before && new Date(filters.created_before).toISOString(),
            cursor,
            limit: 50,
          }),
      );
      runs.value = cursor ? [...(runs.value ?? []), ...(page.items as RunView[])] : (page.items as RunView[]);
      if (!cursor) next.value = page.next_cursor ?? null;
      else next.value = page.next_cursor ?? null;
      error.value = null;
    } catch (e) {
      error.value = e;
    }
  }

  useEffect(() => {
    runs.value = null;
    void load();
    const timer = setInterval(() => {
      // Only the first page refreshes; pages loaded below stay as they are.
      if (document.visibilityState === "visible" && (runs.value?.length ?? 0) <= 50) void load();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [key]);

  const field = (name: keyof typeof filters, label: string, type: "text" | "datetime-local" = "text", placeholder = "") => (
    <label>
      {label}
      <input
        // Preact types `type` by union; both kinds take these props.
        type={type as "text"}
        value={filters[name]}
        placeholder={placeholder}
        onChange={(e) => setQuery({ [name]: (e.target as HTMLInputElement).value || undefined })}
      />
    </label>
  );

  return (
    <section>
      <h1>Runs</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter runs">
        <label>
          Status
          <select value={filters.status} onChange={(e) => setQuery({ status: (e.target as HTMLSelectElement).value || undefined })}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        {field("workflow", "Workflow", "text", "name or wf_…")}
        {field("label", "Labels", "text", "team=nlp,env=prod")}
        {field("created_after", "Created after", "datetime-local")}
        {field("created_before", "Created before", "datetime-local")}
      </form>
      <ErrorBox error={error.value} />
      {runs.value === null ? (
        <p aria-busy="true">Loading…</p>
      ) : runs.value.length === 0 ? (
        <p>No runs match.</p>
      ) : (
        <table class="grid">
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Run</th>
              <th scope="col">Workflow</th>
              <th scope="col">Steps</th>
              <th scope="col">Cache saved</th>
              <th scope="col">Created</th>
              <th scope="col">Duration</th>
              <th scope="col">By</th>
            </tr>
          </thead>
          <tbody>
            {runs.value.map((r) => (
              <tr>
                <td>
                  <Badge status={r.status} />
                </td>
                <td>
                  <a {...linkProps(`/runs/${r.id}`)}>{r.id}</a>
                </td>
                <td>
                  {r.workflow_name}
                  {r.workflow ? <span class="muted"> v{r.workflow.version}</span> : <span class="muted"> (inline)</span>}
                </td>
                <td>
                  <StepCounts counts={r.step_counts ?? undefined} />
                </td>
                <td>{savedText(r.cache_saved_ms ?? undefined)}</td>
                <td>{when(r.created_at)}</td>
                <td>{TERMINAL_RUN.has(r.status) || r.started_at ? duration(between(r.started_at, r.finished_at)) : "—"}</td>
                <td>{r.created_by}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next.value && (
        <button onClick={() => load(next.value ?? undefined)} class="secondary">
          Load more
        </button>
      )}
    </section>
  );
}

/** What list items carry beyond `RunView` once the API adds them. */

function StepCounts({ counts }: { counts?: Record<string, number> }) {
  if (!counts) return <span class="muted">—</span>;
  const parts = Object.entries(counts).filter(([, n]) => n > 0);
  if (parts.length === 0) return <span class="muted">none</span>;
  return (
    <span class="counts">
      {parts.map(([status, n]) => (
        <span class={`count s-${status}`} title={`${n} ${status}`}>
          {n} {status}
        </span>
      ))}
    </span>
  );
}

function savedText(ms?: number) {
  return ms ? `saved ${duration(ms)}` : <span class="muted">—</span>;
}
