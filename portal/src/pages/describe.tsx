import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { get, post, type RunView, type Schemas } from "../api/client";
import { ErrorBox } from "../components/error";
import { diffLines } from "../diff";
import { GraphView } from "../graph/GraphView";
import { navigate } from "../router";
import { duration } from "../status";
import type { GraphData } from "./run";

type Generation = Schemas["GenerationDetail"];
type Explanation = Schemas["Explanation"];
type Workflow = Schemas["Workflow"];

interface StepNote {
  step: string;
  template?: string;
  text?: string;
  kind?: string;
}

/**
 * Describe a workflow in words: the draft's DAG, IR and per-step
 * explanations, warnings and the cache forecast; feedback makes the next
 * draft; then save it as a workflow, or save and run it. Everything the
 * planner or a model wrote is shown as text, never as HTML.
 */
export function Describe() {
  const text = useSignal("");
  const feedback = useSignal("");
  const gen = useSignal<Generation | null>(null);
  const previous = useSignal<Workflow | null>(null);
  const graph = useSignal<GraphData | null>(null);
  const forecast = useSignal<Explanation | null>(null);
  const error = useSignal<unknown>(null);
  const busy = useSignal(false);

  async function show(g: Generation) {
    gen.value = g;
    const ir = g.draft.workflow;
    const [gr, f] = await Promise.all([
      post<GraphData>("/v1/graph", { ir }),
      post<Explanation>("/v1/cache/explain", { ir }).catch(() => null),
    ]);
    graph.value = gr;
    forecast.value = f;
  }

  async function run(action: () => Promise<void>) {
    busy.value = true;
    error.value = null;
    try {
      await action();
    } catch (e) {
      error.value = e;
    } finally {
      busy.value = false;
    }
  }

  const draft = gen.value?.draft;
  const ir = draft ? JSON.stringify(draft.workflow, null, 2) : "";
  return (
    <section>
      <h1>Describe a workflow</h1>
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            previous.value = null;
            await show(await post<Generation>("/v1/generations", { description: text.value }));
          });
        }}
      >
        <label>
          What should it do? (English or Chinese)
          <textarea
            rows={5}
            required
            value={text.value}
            placeholder="Load the reviews, clean them, then train an LSTM and a GRU in parallel and keep the better model."
            onInput={(e) => (text.value = (e.target as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit" disabled={busy.value}>
          {busy.value && !draft ? "Drafting…" : "Draft it"}
        </button>
      </form>
      <ErrorBox error={error.value} />
      {draft && gen.value && (
        <div class="draft">
          <h2>
            Draft {draft.n} · <span class="mono">{draft.workflow.name}</span>
          </h2>
          <p class="muted">
            by {draft.author.kind === "llm" ? `a language model (${draft.author.model ?? "?"})` : "the offline planner"}
            {draft.author.reason ? ` — ${draft.author.reason}` : ""}
            {draft.score != null ? ` · score ${draft.score.toFixed(2)}` : ""} · {draft.usage.total_tokens} tokens
          </p>
          {(draft.warnings as { message?: string }[]).length > 0 && (
            <ul class="warnings">
              {(draft.warnings as { message?: string; code?: string }[]).map((w) => (
                <li>{w.message ?? JSON.stringify(w)}</li>
              ))}
            </ul>
          )}
          {forecast.value && (
            <p class="forecast">
              Cache forecast: {forecast.value.totals.hits} of {forecast.value.totals.steps} steps cached
              {forecast.value.totals.saved_ms ? `, saving about ${duration(forecast.value.totals.saved_ms)}` : ""}.
            </p>
          )}
          {graph.value && (
            <GraphView
              nodes={graph.value.nodes}
              edges={graph.value.edges}
              shapeKey={graph.value.ir_hash}
              status={() => "pending"}
              note={() => null}
              version={0}
              selected={null}
              onSelect={() => {}}
              highlight={new Set()}
              summary={`Draft with ${graph.value.nodes.length} steps`}
            />
          )}
          <h3>Steps</h3>
          <table class="grid">
            <thead>
              <tr>
                <th scope="col">Step</th>
                <th scope="col">From the words</th>
                <th scope="col">Template</th>
              </tr>
            </thead>
            <tbody>
              {(draft.explanations as unknown as StepNote[]).map((x) => (
                <tr>
                  <td>{x.step}</td>
                  <td>{x.text ?? ""}</td>
                  <td>{x.template ?? x.kind ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {previous.value ? (
            <>
              <h3>Changes from the previous draft</h3>
              <pre class="mono diff">
                {diffLines(JSON.stringify(previous.value, null, 2), ir).map((l) => (
                  <div class={`d-${l.kind}`}>
                    {l.kind === "add" ? "+ " : l.kind === "del" ? "- " : "  "}
                    {l.text}
                  </div>
                ))}
              </pre>
            </>
          ) : (
            <details>
              <summary>IR</summary>
              <pre class="mono code">{ir}</pre>
            </details>
          )}
          <form
            class="form"
            onSubmit={(e) => {
              e.preventDefault();
              const g = gen.value!;
              void run(async () => {
                previous.value = g.draft.workflow;
                await show(await post<Generation>(`/v1/generations/${g.id}/feedback`, { text: feedback.value }));
                feedback.value = "";
              });
            }}
          >
            <label>
              Feedback for the next draft
              <input
                value={feedback.value}
                required
                placeholder="also evaluate on the test set before deploying"
                onInput={(e) => (feedback.value = (e.target as HTMLInputElement).value)}
              />
            </label>
            <div class="actions">
              <button type="submit" class="secondary" disabled={busy.value}>
                Revise
              </button>
              <button
                type="button"
                disabled={busy.value}
                onClick={() =>
                  run(async () => {
                    const saved = await post<Schemas["WorkflowDetail"]>("/v1/workflows", draft.workflow);
                    navigate(`/workflows/${saved.name}`);
                  })
                }
              >
                Save as workflow
              </button>
              <button
                type="button"
                disabled={busy.value}
                onClick={() =>
                  run(async () => {
                    const saved = await post<Schemas["WorkflowDetail"]>("/v1/workflows", draft.workflow);
                    const r = await post<RunView>("/v1/runs", { workflow: saved.name, version: saved.version.version });
                    navigate(`/runs/${r.id}`);
                  })
                }
              >
                Save and run
              </button>
            </div>
          </form>
        </div>
      )}
      <Budget />
    </section>
  );
}

/** The tenant's language-model use this month against its budget. */
function Budget() {
  const usage = useSignal<Schemas["LlmUsageView"] | null>(null);
  useEffect(() => {
    get<Schemas["LlmUsageView"]>("/v1/llm-usage").then(
      (u) => (usage.value = u),
      () => {},
    );
  }, []);
  const u = usage.value;
  if (!u) return null;
  const used = u.prompt_tokens + u.completion_tokens;
  return (
    <p class="muted">
      Language-model use in {u.month}: {used.toLocaleString()} tokens in {u.requests} requests
      {u.monthly_budget != null ? ` of a budget of ${u.monthly_budget.toLocaleString()}` : ""}.
    </p>
  );
}
