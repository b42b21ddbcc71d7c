//! Compiling plans for Tekton Pipelines (`tekton.dev/v1`): a `Pipeline`
//! whose tasks embed their `taskSpec`, and a `PipelineRun` that runs it.
//!
//! | IR | Tekton |
//! |---|---|
//! | step (container / script) | pipeline task with one step in an embedded `taskSpec`; a script runs through a `#!` line for its interpreter |
//! | workflow parameters | `Pipeline.spec.params`, values in `PipelineRun.spec.params` (the plan already put the values into step text) |
//! | `{{steps.S.outputs.parameters.P}}` | task param `step_S_P` = `$(tasks.S.results.P)`, read as `$(params.step_S_P)` |
//! | `{{steps.S.outputs.result}}` | the same, from result `result`, which a wrapper fills with S's trimmed stdout (only when read) |
//! | output parameters | task `results`, copied from the declared file by the wrapper (default if absent) |
//! | artifacts | workspace `artifacts` (a per-run `volumeClaimTemplate`), copied to/from `<step>/<artifact>` by the wrapper |
//! | `depends`, groups, implied edges | `runAfter`, minus edges Tekton already infers from result references |
//! | `when` eq/ne/in/notin | `when` `in`/`notin`; lt/le/gt/ge → `cel:` (feature flag `enable-cel-in-whenexpression`) |
//! | `map.items` | `matrix.params` `item` (`matrix.include` when `{{item.FIELD}}` is read) |
//! | `map.from` | `matrix` over `$(tasks.S.results.R[*])`: a mapped step's gathered results, or an array result `R-items` the wrapper derives from S's JSON list |
//! | `retry.limit` / `backoff` | `retries`; a first step sleeping per `$(context.task.retry-count)` |
//! | `timeout` | pipeline task `timeout` |
//! | workflow `timeout` | `timeouts.tasks` (running tasks time out, nothing new starts, `finally` tasks still run, as Argo runs `onExit`); the run as a whole has none (`timeouts.pipeline: 0s`); the scheduler enforces it too |
//! | `onExit`, `{{workflow.status}}` | `finally` tasks (a chain of exit handlers: one task, one step each), `$(tasks.status)` |
//! | resources / hints | step `computeResources` / `taskRunSpecs[].podTemplate` |
//! | reused (cached) steps | no task; their outputs become literals |
//!
//! The wrapper (see [`script`]) needs `/bin/sh` in the step's image. Feature
//! flags a manifest needs beyond a default install are listed in the
//! annotation [`FEATURE_FLAGS`].
//!
//! Refused with [`EngineError::Unsupported`]: `depends` entries with
//! outcomes or `||`/`!` (a task runs only after its `runAfter` succeeded),
//! training jobs, `tune`,
//! `while`, `retry.on: transient`, concurrency limits that
//! could bind (`parallelism`, `map.parallelism`), exit handlers ordered
//! other than as one chain, reading a mapped step's outputs as one value,
//! and artifacts of reused or mapped steps fed to other steps.

pub mod adapter;
mod finally;
mod model;
mod names;
mod script;
mod task;
mod text;

pub use adapter::{TektonAdapter, TektonConfig};

use crate::compile::{Manifest, ManifestFile};
use crate::{EngineError, RunSpec};
use couler_ir::Graph;
use couler_optimizer::{Action, Plan, StepOutputs};
use model::*;
use names::{label_value, object_name};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use text::{ARTIFACTS, Output, Problems};

const ENGINE: &str = "tekton";
/// Where tasks read reused artifacts from: nowhere, as tasks read
/// artifacts from the run's workspace only.
pub const READS: &[&str] = &[];
/// Size of the per-run volume that carries artifacts between tasks.
const ARTIFACT_VOLUME: &str = "1Gi";
/// Where the compiler lists the Tekton feature flags a manifest needs.
pub const FEATURE_FLAGS: &str = "couler.dev/tekton-feature-flags";

/// What every task compiler reads about the plan.
pub(crate) struct Ctx<'p> {
    plan: &'p Plan,
    /// Step name → plan index (main steps, then exit handlers).
    index: HashMap<&'p str, usize>,
    mapped: Vec<bool>,
    /// The result that holds a step's standard output, for steps whose
    /// output a running step reads.
    stdout: Vec<Option<String>>,
    /// Results a `map.from` fans out over, with the array result that
    /// carries them as a list: (result, array result) per step.
    items: Vec<Vec<(String, String)>>,
    groups: HashMap<&'p str, &'p str>,
    /// Steps that may be skipped and have tasks below them: they publish
    /// [`task::RAN_RESULT`], which those tasks' `when` reads.
    ran: Vec<bool>,
}

