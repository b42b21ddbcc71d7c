import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { get, type Schemas } from "../api/client";
import { ErrorBox } from "../components/error";

type PlanView = Schemas["PlanView"];

/** What the optimizer decided for a run, and why. */
export function PlanTab({ id }: { id: string }) {
  const plan = useSignal<PlanView | null>(null);
  const error = useSignal<unknown>(null);
  useEffect(() => {
    get<PlanView>(`/v1/runs/${encodeURIComponent(id)}/plan`)
      .then((p) => (plan.value = p))
      .catch((e) => (error.value = e));
  }, [id]);
  if (error.value) return <ErrorBox error={error.value} />;
  const p = plan.value;
  if (!p) return <p aria-busy="true">Loading plan…</p>;
  const decisions = new Map<string, typeof p.decisions>();
  for (const d of p.decisions) {
    const list = decisions.get(d.pass) ?? [];
    list.push(d);
    decisions.set(d.pass, list);
  }
  return (
    <div class="plan">
      <h2>Steps</h2>
      <table class="grid">
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Action</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {p.steps.map((s) => (
            <tr>
              <td>{s.name}</td>
              <td>{s.action}</td>
              <td>{s.why ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Optimizer decisions</h2>
      {decisions.size === 0 && <p>None.</p>}
      {[...decisions].map(([pass, list]) => (
        <section>
          <h3>{pass}</h3>
          <ul>
            {list.map((d) => (
              <li>
                {d.step ? <strong>{d.step}: </strong> : null}
                {d.message}
              </li>
            ))}
          </ul>
        </section>
      ))}
      {p.parts && p.parts.length > 0 && (
        <>
          <h2>Split into parts</h2>
          <ol>
            {p.parts.map((part) => (
              <li>{JSON.stringify(part)}</li>
            ))}
          </ol>
        </>
      )}
      {p.advice && p.advice.length > 0 && (
        <>
          <h2>Resource advice</h2>
          <ul>
            {p.advice.map((a) => (
              <li>{JSON.stringify(a)}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
