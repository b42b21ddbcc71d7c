//! One IR step → one pipeline task with an embedded `taskSpec`.

use super::Ctx;
use super::model::*;
use super::names::go_duration;
use super::script::{self, Program, Wrap};
use super::text::{ARTIFACTS, Output, Problems, Translator};
use crate::k8s::secrets::{Namespace, secret_object};
use crate::yaml::SmallMap;
use couler_ir::refs::{Ref, sole_reference};
use couler_ir::{Condition, EnvVar, Operator, RetryOn, Step as IrStep};
use serde_json::Value;
use std::collections::BTreeSet;

/// The result a step that may be skipped publishes once it succeeded, for
/// the tasks below it (see `guard_below`).
pub const RAN_RESULT: &str = "couler-ran";

/// Feature flags a task needs beyond a default Tekton install.
pub const CEL_FLAG: &str = "enable-cel-in-whenexpression=true";
pub const BETA_FLAG: &str = "enable-api-fields=beta";

/// A compiled task and what the pipeline needs to know about it.
pub struct Compiled {
    pub task: PipelineTask,
    /// Plan indexes of the steps whose results the task references (Tekton
    /// orders the task after them on its own).
    pub reads: BTreeSet<usize>,
    /// How many task pods it starts at once, when known.
    pub width: Option<usize>,
    pub flags: BTreeSet<&'static str>,
}

/// Compiles the step at plan index `index`; problems are collected.
pub fn compile(ctx: &Ctx<'_>, index: usize, problems: &mut Problems) -> Compiled {
    let mut t = Translator::new(ctx, index, problems);
    let step = t.step;
    unsupported_shapes(step, t.problems);
    let mut flags = BTreeSet::new();

    let mut wrap = Wrap {
        stdout: ctx.stdout[index].clone(),
        per_instance: step.map.is_some(),
        items: ctx.items[index].clone(),
        ran: ctx.ran[index].then_some(RAN_RESULT),
        status: ctx.plan.steps[index]
            .exit_handler
            .then(|| status_readers(step, t.problems))
            .flatten(),
        ..Wrap::default()
    };
    outputs(ctx, index, &mut wrap, t.problems);
    inputs(ctx, step, &mut wrap, t.problems);
    let main = main_step(&mut t, &wrap);

    let when = when(&mut t, &step.when, &mut flags);
    let (matrix, width) = matrix(&mut t, &mut flags);
    let mut steps = Vec::with_capacity(2);
    let mut retries = None;
    if let Some(retry) = &step.retry {
        retries = (retry.limit > 0).then_some(retry.limit);
        if let Some(b) = &retry.backoff {
            let secs = |d: couler_ir::scalar::Duration| d.as_std().as_secs_f64().ceil() as u64;
            // Without a cap, stop growing at the longest step timeout the IR allows.
            let max = b.max_duration.map_or(30 * 24 * 3600, secs);
            steps.push(Step {
                name: if step.name == "backoff" {
                    "backoff-wait".into()
                } else {
                    "backoff".into()
                },
                image: main.image.clone(),
                script: Some(script::backoff_script(
                    &step.name,
                    secs(b.duration).max(1),
                    b.factor.unwrap_or(2),
                    max.max(1),
                )),
                ..Step::default()
            });
        }
    }
    steps.push(main);

    let mut task_params: Vec<ParamSpec> = t.params.keys().map(ParamSpec::string).collect();
    if step.map.is_some() {
        task_params.push(ParamSpec::string("item"));
        task_params.extend(
            t.item_fields
                .iter()
                .map(|f| ParamSpec::string(format!("item_{f}"))),
        );
        task_params.sort_by(|a, b| a.name.cmp(&b.name));
    }
    let params = t
        .params
        .iter()
        .map(|(name, value)| Param {
            name: name.clone(),
            value: ParamValue::String(value.clone()),
        })
        .collect();
    let uses_workspace = t.uses_workspace || !wrap.inputs.is_empty() || !wrap.artifacts.is_empty();
    let mut labels = SmallMap::default();
    labels.insert("couler.dev/step".to_owned(), step.name.clone());
    if let Some(group) = ctx.group_of(&step.name) {
        labels.insert("couler.dev/group".to_owned(), group.to_owned());
    }
    let results = results(ctx, index, &wrap);
    let reads = std::mem::take(&mut t.reads);
    Compiled {
        task: PipelineTask {
            name: step.name.clone(),
            description: step.description.clone(),
            run_after: Vec::new(),
            when,
            retries,
            timeout: step.timeout.map(|d| go_duration(d.as_std())),
            matrix,
            params,
            workspaces: if uses_workspace {
                vec![WorkspacePipelineTaskBinding {
                    name: ARTIFACTS.into(),
                    workspace: ARTIFACTS.into(),
                }]
            } else {
                Vec::new()
            },
            task_spec: EmbeddedTask {
                metadata: Some(TaskMetadata {
                    labels,
                    annotations: SmallMap::default(),
                }),
                params: task_params,
                results,
                workspaces: if uses_workspace {
                    vec![Named {
                        name: ARTIFACTS.into(),
                    }]
                } else {
                    Vec::new()
                },
                steps,
            },
        },
        reads,
        width,
        flags,
    }
}

