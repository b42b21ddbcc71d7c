import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { call, get, query, type Schemas } from "../api/client";
import { ErrorBox } from "../components/error";
import { diffLines } from "../diff";
import { linkProps, route, setQuery } from "../router";
import { session } from "../session";
import { when } from "../status";

type Summary = Schemas["WorkflowSummary"];
type Detail = Schemas["WorkflowDetail"];
type Version = Schemas["VersionSummary"];

/** Stored workflows, newest first, by name or label. */
export function Workflows() {
  const q = route().query;
  const name = q.get("name") ?? "";
  const label = q.get("label") ?? "";
  const items = useSignal<Summary[] | null>(null);
  const next = useSignal<string | null>(null);
  const error = useSignal<unknown>(null);
  const load = async (cursor?: string) => {
    try {
      const page = await get<Schemas["List_WorkflowSummary"]>("/v1/workflows" + query({ name, label, cursor, limit: 50 }));
      items.value = cursor ? [...(items.value ?? []), ...page.items] : page.items;
      next.value = page.next_cursor ?? null;
    } catch (e) {
      error.value = e;
    }
  };
  useEffect(() => {
    items.value = null;
    void load();
  }, [name, label]);
  return (
    <section>
      <h1>Workflows</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter workflows">
        <label>
          Name
          <input value={name} onChange={(e) => setQuery({ name: (e.target as HTMLInputElement).value || undefined })} />
        </label>
        <label>
          Labels
          <input
            value={label}
            placeholder="team=nlp"
            onChange={(e) => setQuery({ label: (e.target as HTMLInputElement).value || undefined })}
          />
        </label>
      </form>
      <ErrorBox error={error.value} />
      {items.value === null ? (
        <p aria-busy="true">Loading…</p>
      ) : items.value.length === 0 ? (
        <p>No workflows yet. Submit one, or describe one in words.</p>
      ) : (
        <table class="grid">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Latest version</th>
              <th scope="col">Labels</th>
              <th scope="col">Updated</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {items.value.map((w) => (
              <tr>
                <td>
                  <a {...linkProps(`/workflows/${w.name}`)}>{w.name}</a>
                </td>
                <td>v{w.latest_version}</td>
                <td>
                  {Object.entries(w.labels)
                    .map(([k, v]) => `${k}=${v}`)
                    .join(", ")}
                </td>
                <td>{when(w.updated_at)}</td>
                <td>{w.description ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next.value && (
        <button class="secondary" onClick={() => load(next.value ?? undefined)}>
          Load more
        </button>
      )}
    </section>
  );
}

const ENGINES = ["argo", "tekton", "airflow", "kfp"];

/** One workflow: versions, the IR, a diff between versions, manifests. */
export function WorkflowPage({ name }: { name: string }) {
  const q = route().query;
  const version = q.get("version") ?? "";
  const against = q.get("against") ?? "";
  const engine = q.get("engine") ?? "";
  const detail = useSignal<Detail | null>(null);
  const versions = useSignal<Version[]>([]);
  const other = useSignal<Detail | null>(null);
  const manifest = useSignal<string | null>(null);
  const error = useSignal<unknown>(null);
  const base = `/v1/workflows/${encodeURIComponent(name)}`;

  useEffect(() => {
    Promise.all([get<Detail>(base + query({ version })), get<Version[]>(`${base}/versions`)])
      .then(([d, v]) => {
        detail.value = d;
        versions.value = v;
      })
      .catch((e) => (error.value = e));
  }, [name, version]);
  useEffect(() => {
    other.value = null;
    if (against) get<Detail>(base + query({ version: against })).then((d) => (other.value = d), (e) => (error.value = e));
  }, [name, against]);
  useEffect(() => {
    manifest.value = null;
    if (engine)
      call<string>("GET", `${base}/compile` + query({ engine, version }), { text: true }).then(
        (t) => (manifest.value = t),
        (e) => (error.value = e),
      );
  }, [name, version, engine]);

  const d = detail.value;
  if (error.value) return <ErrorBox error={error.value} />;
  if (!d) return <p aria-busy="true">Loading…</p>;
  const ir = JSON.stringify(d.version.ir, null, 2);
  return (
    <section>
      <h1>
        {d.name} <span class="muted">v{d.version.version}</span>
      </h1>
      {d.description && <p>{d.description}</p>}
      <div class="actions">
        {session.can("editor") && (
          <a class="button" {...linkProps(`/submit?workflow=${encodeURIComponent(d.name)}&version=${d.version.version}`)}>
            Run this version
          </a>
        )}
        <a class="button secondary" {...linkProps(`/runs?workflow=${encodeURIComponent(d.name)}`)}>
          Its runs
        </a>
      </div>
      <div class="filters">
        <label>
          Version
          <select value={String(d.version.version)} onChange={(e) => setQuery({ version: (e.target as HTMLSelectElement).value })}>
            {versions.value.map((v) => (
              <option value={String(v.version)}>
                v{v.version} · {v.hash.slice(0, 12)} · {when(v.created_at)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Compare with
          <select value={against} onChange={(e) => setQuery({ against: (e.target as HTMLSelectElement).value || undefined })}>
            <option value="">—</option>
            {versions.value
              .filter((v) => v.version !== d.version.version)
              .map((v) => (
                <option value={String(v.version)}>v{v.version}</option>
              ))}
          </select>
        </label>
        <label>
          Engine manifest
          <select value={engine} onChange={(e) => setQuery({ engine: (e.target as HTMLSelectElement).value || undefined })}>
            <option value="">—</option>
            {ENGINES.map((e) => (
              <option value={e}>{e}</option>
            ))}
          </select>
        </label>
      </div>
      {other.value ? (
        <>
          <h2>
            v{other.value.version.version} → v{d.version.version}
          </h2>
          <pre class="mono diff">
            {diffLines(JSON.stringify(other.value.version.ir, null, 2), ir).map((l) => (
              <div class={`d-${l.kind}`}>
                {l.kind === "add" ? "+ " : l.kind === "del" ? "- " : "  "}
                {l.text}
              </div>
            ))}
          </pre>
        </>
      ) : engine ? (
        <>
          <h2>What Couler submits to {engine}</h2>
          {manifest.value === null ? <p aria-busy="true">Compiling…</p> : <pre class="mono code">{manifest.value}</pre>}
        </>
      ) : (
        <>
          <h2>IR ({d.version.step_count} steps)</h2>
          <pre class="mono code">{ir}</pre>
        </>
      )}
    </section>
  );
}
