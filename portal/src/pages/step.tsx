import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import type { RunView } from "../api/client";
import { Badge } from "../components/badge";
import { linkProps } from "../router";
import { between, cacheWords, duration, when } from "../status";
import { LogView } from "./logs";
import type { Step } from "./run";

/** A step's details, outputs and logs, beside the graph. */
export function StepDrawer({
  run,
  step,
  instances,
  onSelect,
  onClose,
}: {
  run: RunView;
  step: Step;
  /** A fan-out's instances (`step[0]`, `step[1]`, …), in index order. */
  instances: Step[];
  onSelect: (name: string) => void;
  onClose: () => void;
}) {
  const attempt = useSignal(step.attempt || 1);
  useEffect(() => {
    attempt.value = step.attempt || 1;
  }, [step.name, step.attempt]);
  const outputs = step.outputs as { result?: string; parameters?: Record<string, string>; artifacts?: Record<string, { digest: string; size: number }> };
  const attempts = Array.from({ length: Math.max(step.attempt, 1) }, (_, i) => i + 1);
  return (
    <aside class="drawer" aria-label={`Step ${step.name}`}>
      <header>
        <h2>
          <Badge status={step.status} /> {step.name}
        </h2>
        <button class="link" onClick={onClose} aria-label="Close step details">
          Close
        </button>
      </header>
      <dl class="facts">
        <dt>Attempt</dt>
        <dd>{step.attempt || "—"}</dd>
        <dt>Started</dt>
        <dd>{when(step.started_at)}</dd>
        <dt>Duration</dt>
        <dd>{step.wall_ms != null ? duration(step.wall_ms) : duration(between(step.started_at, step.finished_at))}</dd>
        {step.cpu_ms != null && (
          <>
            <dt>CPU</dt>
            <dd>{duration(step.cpu_ms)}</dd>
          </>
        )}
        {step.max_rss_kb != null && (
          <>
            <dt>Peak memory</dt>
            <dd>{(step.max_rss_kb / 1024).toFixed(1)} MiB</dd>
          </>
        )}
        {step.exit_code != null && (
          <>
            <dt>Exit code</dt>
            <dd>{step.exit_code}</dd>
          </>
        )}
        {step.engine_ref && (
          <>
            <dt>On the engine</dt>
            <dd class="mono">{step.engine_ref}</dd>
          </>
        )}
        {step.cache && (
          <>
            <dt>Cache</dt>
            <dd>
              {cacheWords(step.cache.status)}
              {step.cache.saved_ms ? `, saved ${duration(step.cache.saved_ms)}` : ""}
              {step.cache.reason ? ` — ${step.cache.reason}` : ""}
              {step.cache.producer_run && (
                <>
                  {" "}
                  (computed by run <a {...linkProps(`/runs/${step.cache.producer_run}`)}>{step.cache.producer_run}</a>)
                </>
              )}
            </dd>
          </>
        )}
      </dl>
      {step.message && <p class="message">{step.message}</p>}
      {(outputs.result !== undefined || outputs.parameters || outputs.artifacts) && (
        <section>
          <h3>Outputs</h3>
          {outputs.result !== undefined && <Result text={outputs.result} />}
          <dl class="facts">
            {Object.entries(outputs.parameters ?? {}).map(([k, v]) => (
              <>
                <dt>{k}</dt>
                <dd class="mono">{v}</dd>
              </>
            ))}
            {Object.entries(outputs.artifacts ?? {}).map(([k, a]) => (
              <>
                <dt>{k}</dt>
                <dd class="mono">
                  {a.digest.slice(0, 16)}… ({a.size.toLocaleString()} bytes)
                </dd>
              </>
            ))}
          </dl>
        </section>
      )}
      {instances.length > 0 && (
        <section>
          <h3>Instances ({instances.length.toLocaleString()})</h3>
          <ul class="instances">
            {instances.slice(0, 500).map((i) => (
              <li>
                <button class="link" onClick={() => onSelect(i.name)}>
                  {i.name}
                </button>{" "}
                <Badge status={i.status} />{" "}
                <span class="muted">{i.wall_ms != null ? duration(i.wall_ms) : ""}</span>
              </li>
            ))}
          </ul>
          {instances.length > 500 && <p class="muted">The first 500; the steps table lists them all.</p>}
        </section>
      )}
      <section>
        <h3>Logs</h3>
        {attempts.length > 1 && (
          <label>
            Attempt
            <select value={attempt.value} onChange={(e) => (attempt.value = Number((e.target as HTMLSelectElement).value))}>
              {attempts.map((a) => (
                <option value={a}>{a}</option>
              ))}
            </select>
          </label>
        )}
        {instances.length > 0 ? (
          <p class="muted">A fan-out has no log of its own: each instance above has its own.</p>
        ) : (
          <LogView run={run.id} step={step.name} attempt={attempt.value} running={step.status === "running"} />
        )}
      </section>
    </aside>
  );
}

/** Shown at first: more of a long result waits for a click (laying out
 * 256 KiB of text in a `<pre>` takes a fifth of a second). */
const RESULT_PREVIEW = 4096;

/** A step's `result` output, long ones cut to their start until asked. */
function Result({ text }: { text: string }) {
  const all = useSignal(false);
  const long = text.length > RESULT_PREVIEW;
  return (
    <>
      <pre class="mono output">{long && !all.value ? `${text.slice(0, RESULT_PREVIEW)}…` : text}</pre>
      {long && !all.value && (
        <button class="link" onClick={() => (all.value = true)}>
          Show all {text.length.toLocaleString()} characters
        </button>
      )}
    </>
  );
}