/// Step shapes Tekton has no construct for.
fn unsupported_shapes(step: &IrStep, problems: &mut Problems) {
    let name = &step.name;
    if step.job.is_some() {
        problems.unsupported(
            name,
            "training jobs (`job`): Tekton has no step that creates and awaits a PyTorchJob/TFJob/MPIJob (a kubectl task would need an image and RBAC that a manifest cannot grant)",
        );
    }
    if step.tune.is_some() {
        problems.unsupported(
            name,
            "`tune`: the scheduler runs hyperparameter trials in stages; compile the staged plan instead",
        );
    }
    if step.repeat.is_some() {
        problems.unsupported(
            name,
            "`while` loops: a Tekton pipeline is acyclic and has no loop construct",
        );
    }
    if let Some(r) = &step.retry
        && r.on == RetryOn::Transient
    {
        problems.unsupported(
            name,
            "`retry.on: transient`: Tekton retries a task after any failure and cannot tell infrastructure failures apart",
        );
    }
}

/// The step the task runs, wrapped when it must be.
fn main_step(t: &mut Translator<'_, '_>, wrap: &Wrap<'_>) -> Step {
    let step = t.step;
    let name = step.name.clone();
    let resources = step.resources.as_ref().map(resources);
    let mut out = match (&step.container, &step.script) {
        (Some(c), _) => {
            let command: Vec<String> = c.command.iter().map(|s| t.data(s)).collect();
            let args: Vec<String> = c.args.iter().map(|s| t.data(s)).collect();
            let mut s = Step {
                name,
                image: c.image.clone(),
                working_dir: c.working_dir.as_deref().map(|d| t.data(d)),
                env: env(t, &c.env),
                ..Step::default()
            };
            if !wrap.is_needed() {
                s.command = command;
                s.args = args;
            } else if command.is_empty() {
                t.problems.unsupported(
                    &step.name,
                    "its outputs or artifacts need a wrapper around the program, and a container without `command` runs the image's entrypoint, which the compiler cannot know",
                );
            } else {
                s.script = Some(script::wrapper(wrap, &Program::Argv));
                s.args = command.into_iter().chain(args).collect();
            }
            s
        }
        (None, Some(sc)) => {
            let command: Vec<String> = sc.command.iter().map(|s| t.data(s)).collect();
            let source = t.data(&sc.source);
            let direct = if wrap.is_needed() {
                None
            } else {
                script::shebang_script(&command, &source)
            };
            let script = direct.unwrap_or_else(|| {
                script::wrapper(
                    wrap,
                    &Program::Source {
                        command: &command,
                        source: &source,
                    },
                )
            });
            Step {
                name,
                image: sc.image.clone(),
                working_dir: sc.working_dir.as_deref().map(|d| t.data(d)),
                env: env(t, &sc.env),
                script: Some(script),
                ..Step::default()
            }
        }
        // Jobs are refused in `unsupported_shapes`; keep the task well-formed.
        _ => Step {
            name,
            image: step.image().unwrap_or_default().to_owned(),
            ..Step::default()
        },
    };
    out.compute_resources = resources;
    out
}

