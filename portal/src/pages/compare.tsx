import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { get, type RunView } from "../api/client";
import { Badge } from "../components/badge";
import { ErrorBox } from "../components/error";
import { linkProps, route, setQuery } from "../router";
import { between, duration } from "../status";
import type { Step } from "./run";

type Run = RunView & { steps?: Step[] };

/** Two to four runs side by side: only what differs, unless asked. */
export function Compare() {
  const ids = (route().query.get("runs") ?? "").split(",").map((s) => s.trim()).filter(Boolean).slice(0, 4);
  const all = route().query.get("all") === "1";
  const runs = useSignal<Run[] | null>(null);
  const error = useSignal<unknown>(null);
  const add = useSignal("");

  useEffect(() => {
    runs.value = null;
    Promise.all(ids.map((id) => get<Run>(`/v1/runs/${encodeURIComponent(id)}`)))
      .then((r) => (runs.value = r))
      .catch((e) => (error.value = e));
  }, [ids.join(",")]);

  const form = (
    <form
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        if (add.value.trim()) setQuery({ runs: [...ids, add.value.trim()].join(",") });
        add.value = "";
      }}
    >
      <label>
        Add a run
        <input value={add.value} placeholder="run_…" onInput={(e) => (add.value = (e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" class="secondary" disabled={ids.length >= 4}>
        Add
      </button>
      <label class="check">
        <input type="checkbox" checked={all} onChange={(e) => setQuery({ all: (e.target as HTMLInputElement).checked ? "1" : undefined })} />
        Show everything, not only differences
      </label>
    </form>
  );
  if (error.value) return <ErrorBox error={error.value} />;
  if (ids.length < 2)
    return (
      <section>
        <h1>Compare runs</h1>
        <p>Pick two to four runs.</p>
        {form}
      </section>
    );
  const rs = runs.value;
  if (!rs) return <p aria-busy="true">Loading runs…</p>;

  const params = [...new Set(rs.flatMap((r) => Object.keys(r.parameters)))].sort();
  const differs = (values: (string | undefined)[]) => new Set(values).size > 1;
  const shownParams = params.filter((p) => all || differs(rs.map((r) => r.parameters[p])));
  const stepNames = [...new Set(rs.flatMap((r) => (r.steps ?? []).map((s) => s.name)))];
  const stepOf = (r: Run, name: string) => (r.steps ?? []).find((s) => s.name === name);
  const took = (s?: Step) => (s ? (s.wall_ms ?? between(s.started_at, s.finished_at)) : null);
  const shownSteps = stepNames.filter((n) => all || differs(rs.map((r) => stepOf(r, n)?.status)));
  const sameIr = !differs(rs.map((r) => r.ir_hash));

  // In words: what ran in one run and was reused in another.
  const sentences: string[] = [];
  for (const n of stepNames) {
    const st = rs.map((r) => stepOf(r, n)?.status);
    const ran = rs.filter((_, i) => st[i] === "succeeded" || st[i] === "failed").map((r) => r.id);
    const cached = rs.filter((_, i) => st[i] === "cached").map((r) => r.id);
    if (ran.length && cached.length) sentences.push(`step ${n} ran in ${ran.join(", ")} and came from the cache in ${cached.join(", ")}`);
  }
  return (
    <section>
      <h1>Compare runs</h1>
      {form}
      <p>{sameIr ? "All runs execute the same IR." : "The runs execute different IR (their workflows differ)."}</p>
      {sentences.length > 0 && (
        <ul>
          {sentences.map((s) => (
            <li>{s}.</li>
          ))}
        </ul>
      )}
      <table class="grid">
        <thead>
          <tr>
            <th scope="col"></th>
            {rs.map((r) => (
              <th scope="col">
                <a {...linkProps(`/runs/${r.id}`)}>{r.id}</a>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">Status</th>
            {rs.map((r) => (
              <td>
                <Badge status={r.status} />
              </td>
            ))}
          </tr>
          <tr>
            <th scope="row">Duration</th>
            {rs.map((r) => (
              <td>{duration(between(r.started_at, r.finished_at))}</td>
            ))}
          </tr>
          {shownParams.map((p) => (
            <tr>
              <th scope="row">parameter {p}</th>
              {rs.map((r) => (
                <td class="mono">{r.parameters[p] ?? "—"}</td>
              ))}
            </tr>
          ))}
          {shownParams.length === 0 && (
            <tr>
              <th scope="row">Parameters</th>
              <td colSpan={rs.length}>the same</td>
            </tr>
          )}
          {shownSteps.map((n) => (
            <tr>
              <th scope="row">step {n}</th>
              {rs.map((r) => {
                const s = stepOf(r, n);
                return <td>{s ? <><Badge status={s.status} /> {duration(took(s))}</> : "—"}</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