impl<'p> Ctx<'p> {
    fn new(plan: &'p Plan) -> Self {
        let n = plan.steps.len();
        let steps = (0..n).map(|i| plan.ir_step(i));
        let index = steps
            .clone()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect::<HashMap<_, _>>();
        let mapped = steps.clone().map(|s| s.map.is_some()).collect();
        let mut read_stdout = vec![false; n];
        for (i, step) in steps.enumerate() {
            if !matches!(plan.steps[i].action, Action::Run) {
                continue;
            }
            for s in text::texts(step) {
                for r in couler_ir::refs::references(s).flatten() {
                    if let couler_ir::refs::Ref::StepResult(source) = r
                        && let Some(&j) = index.get(source)
                    {
                        read_stdout[j] = true;
                    }
                }
            }
        }
        let stdout = read_stdout
            .iter()
            .enumerate()
            .map(|(i, &read)| {
                let step = plan.ir_step(i);
                (read && matches!(plan.steps[i].action, Action::Run))
                    .then(|| {
                        ["result", "stdout", "couler-stdout"]
                            .into_iter()
                            .find(|name| step.output_parameter(name).is_none())
                    })
                    .flatten()
                    .map(str::to_owned)
            })
            .collect();
        let groups = plan
            .workflow
            .groups
            .iter()
            .flat_map(|g| g.steps.iter().map(|s| (s.as_str(), g.name.as_str())))
            .collect();
        let mut ctx = Ctx {
            plan,
            index,
            mapped,
            stdout,
            items: vec![Vec::new(); n],
            groups,
            ran: vec![false; n],
        };
        ctx.items = ctx.fanned_out_results();
        ctx
    }

    /// For each step, the results that a `map.from` of another running
    /// step reads while the step itself is neither mapped nor reused.
    fn fanned_out_results(&self) -> Vec<Vec<(String, String)>> {
        use couler_ir::refs::{Ref, sole_reference};
        let mut out: Vec<Vec<(String, String)>> = vec![Vec::new(); self.plan.steps.len()];
        for (i, planned) in self.plan.steps.iter().enumerate() {
            let from = self
                .plan
                .ir_step(i)
                .map
                .as_ref()
                .and_then(|m| m.from.as_deref());
            let (source, output) = match from.and_then(sole_reference) {
                Some(Ok(Ref::StepResult(s))) => (s, Output::Result),
                Some(Ok(Ref::StepParameter(s, p))) => (s, Output::Parameter(p)),
                _ => continue,
            };
            let Some(&j) = self.index.get(source) else {
                continue;
            };
            if !matches!(planned.action, Action::Run) || self.reused(j).is_some() || self.mapped[j]
            {
                continue;
            }
            let Some(result) = self.result_name(j, output) else {
                continue;
            };
            if out[j].iter().any(|(r, _)| *r == result) {
                continue;
            }
            let step = self.plan.ir_step(j);
            let taken = |name: &str| {
                step.output_parameter(name).is_some()
                    || self.stdout[j].as_deref() == Some(name)
                    || out[j].iter().any(|(_, a)| a == name)
            };
            let mut array = format!("{result}-items");
            let mut n = 1;
            while taken(&array) {
                n += 1;
                array = format!("{result}-items-{n}");
            }
            out[j].push((result, array));
        }
        out
    }

    /// The array result holding `output` of step `index` as a list.
    fn items_result(&self, index: usize, output: Output<'_>) -> Option<&str> {
        let result = self.result_name(index, output)?;
        self.items[index]
            .iter()
            .find(|(r, _)| *r == result)
            .map(|(_, a)| a.as_str())
    }

    /// The recorded outputs of a step that does not run.
    fn reused(&self, index: usize) -> Option<&'p StepOutputs> {
        match &self.plan.steps[index].action {
            Action::Run => None,
            Action::Reuse { outputs, .. } => Some(outputs),
        }
    }

    /// The Tekton result that holds an output of a running step.
    fn result_name(&self, index: usize, output: Output<'_>) -> Option<String> {
        match output {
            Output::Result => self.stdout[index].clone(),
            Output::Parameter(p) => is_result_name(p).then(|| p.to_owned()),
        }
    }

    /// Where a step's output artifact sits in the workspace; `None` for a
    /// mapped step, whose instances each keep a copy.
    fn artifact_dir(&self, index: usize, artifact: &str) -> Option<String> {
        (!self.mapped[index]).then(|| format!("{}/{artifact}", self.plan.ir_step(index).name))
    }

    fn group_of(&self, step: &str) -> Option<&'p str> {
        self.groups.get(step).copied()
    }
}