fn env(t: &mut Translator<'_, '_>, vars: &[EnvVar]) -> Vec<super::model::EnvVar> {
    vars.iter()
        .map(|v| super::model::EnvVar {
            name: v.name.clone(),
            value: v.value.as_deref().map(|s| t.data(s)),
            value_from: v.secret.as_ref().map(|s| EnvVarSource {
                secret_key_ref: SecretKeySelector {
                    name: secret_object(Namespace::Own, &s.name),
                    key: s.key.clone(),
                },
            }),
        })
        .collect()
}

/// Whether an exit handler's text reads `{{workflow.status}}`, and the
/// environment variables that do; a working directory cannot.
fn status_readers(step: &IrStep, problems: &mut Problems) -> Option<Vec<String>> {
    let reads =
        |s: &str| couler_ir::refs::references(s).any(|r| matches!(r, Ok(Ref::WorkflowStatus)));
    let (command, args, source, env, dir) = match (&step.container, &step.script) {
        (Some(c), _) => (
            &c.command,
            &c.args[..],
            None,
            &c.env,
            c.working_dir.as_deref(),
        ),
        (None, Some(s)) => (
            &s.command,
            &[][..],
            Some(s.source.as_str()),
            &s.env,
            s.working_dir.as_deref(),
        ),
        _ => return None,
    };
    if dir.is_some_and(reads) {
        problems.unsupported(
            &step.name,
            "a working directory that reads {{workflow.status}}: Tekton substitutes `$(tasks.status)` as it is, and only the step's wrapper can turn it into Couler's word",
        );
    }
    let env: Vec<String> = env
        .iter()
        .filter(|v| v.value.as_deref().is_some_and(reads))
        .map(|v| v.name.clone())
        .collect();
    let any = !env.is_empty()
        || command.iter().chain(args).any(|s| reads(s))
        || source.is_some_and(reads);
    any.then_some(env)
}

/// CPU and memory as requests; GPUs as a limit, as Kubernetes requires for
/// extended resources.
pub fn resources(r: &couler_ir::Resources) -> ResourceRequirements {
    let mut out = ResourceRequirements::default();
    if let Some(cpu) = r.cpu {
        out.requests.insert("cpu".into(), cpu.to_string());
    }
    if let Some(memory) = r.memory {
        out.requests.insert("memory".into(), memory.to_string());
    }
    if let Some(gpu) = r.gpu.filter(|g| *g > 0) {
        out.limits.insert("nvidia.com/gpu".into(), gpu.to_string());
    }
    out
}

/// Output parameters and artifacts the wrapper writes.
fn outputs<'p>(ctx: &Ctx<'p>, index: usize, wrap: &mut Wrap<'p>, problems: &mut Problems) {
    let step = ctx.plan.ir_step(index);
    let Some(outputs) = &step.outputs else { return };
    for p in &outputs.parameters {
        match ctx.result_name(index, Output::Parameter(&p.name)) {
            Some(result) => {
                wrap.parameters
                    .push((&p.path, result, p.default.as_ref().map(|d| d.as_str())))
            }
            None => problems.unsupported(
                &step.name,
                format_args!(
                    "output parameter `{}`: Tekton result names start and end with a letter or digit",
                    p.name
                ),
            ),
        }
    }
    for a in &outputs.artifacts {
        wrap.artifacts
            .push((&a.name, &a.path, format!("{}/{}", step.name, a.name)));
    }
}

/// Input artifacts, copied from the workspace.
fn inputs<'p>(ctx: &Ctx<'p>, step: &'p IrStep, wrap: &mut Wrap<'p>, problems: &mut Problems) {
    for a in step.inputs.iter().flat_map(|i| &i.artifacts) {
        let Some(Ok(Ref::StepArtifact(source, artifact))) = sole_reference(&a.from) else {
            problems.invalid(
                &step.name,
                format_args!("input artifact `{}` has no valid `from`", a.name),
            );
            continue;
        };
        let Some(&j) = ctx.index.get(source) else {
            problems.invalid(&step.name, format_args!("reads unknown step `{source}`"));
            continue;
        };
        if ctx.reused(j).is_some() {
            problems.unsupported(
                &step.name,
                format_args!(
                    "input artifact `{}` comes from step `{source}`, which is reused from the cache: Tekton tasks receive artifacts only through the run's workspace, where nothing wrote it",
                    a.name
                ),
            );
            continue;
        }
        match ctx.artifact_dir(j, artifact) {
            Some(dir) => wrap.inputs.push((dir, &a.path)),
            None => problems.unsupported(
                &step.name,
                format_args!(
                    "input artifact `{}` comes from mapped step `{source}`; each matrix instance keeps its own copy",
                    a.name
                ),
            ),
        }
    }
}

