import { useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { get, post, query, type RunView, type Schemas } from "../api/client";
import { ErrorBox } from "../components/error";
import { navigate, route } from "../router";
import { duration } from "../status";

type Detail = Schemas["WorkflowDetail"];
type Explanation = Schemas["Explanation"];

/**
 * Run a stored workflow: a form from its parameters, labels and priority,
 * the cache forecast for exactly these values before anything is created,
 * and an idempotency key so a double click makes one run.
 */
export function Submit() {
  const q = route().query;
  const name = useSignal(q.get("workflow") ?? "");
  const version = q.get("version") ?? "";
  const detail = useSignal<Detail | null>(null);
  const values = useSignal<Record<string, string>>({});
  const labels = useSignal("");
  const priority = useSignal("0");
  const forecast = useSignal<Explanation | null>(null);
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);
  // One key per form: resubmitting the same form returns the same run.
  const key = useRef(crypto.randomUUID());

  useEffect(() => {
    detail.value = null;
    if (!name.value) return;
    get<Detail>(`/v1/workflows/${encodeURIComponent(name.value)}` + query({ version }))
      .then((d) => {
        detail.value = d;
        const initial: Record<string, string> = {};
        for (const p of d.version.ir.parameters ?? []) initial[p.name] = p.default === undefined || p.default === null ? "" : String(p.default);
        values.value = initial;
        error.value = null;
      })
      .catch((e) => (error.value = e));
  }, [name.value, version]);

  // The forecast follows the values (debounced).
  useEffect(() => {
    const d = detail.value;
    if (!d) return;
    const timer = setTimeout(() => {
      post<Explanation>("/v1/cache/explain", { workflow: d.name, version: d.version.version, parameters: filled() })
        .then((f) => (forecast.value = f))
        .catch(() => (forecast.value = null));
    }, 300);
    return () => clearTimeout(timer);
  }, [detail.value, JSON.stringify(values.value)]);

  function filled() {
    return Object.fromEntries(Object.entries(values.value).filter(([, v]) => v !== ""));
  }

  function labelMap(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const pair of labels.value.split(",").map((s) => s.trim()).filter(Boolean)) {
      const [k, ...v] = pair.split("=");
      out[k.trim()] = v.join("=").trim();
    }
    return out;
  }

  async function submit(e: Event) {
    e.preventDefault();
    const d = detail.value;
    if (!d) return;
    busy.value = true;
    error.value = null;
    try {
      const run = await post<RunView>(
        "/v1/runs",
        { workflow: d.name, version: d.version.version, parameters: filled(), labels: labelMap(), priority: Number(priority.value) || 0 },
        { headers: { "Idempotency-Key": key.current } },
      );
      navigate(`/runs/${run.id}`);
    } catch (err) {
      error.value = err;
    } finally {
      busy.value = false;
    }
  }

  const d = detail.value;
  const f = forecast.value;
  // The same request from a shell (the token from the environment).
  const body = d
    ? JSON.stringify({ workflow: d.name, version: d.version.version, parameters: filled(), labels: labelMap() })
    : "";
  const cli = `curl -X POST "$COULER_SERVER/v1/runs" -H "Authorization: Bearer $COULER_TOKEN" -H "Content-Type: application/json" -d '${body.replace(/'/g, "'\\''")}'`;
  return (
    <section>
      <h1>Submit a run</h1>
      <form onSubmit={submit} class="form">
        <label>
          Workflow
          <input
            value={name.value}
            required
            placeholder="a stored workflow's name"
            onChange={(e) => (name.value = (e.target as HTMLInputElement).value.trim())}
          />
        </label>
        {d && (
          <>
            <p class="muted">
              version {d.version.version} · {d.version.step_count} steps
            </p>
            <fieldset>
              <legend>Parameters</legend>
              {(d.version.ir.parameters ?? []).length === 0 && <p class="muted">This workflow takes none.</p>}
              {(d.version.ir.parameters ?? []).map((p) => (
                <label>
                  {p.name}
                  {p.default === undefined || p.default === null ? " (required)" : ""}
                  {p.enum && p.enum.length > 0 ? (
                    <select
                      value={values.value[p.name]}
                      onChange={(e) => (values.value = { ...values.value, [p.name]: (e.target as HTMLSelectElement).value })}
                    >
                      {p.enum.map((v) => (
                        <option value={String(v)}>{String(v)}</option>
                      ))}
                    </select>
                  ) : (
                    <input
                      value={values.value[p.name] ?? ""}
                      required={p.default === undefined || p.default === null}
                      onInput={(e) => (values.value = { ...values.value, [p.name]: (e.target as HTMLInputElement).value })}
                    />
                  )}
                  {p.description && <span class="hint">{p.description}</span>}
                </label>
              ))}
            </fieldset>
            <label>
              Labels
              <input value={labels.value} placeholder="team=nlp,env=dev" onInput={(e) => (labels.value = (e.target as HTMLInputElement).value)} />
            </label>
            <label>
              Priority
              <input type="number" value={priority.value} onInput={(e) => (priority.value = (e.target as HTMLInputElement).value)} />
            </label>
            <p class="forecast" aria-live="polite">
              {f
                ? `Cache forecast: ${f.totals.hits} of ${f.totals.steps} steps will come from the cache` +
                  (f.totals.saved_ms ? `, saving about ${duration(f.totals.saved_ms)} of compute.` : ".")
                : "Cache forecast: —"}
            </p>
            <button type="submit" disabled={busy.value}>
              {busy.value ? "Submitting…" : "Submit run"}
            </button>
            <details>
              <summary>The same request with curl</summary>
              <pre class="mono code">{cli}</pre>
            </details>
          </>
        )}
        <ErrorBox error={error.value} />
      </form>
    </section>
  );
}