/// Tekton result names: `[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]` or one character.
fn is_result_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

pub fn compile(plan: &Plan, run: &RunSpec) -> Result<Manifest, EngineError> {
    let (pipeline, pipeline_run) = objects(plan, run)?;
    // Sized up front (under 2 kB a task): a big pipeline would otherwise
    // be copied many times, into freshly zeroed pages each time.
    let tasks = pipeline.spec.tasks.len() + pipeline.spec.finally.len();
    let runs = pipeline_run.spec.task_run_specs.len();
    Ok(Manifest {
        files: vec![
            yaml_file("pipeline.yaml", &pipeline, 1024 + 2048 * tasks)?,
            yaml_file("pipelinerun.yaml", &pipeline_run, 1024 + 256 * runs)?,
        ],
    })
}

type Pipeline = Object<PipelineSpec>;
type PipelineRun = Object<PipelineRunSpec>;

fn objects(plan: &Plan, run: &RunSpec) -> Result<(Pipeline, PipelineRun), EngineError> {
    let dag = crate::compile::dag(plan)?;
    crate::compile::plain_depends_only(
        plan,
        &dag,
        ENGINE,
        "a Tekton pipeline task runs only after the tasks in its `runAfter` succeeded (task outcomes are readable only in `finally` tasks)",
    )?;
    let mut ctx = Ctx::new(plan);
    let wf = &plan.workflow;
    let main = wf.steps.len();
    let mut problems = Problems::default();
    let mut workflow_problems = Vec::new();

    let mut flags = BTreeSet::new();
    let mut tasks = Vec::with_capacity(main);
    let mut exits = Vec::with_capacity(wf.on_exit.len());
    let mut task_run_specs = Vec::new();
    let mut width = Some(0usize);
    let mut uses_workspace = false;
    let waits = waits_for(plan, &dag.steps, 0);
    let may_skip = may_skip(plan, &dag.steps, &waits);
    for (c, ups) in waits.iter().enumerate() {
        if matches!(plan.steps[c].action, Action::Run) {
            for &u in ups {
                ctx.ran[u as usize] |= may_skip[u as usize] && !ctx.mapped[u as usize];
            }
        }
    }
    for (i, planned) in plan.steps.iter().enumerate() {
        if !matches!(planned.action, Action::Run) {
            continue;
        }
        let mut compiled = task::compile(&ctx, i, &mut problems);
        flags.append(&mut compiled.flags);
        uses_workspace |= !compiled.task.workspaces.is_empty();
        let pod = plan.ir_step(i).hints.as_ref().and_then(|h| {
            (!h.node_selector.is_empty() || !h.tolerations.is_empty()).then(|| PodTemplate {
                node_selector: h.node_selector.clone(),
                tolerations: h.tolerations.clone(),
            })
        });
        if i >= main {
            exits.push(finally::Exit {
                index: i,
                compiled,
                pod,
            });
            continue;
        }
        width = width.zip(compiled.width).map(|(a, b)| a + b);
        compiled.task.run_after = waits[i]
            .iter()
            .filter(|u| !compiled.reads.contains(&(**u as usize)))
            .map(|&u| wf.steps[u as usize].name.clone())
            .collect();
        if let Some(pod) = pod {
            task_run_specs.push(PipelineTaskRunSpec {
                pipeline_task_name: compiled.task.name.clone(),
                pod_template: pod,
            });
        }
        tasks.push((i, compiled.task));
    }
    let tasks = guard_below(tasks, &dag.steps, &waits, &may_skip, &ctx);
    let (finally, mut finally_specs, finally_width) =
        finally::tasks(&ctx, &dag.on_exit, exits, &mut problems);
    task_run_specs.append(&mut finally_specs);
    if let Some(limit) = wf.parallelism {
        let most = width.zip(finally_width).map(|(a, b)| a.max(b));
        if most.is_none_or(|m| m > limit as usize) {
            workflow_problems.push(format!(
                "`parallelism: {limit}`: Tekton cannot limit how many tasks of a run execute at once, and this plan has {} (counting matrix instances)",
                most.map_or("a matrix over results of unknown size".to_owned(), |m| format!("{m} tasks"))
            ));
        }
    }
    workflow_problems.append(&mut problems.unsupported);
    if !workflow_problems.is_empty() {
        return Err(EngineError::Unsupported {
            engine: ENGINE,
            feature: workflow_problems.join("; "),
        });
    }
    if !problems.invalid.is_empty() {
        return Err(EngineError::Other(format!(
            "cannot compile the plan for Tekton: {}",
            problems.invalid.join("; ")
        )));
    }
    if tasks.is_empty() {
        return Err(EngineError::Other(
            "every step of the plan is reused from the cache or an earlier attempt: there is nothing for a Tekton pipeline to run".into(),
        ));
    }

    let names = Names::new(plan, run);
    let mut annotations = BTreeMap::new();
    if !flags.is_empty() {
        let list: Vec<&str> = flags.into_iter().collect();
        annotations.insert(FEATURE_FLAGS.to_owned(), list.join(","));
    }
    let pipeline = Object {
        api_version: API_VERSION,
        kind: "Pipeline",
        metadata: ObjectMeta {
            name: names.name.clone(),
            labels: names.labels.clone(),
            annotations: annotations.clone(),
        },
        spec: PipelineSpec {
            description: wf.description.clone(),
            params: wf
                .parameters
                .iter()
                .map(|p| ParamSpec {
                    name: p.name.clone(),
                    kind: "string",
                    description: p.description.clone(),
                    default: p.default.as_ref().map(|d| d.as_str().to_owned()),
                })
                .collect(),
            workspaces: if uses_workspace {
                vec![Named {
                    name: ARTIFACTS.into(),
                }]
            } else {
                Vec::new()
            },
            tasks,
            finally,
        },
    };
    let pipeline_run = Object {
        api_version: API_VERSION,
        kind: "PipelineRun",
        metadata: ObjectMeta {
            name: names.name.clone(),
            labels: names.labels,
            annotations,
        },
        spec: PipelineRunSpec {
            pipeline_ref: Named { name: names.name },
            params: wf
                .parameters
                .iter()
                .filter_map(|p| {
                    plan.parameters.get(&p.name).map(|v| Param {
                        name: p.name.clone(),
                        value: ParamValue::String(v.clone()),
                    })
                })
                .collect(),
            timeouts: TimeoutFields {
                pipeline: "0s".into(),
                tasks: wf.timeout.map(|t| names::go_duration(t.as_std())),
            },
            workspaces: if uses_workspace {
                vec![WorkspaceBinding {
                    name: ARTIFACTS.into(),
                    volume_claim_template: VolumeClaimTemplate {
                        spec: ClaimSpec {
                            access_modes: vec!["ReadWriteOnce"],
                            resources: ClaimResources {
                                requests: BTreeMap::from([("storage", ARTIFACT_VOLUME.into())]),
                            },
                        },
                    },
                }]
            } else {
                Vec::new()
            },
            task_run_specs,
        },
    };
    Ok((pipeline, pipeline_run))
}