fn results(ctx: &Ctx<'_>, index: usize, wrap: &Wrap<'_>) -> Vec<TaskResult> {
    let mut out: Vec<TaskResult> = wrap
        .parameters
        .iter()
        .map(|(_, result, _)| TaskResult {
            name: result.clone(),
            kind: "string",
            description: None,
        })
        .collect();
    if let Some(result) = &ctx.stdout[index] {
        out.push(TaskResult {
            name: result.clone(),
            kind: "string",
            description: Some("standard output, trimmed".into()),
        });
    }
    if let Some(result) = wrap.ran {
        out.push(TaskResult {
            name: result.to_owned(),
            kind: "string",
            description: Some("true once the step succeeded; the tasks below require it".into()),
        });
    }
    for (result, array) in &wrap.items {
        out.push(TaskResult {
            name: array.clone(),
            kind: "array",
            description: Some(format!("{result} as a list of strings, for map.from")),
        });
    }
    out
}

/// `when` conditions: equality and membership as Tekton `in`/`notin`,
/// numeric comparisons as CEL.
fn when(
    t: &mut Translator<'_, '_>,
    conditions: &[Condition],
    flags: &mut BTreeSet<&'static str>,
) -> Vec<WhenExpression> {
    let mut out = Vec::with_capacity(conditions.len());
    for c in conditions {
        let status = matches!(sole_reference(&c.input), Some(Ok(Ref::WorkflowStatus)));
        let input = t.when(&c.input);
        let values = |single: bool| -> Vec<String> {
            let given: Vec<&str> = if single {
                c.value.iter().map(|v| v.as_str()).collect()
            } else {
                c.values.iter().map(|v| v.as_str()).collect()
            };
            let mut values = Vec::new();
            for v in given {
                if status {
                    values.extend(tekton_status(v).iter().map(|s| s.to_string()));
                } else {
                    values.push(v.to_owned());
                }
            }
            values.dedup();
            values
        };
        let membership = |operator, single| WhenExpression {
            input: Some(input.clone()),
            operator: Some(operator),
            values: values(single),
            cel: None,
        };
        out.push(match c.operator {
            Operator::Eq => membership("in", true),
            Operator::Ne => membership("notin", true),
            Operator::In => membership("in", false),
            Operator::Notin => membership("notin", false),
            op => {
                flags.insert(CEL_FLAG);
                let symbol = match op {
                    Operator::Lt => "<",
                    Operator::Le => "<=",
                    Operator::Gt => ">",
                    _ => ">=",
                };
                let value = c.value.as_ref().map(|v| v.as_str()).unwrap_or_default();
                WhenExpression {
                    input: None,
                    operator: None,
                    values: Vec::new(),
                    cel: Some(format!(
                        "double('{}') {symbol} {}",
                        input.trim(),
                        cel_double(value)
                    )),
                }
            }
        });
    }
    out
}

/// `{{workflow.status}}` values as `$(tasks.status)` spells them: a run
/// whose tasks succeeded but some were skipped is `Completed`.
fn tekton_status(v: &str) -> Vec<&str> {
    match v.to_ascii_lowercase().as_str() {
        "succeeded" => vec!["Succeeded", "Completed"],
        "failed" | "error" => vec!["Failed"],
        _ => vec![v],
    }
}

/// A number as a CEL double literal.
fn cel_double(v: &str) -> String {
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => {
            let s = x.to_string();
            if s.contains('.') { s } else { format!("{s}.0") }
        }
        _ => format!("double('{}')", v.replace('\'', "")),
    }
}

