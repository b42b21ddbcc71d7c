import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { get, post, type Schemas } from "../api/client";
import { ErrorBox } from "../components/error";
import { session } from "../session";
import { duration } from "../status";

type Stats = Schemas["CacheStats"];

/** What the shared cache saved this tenant, and invalidation (editors). */
export function CachePage() {
  const stats = useSignal<Stats | null>(null);
  const error = useSignal<unknown>(null);
  const scope = useSignal<"step" | "image" | "version" | "all">("step");
  const value = useSignal("");
  const workflow = useSignal("");
  const confirm = useSignal(false);
  const result = useSignal<string | null>(null);
  const load = () =>
    get<Stats>("/v1/cache/stats").then(
      (s) => (stats.value = s),
      (e) => (error.value = e),
    );
  useEffect(() => {
    void load();
  }, []);

  async function invalidate() {
    confirm.value = false;
    error.value = null;
    try {
      const body =
        scope.value === "all"
          ? { all: true }
          : scope.value === "step"
            ? { workflow: workflow.value, step: value.value }
            : { [scope.value]: value.value };
      const removed = await post<Schemas["Removed"]>("/v1/cache/invalidate", body);
      result.value = `${removed.removed} entr${removed.removed === 1 ? "y" : "ies"} removed.`;
      void load();
    } catch (e) {
      error.value = e;
    }
  }

  const s = stats.value;
  const hitRate = s && s.hits + s.misses > 0 ? Math.round((100 * s.hits) / (s.hits + s.misses)) : null;
  return (
    <section>
      <h1>Cache</h1>
      <ErrorBox error={error.value} />
      {s?.degraded && (
        <p class="error" role="status">
          The cache index is unavailable: steps run without reuse until it is back.
        </p>
      )}
      {s && (
        <div class="tiles">
          <div class="tile">
            <span class="big">{s.hits.toLocaleString()}</span> hits
          </div>
          <div class="tile">
            <span class="big">{s.misses.toLocaleString()}</span> misses
          </div>
          <div class="tile">
            <span class="big">{hitRate === null ? "—" : `${hitRate}%`}</span> hit rate
          </div>
          <div class="tile">
            <span class="big">{duration(s.compute_ms_saved)}</span> compute saved
          </div>
          <div class="tile">
            <span class="big">{(s.bytes_saved / 1048576).toFixed(1)} MiB</span> not recomputed
          </div>
          <div class="tile">
            <span class="big">{s.entries_produced.toLocaleString()}</span> entries produced
          </div>
        </div>
      )}
      {session.can("editor") && (
        <section>
          <h2>Invalidate</h2>
          <form class="filters" onSubmit={(e) => (e.preventDefault(), (confirm.value = true))}>
            <label>
              What
              <select value={scope.value} onChange={(e) => (scope.value = (e.target as HTMLSelectElement).value as typeof scope.value)}>
                <option value="step">a step of a workflow</option>
                <option value="image">everything an image produced</option>
                <option value="version">a cache version</option>
                <option value="all">all of this tenant's entries</option>
              </select>
            </label>
            {scope.value === "step" && (
              <label>
                Workflow
                <input required value={workflow.value} onInput={(e) => (workflow.value = (e.target as HTMLInputElement).value)} />
              </label>
            )}
            {scope.value !== "all" && (
              <label>
                {scope.value === "step" ? "Step" : scope.value === "image" ? "Image" : "Version"}
                <input required value={value.value} onInput={(e) => (value.value = (e.target as HTMLInputElement).value)} />
              </label>
            )}
            <button type="submit" class="danger">
              Invalidate…
            </button>
          </form>
          {confirm.value && (
            <div class="confirm" role="alertdialog" aria-label="Confirm invalidation">
              <p>Remove these cache entries? Steps that would have reused them run again.</p>
              <button class="danger" onClick={invalidate}>
                Yes, invalidate
              </button>
              <button class="secondary" onClick={() => (confirm.value = false)}>
                No
              </button>
            </div>
          )}
          {result.value && <p role="status">{result.value}</p>}
        </section>
      )}
    </section>
  );
}