/// For each node of `graph` (plan indexes from `offset`), the running
/// nodes it must wait for: its upstream nodes, looking through reused ones
/// (which do not run) to what they waited for.
/// Main steps that may be skipped: those with a `when`, and those below
/// one.
fn may_skip(plan: &Plan, graph: &Graph, waits: &[Vec<u32>]) -> Vec<bool> {
    let mut may = vec![false; graph.len()];
    for &node in graph.order() {
        let n = node as usize;
        may[n] = matches!(plan.steps[n].action, Action::Run)
            && (!plan.ir_step(n).when.is_empty() || waits[n].iter().any(|&u| may[u as usize]));
    }
    may
}

/// Couler skips the steps below a skipped step, where Tekton's `when`
/// guards its own task only. A task below one that may be skipped also
/// requires that task's [`task::RAN_RESULT`]: a skipped task has no
/// results, so Tekton skips the task too ("Results were missing"), and so
/// on down. A matrix task's results are arrays, so below one the matrix
/// task's own `when` expressions are repeated instead.
fn guard_below(
    tasks: Vec<(usize, PipelineTask)>,
    graph: &Graph,
    waits: &[Vec<u32>],
    may_skip: &[bool],
    ctx: &Ctx<'_>,
) -> Vec<PipelineTask> {
    let mut by_step: Vec<Option<PipelineTask>> = (0..graph.len()).map(|_| None).collect();
    let order: Vec<usize> = tasks.iter().map(|(i, _)| *i).collect();
    for (i, task) in tasks {
        by_step[i] = Some(task);
    }
    for &node in graph.order() {
        let node = node as usize;
        let mut guards: Vec<WhenExpression> = Vec::new();
        for &u in &waits[node] {
            let u = u as usize;
            if !may_skip[u] {
                continue;
            }
            if ctx.mapped[u] {
                guards.extend(by_step[u].iter().flat_map(|t| t.when.iter().cloned()));
            } else {
                guards.push(WhenExpression {
                    input: Some(format!(
                        "$(tasks.{}.results.{})",
                        ctx.plan.ir_step(u).name,
                        task::RAN_RESULT
                    )),
                    operator: Some("in"),
                    values: vec!["true".into()],
                    cel: None,
                });
            }
        }
        if let Some(task) = &mut by_step[node] {
            for w in guards {
                if !task.when.contains(&w) {
                    task.when.push(w);
                }
            }
        }
    }
    order
        .into_iter()
        .filter_map(|i| by_step[i].take())
        .collect()
}