/// `map` as a matrix over the parameter `item` (and `item_FIELD` for
/// fields of object items). Returns the matrix and the fan-out width when
/// known.
fn matrix(
    t: &mut Translator<'_, '_>,
    flags: &mut BTreeSet<&'static str>,
) -> (Option<Matrix>, Option<usize>) {
    let step = t.step;
    let Some(map) = &step.map else {
        return (None, Some(1));
    };
    flags.insert(BETA_FLAG);
    let items: Option<Vec<Value>> = match (&map.items, &map.from) {
        (Some(items), _) => Some(items.clone()),
        (None, Some(from)) => match dynamic_items(t, from) {
            Ok(matrix) => {
                if map.parallelism.is_some() {
                    t.problems.unsupported(
                        &step.name,
                        "`map.parallelism` over `map.from`: Tekton cannot limit how many matrix instances run at once",
                    );
                }
                return (Some(matrix), None);
            }
            Err(literal) => literal,
        },
        (None, None) => None,
    };
    let Some(items) = items else {
        return (None, None);
    };
    if let Some(p) = map.parallelism
        && (p as usize) < items.len()
    {
        t.problems.unsupported(
            &step.name,
            format_args!(
                "`map.parallelism: {p}` below its {} items: Tekton starts every matrix instance at once and cannot limit them",
                items.len()
            ),
        );
    }
    let width = items.len();
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    };
    if t.item_fields.is_empty() {
        let values = items.iter().map(text).collect();
        return (
            Some(Matrix {
                params: vec![Param {
                    name: "item".into(),
                    value: ParamValue::Array(values),
                }],
                include: Vec::new(),
            }),
            Some(width),
        );
    }
    let mut include = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut params = vec![Param {
            name: "item".into(),
            value: ParamValue::String(text(item)),
        }];
        for field in &t.item_fields {
            match item.get(field) {
                Some(v) => params.push(Param {
                    name: format!("item_{field}"),
                    value: ParamValue::String(text(v)),
                }),
                None => t.problems.invalid(
                    &step.name,
                    format_args!("reads {{{{item.{field}}}}} but item {i} has no field `{field}`"),
                ),
            }
        }
        include.push(IncludeParams {
            name: format!("item-{i}"),
            params,
        });
    }
    (
        Some(Matrix {
            params: Vec::new(),
            include,
        }),
        Some(width),
    )
}

/// `map.from`: a matrix over another matrix task's gathered results, or
/// (as `Err`) the items when the list is known now (a resolved parameter
/// or a reused step's output).
fn dynamic_items(t: &mut Translator<'_, '_>, from: &str) -> Result<Matrix, Option<Vec<Value>>> {
    let ctx = t.ctx;
    let step = t.step;
    let literal = |text: &str, problems: &mut Problems| {
        serde_json::from_str::<Vec<Value>>(text.trim())
            .map_err(|_| {
                problems.invalid(
                    &step.name,
                    format_args!("`map.from` is not a JSON list: {:.200}", text),
                )
            })
            .ok()
    };
    let (source, output) = match sole_reference(from) {
        None => return Err(literal(from, t.problems)),
        Some(Ok(Ref::StepResult(s))) => (s, Output::Result),
        Some(Ok(Ref::StepParameter(s, p))) => (s, Output::Parameter(p)),
        Some(_) => {
            // Anything else (a parameter the plan left) resolves as text.
            let text = t.data(from);
            return Err(literal(&text, t.problems));
        }
    };
    let Some(&j) = ctx.index.get(source) else {
        t.problems
            .invalid(&step.name, format_args!("reads unknown step `{source}`"));
        return Err(None);
    };
    if ctx.reused(j).is_some() {
        let text = t.data(from);
        return Err(literal(&text, t.problems));
    }
    if !t.item_fields.is_empty() {
        t.problems.unsupported(
            &step.name,
            "reads `{{item.FIELD}}` of items only known at run time; Tekton matrix parameters are plain strings",
        );
    }
    // A matrix task's results are gathered into arrays; a single task's
    // JSON list is copied into an array result by its wrapper.
    let array = if ctx.mapped[j] {
        ctx.result_name(j, output)
    } else {
        ctx.items_result(j, output).map(str::to_owned)
    };
    let Some(result) = array else {
        t.problems.unsupported(
            &step.name,
            format_args!(
                "`map.from` reads an output of `{source}` that is not a valid Tekton result name"
            ),
        );
        return Err(None);
    };
    t.reads.insert(j);
    Ok(Matrix {
        params: vec![Param {
            name: "item".into(),
            value: ParamValue::String(format!("$(tasks.{source}.results.{result}[*])")),
        }],
        include: Vec::new(),
    })
}