fn waits_for(plan: &Plan, graph: &Graph, offset: usize) -> Vec<Vec<u32>> {
    let mut through: Vec<Vec<u32>> = vec![Vec::new(); graph.len()];
    let mut waits: Vec<Vec<u32>> = vec![Vec::new(); graph.len()];
    for &node in graph.order() {
        let mut set = BTreeSet::new();
        for &u in graph.upstream(node) {
            set.extend(through[u as usize].iter().copied());
        }
        let set: Vec<u32> = set.into_iter().collect();
        let runs = matches!(plan.steps[offset + node as usize].action, Action::Run);
        through[node as usize] = if runs { vec![node] } else { set.clone() };
        waits[node as usize] = set;
    }
    waits
}

/// Object names and labels for one run.
struct Names {
    /// The Pipeline's and the PipelineRun's (one of each per attempt).
    name: String,
    labels: BTreeMap<String, String>,
}

impl Names {
    fn new(plan: &Plan, run: &RunSpec) -> Names {
        let wf = &plan.workflow;
        // One Pipeline per attempt: a retry's plan differs (reused steps).
        let attempt = format!("a{}", run.attempt);
        let mut parts = vec![wf.name.as_str(), run.run.as_str()];
        if let Some(stage) = &run.stage {
            parts.push(stage);
        }
        parts.push(&attempt);
        let name = object_name(&parts);
        let mut labels = wf.labels.clone();
        labels.insert("couler.dev/tenant".into(), label_value(&run.tenant));
        labels.insert("couler.dev/run".into(), label_value(&run.run));
        labels.insert("couler.dev/workflow".into(), label_value(&wf.name));
        labels.insert("couler.dev/attempt".into(), run.attempt.to_string());
        if let Some(stage) = &run.stage {
            labels.insert("couler.dev/stage".into(), label_value(stage));
        }
        Names { name, labels }
    }
}

fn yaml_file<T: serde::Serialize>(
    name: &str,
    value: &T,
    capacity: usize,
) -> Result<ManifestFile, EngineError> {
    let mut content = String::with_capacity(capacity);
    crate::yaml::write(&mut content, value)
        .map_err(|e| EngineError::Other(format!("could not write {name}: {e}")))?;
    Ok(ManifestFile {
        name: name.to_owned(),
        media_type: "application/yaml",
        content,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What YAML readers get back is what was serialized, for text that
    /// YAML likes to reinterpret: block scalars with trailing or leading
    /// blanks, tabs, comment and mapping markers, CRLF, non-ASCII.
    #[test]
    fn yaml_round_trips() {
        let yaml = r#"
apiVersion: couler.dev/v1alpha1
name: tricky
steps:
  - name: a
    script:
      image: python:3.12
      command: [python3]
      source: "  print('lead')  \n\tprint('tab') # not a comment\nx = {'k': 'v: w'}\r\nprint('ünï')\n\n\n"
    outputs: {parameters: [{name: p, path: /tmp/p, default: "- no"}]}
  - name: b
    container:
      image: alpine
      command: [sh, -c, "echo '{{steps.a.outputs.parameters.p}}' > /dev/null; echo '#' ': ' '[x]' '*a' '&b' '!t' '%d' '@x' '`q`' '|' '>'"]
      args: ["", " ", "yes", "0o17", "1e3", ".inf", "2001-12-14", "~", "null", "True"]
"#;
        let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap();
        let plan = Plan::new(workflow, BTreeMap::new());
        let run = RunSpec::new("tnt_x", "run_1", 1);
        let (pipeline, pipeline_run) = objects(&plan, &run).unwrap();
        let manifest = compile(&plan, &run).unwrap();
        let expected = [
            serde_json::to_value(&pipeline).unwrap(),
            serde_json::to_value(&pipeline_run).unwrap(),
        ];
        for (file, expected) in manifest.files.iter().zip(expected) {
            let read: serde_json::Value = serde_saphyr::from_str(&file.content).unwrap();
            assert_eq!(read, expected, "{}:\n{}", file.name, file.content);
        }
    }
}
