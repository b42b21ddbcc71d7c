//! The second pass: components, tasks and DAGs. A step is one container
//! component and executor; `when` and `map` wrap its task in condition and
//! for-loop DAG components as the KFP SDK does (`dsl.If`, `dsl.ParallelFor`),
//! and exit handlers follow `dsl.ExitHandler`: the main steps form one DAG,
//! and an exit DAG runs after it with `ALL_UPSTREAM_TASKS_COMPLETED`.

use super::analyze::{
    Analysis, ArtifactSource, FROM, INNER_COND, Items, OUTER_COND, ParamSource, ParamUse,
    STATUS_INPUT, STATUS_SELECTOR, StepIo, TEXT,
};
use super::executor;
use super::spec::*;
use crate::{EngineError, RunSpec};
use couler_ir::RetryOn;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The wrapper levels of a step, outermost first; the last is the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    OuterCond,
    Loop,
    InnerCond,
    Container,
}

fn levels(io: &StepIo) -> Vec<Level> {
    let mut out = Vec::with_capacity(4);
    if io.outer_cond.is_some() {
        out.push(Level::OuterCond);
    }
    if io.items.is_some() {
        out.push(Level::Loop);
    }
    if io.inner_cond.is_some() {
        out.push(Level::InnerCond);
    }
    out.push(Level::Container);
    out
}

pub struct Built<'a> {
    pub pipeline: PipelineSpec<'a>,
    pub platform: PlatformSpec<'a>,
}

struct Builder<'b, 'a> {
    a: &'b mut Analysis<'a>,
    components: Prefixed<'a, ComponentSpec<'a>>,
    executors: Prefixed<'a, Executor<'a>>,
    platform: Prefixed<'a, KubernetesExecutorConfig<'a>>,
    levels: Vec<Vec<Level>>,
}

pub fn build<'a>(a: &mut Analysis<'a>, run: &RunSpec) -> Result<Built<'a>, EngineError> {
    let levels: Vec<Vec<Level>> =
        a.io.iter()
            .map(|io| io.as_ref().map(levels).unwrap_or_default())
            .collect();
    let steps = levels.len();
    let mut b = Builder {
        a,
        components: Prefixed::new("comp-", steps),
        executors: Prefixed::new("exec-", steps),
        platform: Prefixed::new("exec-", steps),
        levels,
    };
    let metadata = Rc::new(executor::run_metadata(&b.a.plan.workflow.labels, run));
    for i in 0..b.a.plan.steps.len() {
        // Taken for the borrow checker's sake; put back below.
        let Some(mut io) = b.a.io[i].take() else {
            continue;
        };
        let name = b.a.step(i).name.as_str();
        let container = executor::container(b.a, i, &mut io)?;
        let config = executor::platform(b.a, i, &io, &metadata, &run.tenant)?;
        b.executors.push(
            name,
            Executor {
                container: Some(container),
                importer: None,
            },
        );
        b.platform.push(name, config);
        b.a.io[i] = Some(io);
    }
    b.importers();
    let root = b.root();
    b.components.sort();
    b.executors.sort();
    b.platform.sort();
    let plan = b.a.plan;
    Ok(Built {
        pipeline: PipelineSpec {
            components: b.components,
            deployment_spec: DeploymentSpec {
                executors: b.executors,
            },
            pipeline_info: PipelineInfo {
                description: plan.workflow.description.clone(),
                name: plan.workflow.name.clone(),
            },
            root,
            schema_version: SCHEMA_VERSION,
            sdk_version: format!("couler-{}", env!("CARGO_PKG_VERSION")),
        },
        platform: PlatformSpec {
            platforms: Platforms {
                kubernetes: KubernetesPlatform {
                    deployment_spec: KubernetesDeployment {
                        executors: b.platform,
                    },
                },
            },
        },
    })
}

impl<'a> Builder<'_, 'a> {
    /// The root DAG: the main steps, or with exit handlers the main DAG
    /// (`exit-handler-1`) and the exit DAG that runs after it.
    fn root(&mut self) -> ComponentSpec<'a> {
        if !self.a.exit_handler {
            let exit = !self
                .a
                .plan
                .steps
                .iter()
                .any(|s| !s.exit_handler && matches!(s.action, couler_optimizer::Action::Run));
            return ComponentSpec {
                dag: Some(self.scope(exit)),
                ..Default::default()
            };
        }
        let main_name = self.a.bases.unique("exit-handler-1".to_owned());
        let exit_name = self.a.bases.unique("on-exit".to_owned());

        let uses_status = self
            .a
            .io
            .iter()
            .flatten()
            .any(|io| io.params.values().any(|u| u.source == ParamSource::Status));
        // The main DAG hands exit handlers what they read of main steps.
        let mut main = self.scope(false);
        let mut main_outputs = Io::default();
        let mut exit_task = Task::new(exit_name.clone(), exit_name.clone());
        let mut exit_inputs = Io::default();
        for p in 0..self.a.plan.steps.len() {
            if self.a.is_exit(p) || !self.a.runs(p) {
                continue;
            }
            let read_by_exit: Vec<(String, super::analyze::Export)> = self.a.exports[p]
                .iter()
                .filter(|(_, e)| e.by_exit)
                .map(|(k, e)| (k.clone(), e.clone()))
                .collect();
            for (key, e) in read_by_exit {
                let producer = self.a.step(p).name.clone();
                let inner = self.exported_key(p, &key);
                if e.artifact {
                    main.outputs
                        .artifacts
                        .insert(e.channel.clone(), artifact_selector(&producer, &inner));
                    main_outputs
                        .artifacts
                        .insert(e.channel.clone(), ArtifactSpec::artifact());
                    exit_inputs
                        .artifacts
                        .insert(e.channel.clone(), ArtifactSpec::artifact());
                    exit_task.inputs.artifacts.insert(
                        e.channel.clone(),
                        task_output_artifact(&main_name, &e.channel),
                    );
                } else {
                    let kind = if self.a.step(p).map.is_some() {
                        LIST
                    } else {
                        self.output_type(p, &key)
                    };
                    main.outputs
                        .parameters
                        .insert(e.channel.clone(), parameter_selector(&producer, &inner));
                    main_outputs
                        .parameters
                        .insert(e.channel.clone(), ParameterSpec::of(kind));
                    exit_inputs
                        .parameters
                        .insert(e.channel.clone(), ParameterSpec::of(kind));
                    exit_task.inputs.parameters.insert(
                        e.channel.clone(),
                        task_output_parameter(main_name.clone().into(), &e.channel),
                    );
                }
            }
        }
        if uses_status {
            exit_inputs.parameters.insert(
                STATUS_INPUT.to_owned(),
                ParameterSpec {
                    is_optional: true,
                    parameter_type: TASK_FINAL_STATUS,
                },
            );
            exit_task.inputs.parameters.insert(
                STATUS_INPUT.to_owned(),
                ParameterInput {
                    task_final_status: Some(ProducerTask {
                        producer_task: main_name.clone(),
                    }),
                    ..Default::default()
                },
            );
        }
        exit_task.dependent_tasks = vec![main_name.clone().into()];
        exit_task.trigger_policy = Some(TriggerPolicy {
            condition: None,
            strategy: Some("ALL_UPSTREAM_TASKS_COMPLETED"),
        });
        let exit = self.scope(true);
        self.components.push(
            main_name.clone(),
            ComponentSpec {
                dag: Some(main),
                output_definitions: main_outputs,
                ..Default::default()
            },
        );
        self.components.push(
            exit_name.clone(),
            ComponentSpec {
                dag: Some(exit),
                input_definitions: exit_inputs,
                ..Default::default()
            },
        );
        let mut tasks = BTreeMap::new();
        tasks.insert(
            main_name.clone().into(),
            Task::new(main_name.clone(), main_name.clone()),
        );
        tasks.insert(exit_name.into(), exit_task);
        ComponentSpec {
            dag: Some(Dag {
                outputs: DagOutputs::default(),
                tasks,
            }),
            ..Default::default()
        }
    }

    /// The DAG of the main steps (`exit == false`) or of the exit handlers.
    fn scope(&mut self, exit: bool) -> Dag<'a> {
        let mut tasks = BTreeMap::new();
        for i in 0..self.a.plan.steps.len() {
            if self.a.is_exit(i) != exit || !self.a.runs(i) {
                continue;
            }
            let task = self.step(i);
            tasks.insert(Cow::Borrowed(self.a.step(i).name.as_str()), task);
        }
        // With exit handlers, each DAG imports what its own steps read.
        let exit_handler = self.a.exit_handler;
        let in_scope = |spec: &super::analyze::ImportSpec| match (exit_handler, exit) {
            (false, _) => true,
            (true, true) => spec.in_exit,
            (true, false) => spec.in_main,
        };
        for (name, spec) in &self.a.importers {
            if !in_scope(spec) {
                continue;
            }
            let mut task = Task::new(name.clone(), name.clone());
            task.caching_options = Some(CachingOptions {});
            task.inputs.parameters.insert(
                "uri".to_owned(),
                ParameterInput {
                    runtime_value: Some(RuntimeValue {
                        constant: spec.uri.clone(),
                    }),
                    ..Default::default()
                },
            );
            tasks.insert(Cow::Owned(name.clone()), task);
        }
        Dag {
            outputs: DagOutputs::default(),
            tasks,
        }
    }

    /// Importer components and executors for reused steps' artifacts.
    fn importers(&mut self) {
        for (name, spec) in &self.a.importers {
            let mut inputs = Io::default();
            inputs
                .parameters
                .insert("uri".to_owned(), ParameterSpec::of(STRING));
            let mut outputs = Io::default();
            outputs
                .artifacts
                .insert("artifact".to_owned(), ArtifactSpec::artifact());
            self.components.push(
                name.clone(),
                ComponentSpec {
                    executor_label: Some(Key("exec-", name.clone().into())),
                    input_definitions: inputs,
                    output_definitions: outputs,
                    ..Default::default()
                },
            );
            self.executors.push(
                name.clone(),
                Executor {
                    container: None,
                    importer: Some(Importer {
                        artifact_uri: RuntimeParameter {
                            runtime_parameter: "uri".to_owned(),
                        },
                        metadata: BTreeMap::from([(
                            "couler.dev/digest".to_owned(),
                            spec.digest.clone(),
                        )]),
                        type_schema: ArtifactType::artifact(),
                    }),
                },
            );
        }
    }

    /// The output key a consumer in the same DAG reads from step `p`.
    fn exported_key(&self, p: usize, key: &str) -> String {
        if self.levels[p].len() > 1 {
            self.a.exports[p][key].channel.clone()
        } else {
            key.to_owned()
        }
    }

    /// A container output's type: `LIST` when a `map` iterates over it.
    fn output_type(&self, p: usize, key: &str) -> &'static str {
        let listed =
            self.a.step(p).map.is_none() && self.a.list_outputs.contains(&(p, key.to_owned()));
        if listed { LIST } else { STRING }
    }

    /// Step `i`'s components, and its outermost task.
    fn step(&mut self, i: usize) -> Task<'a> {
        let levels = std::mem::take(&mut self.levels[i]);
        // Taken for the borrow checker's sake; put back below.
        let io = self.a.io[i].take().expect("a step that runs is rendered");
        let name: &'a str = &self.a.step(i).name;
        // Component names, without the `comp-` prefix.
        let components: Vec<Cow<'a, str>> = levels
            .iter()
            .map(|level| match level {
                Level::Container => Cow::Borrowed(name),
                Level::Loop => Cow::Owned(self.a.bases.unique(format!("for-loop-{name}"))),
                Level::OuterCond | Level::InnerCond => {
                    Cow::Owned(self.a.bases.unique(format!("condition-{name}")))
                }
            })
            .collect();
        let loop_at = levels.iter().position(|l| *l == Level::Loop);
        // Only what other steps read is exported.
        let exports = &self.a.exports[i];

        // Innermost first: each level's component, and the task that runs it
        // in the level above.
        let mut inner: Option<Task> = None;
        for (depth, level) in levels.iter().enumerate().rev() {
            let mut component = ComponentSpec::default();
            for (ch, u) in io.params.iter().filter(|(_, u)| needed(*level, u)) {
                let kind = if u.at & FROM != 0 && matches!(level, Level::Loop | Level::OuterCond) {
                    LIST
                } else {
                    STRING
                };
                component
                    .input_definitions
                    .parameters
                    .insert(ch.clone(), ParameterSpec::of(kind));
            }
            if *level == Level::Loop
                && let Some(item) = &io.item_input
            {
                component
                    .input_definitions
                    .parameters
                    .insert(item.clone(), ParameterSpec::of(STRING));
            }
            for input in io.artifacts.keys() {
                component
                    .input_definitions
                    .artifacts
                    .insert(input.clone(), ArtifactSpec::artifact());
            }
            match level {
                Level::Container => {
                    component.executor_label = Some(Key("exec-", Cow::Borrowed(name)));
                    let step = self.a.step(i);
                    for p in step.outputs.iter().flat_map(|o| &o.parameters) {
                        let kind = self.output_type(i, &p.name);
                        component
                            .output_definitions
                            .parameters
                            .insert(p.name.clone(), ParameterSpec::of(kind));
                    }
                    let result = &self.a.result_keys[i];
                    if exports.contains_key(result) {
                        let kind = self.output_type(i, result);
                        component
                            .output_definitions
                            .parameters
                            .insert(result.clone(), ParameterSpec::of(kind));
                    }
                    for art in step.outputs.iter().flat_map(|o| &o.artifacts) {
                        component
                            .output_definitions
                            .artifacts
                            .insert(art.name.clone(), ArtifactSpec::artifact());
                    }
                }
                _ => {
                    let below = levels[depth + 1];
                    let mut dag = Dag::default();
                    for (key, e) in exports {
                        let inner_key = if below == Level::Container {
                            key.clone()
                        } else {
                            e.channel.clone()
                        };
                        if e.artifact {
                            dag.outputs
                                .artifacts
                                .insert(e.channel.clone(), artifact_selector(name, &inner_key));
                            component
                                .output_definitions
                                .artifacts
                                .insert(e.channel.clone(), ArtifactSpec::artifact());
                        } else {
                            // A fan-out's output is a list at every wrapper level
                            // (KFP types it so even inside the loop).
                            let kind = if loop_at.is_some() {
                                LIST
                            } else {
                                self.output_type(i, key)
                            };
                            dag.outputs
                                .parameters
                                .insert(e.channel.clone(), parameter_selector(name, &inner_key));
                            component
                                .output_definitions
                                .parameters
                                .insert(e.channel.clone(), ParameterSpec::of(kind));
                        }
                    }
                    let task = inner.take().expect("a wrapper wraps a task");
                    dag.tasks.insert(Cow::Borrowed(name), task);
                    component.dag = Some(dag);
                }
            }
            self.components.push(components[depth].clone(), component);

            // The task running this level, bound to the level above.
            let mut task = Task::new(name, components[depth].clone());
            let parent_is_loop = depth > 0 && levels[depth - 1] == Level::Loop;
            for (ch, u) in io.params.iter().filter(|(_, u)| needed(*level, u)) {
                let input = if depth == 0 {
                    self.outer_param(i, ch, u, &mut task.dependent_tasks)
                } else {
                    match (&u.source, parent_is_loop) {
                        (ParamSource::Item { field }, true) => ParameterInput {
                            component_input_parameter: io.item_input.clone(),
                            parameter_expression_selector: field
                                .as_ref()
                                .map(|f| format!("parseJson(string_value)[{}]", json_string(f))),
                            ..Default::default()
                        },
                        _ => component_input(ch),
                    }
                };
                task.inputs.parameters.insert(ch.clone(), input);
            }
            for (input, source) in &io.artifacts {
                let binding = if depth == 0 {
                    self.outer_artifact(i, source, &mut task.dependent_tasks)
                } else {
                    ArtifactInput {
                        component_input_artifact: Some(input.clone()),
                        task_output_artifact: None,
                    }
                };
                task.inputs.artifacts.insert(input.clone(), binding);
            }
            match level {
                Level::Container => {
                    task.caching_options = Some(CachingOptions {});
                    task.retry_policy = self.a.step(i).retry.as_ref().map(retry_policy);
                }
                Level::Loop => {
                    let map = self.a.step(i).map.as_ref().expect("a map step");
                    let items = match io.items.as_ref().expect("a map step has items") {
                        Items::Raw(raw) => super::spec::Items {
                            input_parameter: None,
                            raw: Some(raw.clone()),
                        },
                        Items::From(ch) => super::spec::Items {
                            input_parameter: Some(ch.clone()),
                            raw: None,
                        },
                    };
                    task.parameter_iterator = Some(ParameterIterator {
                        item_input: io.item_input.clone().expect("a map step has an item"),
                        items,
                    });
                    task.iterator_policy = map.parallelism.map(|p| IteratorPolicy {
                        parallelism_limit: p,
                    });
                }
                Level::OuterCond | Level::InnerCond => {
                    let condition = if *level == Level::OuterCond {
                        &io.outer_cond
                    } else {
                        &io.inner_cond
                    };
                    task.trigger_policy = Some(TriggerPolicy {
                        condition: condition.clone(),
                        strategy: None,
                    });
                }
            }
            if depth == 0 {
                self.dependencies(i, &mut task.dependent_tasks);
            }
            inner = Some(task);
        }
        self.a.io[i] = Some(io);
        self.levels[i] = levels;
        inner.expect("every step has a container level")
    }

    /// The outermost binding of a parameter: from a task in the same DAG,
    /// or from the enclosing exit DAG's inputs.
    fn outer_param(
        &self,
        i: usize,
        channel: &str,
        u: &ParamUse,
        deps: &mut Vec<Cow<'a, str>>,
    ) -> ParameterInput<'a> {
        match &u.source {
            ParamSource::Output { producer, key }
                if self.a.is_exit(*producer) == self.a.is_exit(i) =>
            {
                let producer_name = self.a.step(*producer).name.as_str();
                deps.push(Cow::Borrowed(producer_name));
                task_output_parameter(
                    Cow::Borrowed(producer_name),
                    &self.exported_key(*producer, key),
                )
            }
            ParamSource::Output { .. } => component_input(channel),
            ParamSource::Status => ParameterInput {
                component_input_parameter: Some(STATUS_INPUT.to_owned()),
                parameter_expression_selector: Some(STATUS_SELECTOR.to_owned()),
                ..Default::default()
            },
            ParamSource::Item { .. } => unreachable!("items are bound inside the loop"),
        }
    }

    fn outer_artifact(
        &self,
        i: usize,
        source: &ArtifactSource,
        deps: &mut Vec<Cow<'a, str>>,
    ) -> ArtifactInput {
        match source {
            ArtifactSource::Output { producer, key }
                if self.a.is_exit(*producer) == self.a.is_exit(i) =>
            {
                let producer_name = self.a.step(*producer).name.as_str();
                deps.push(Cow::Borrowed(producer_name));
                task_output_artifact(producer_name, &self.exported_key(*producer, key))
            }
            ArtifactSource::Output { producer, key } => ArtifactInput {
                component_input_artifact: Some(self.a.exports[*producer][key].channel.clone()),
                task_output_artifact: None,
            },
            ArtifactSource::Import { importer } => {
                deps.push(Cow::Owned(importer.clone()));
                task_output_artifact(importer, "artifact")
            }
        }
    }

    /// `dependentTasks`: the DAG's edges to steps that run, plus producers.
    fn dependencies(&self, i: usize, deps: &mut Vec<Cow<'a, str>>) {
        let (graph, offset) = self.a.graph_of(i);
        for &u in graph.upstream((i - offset) as u32) {
            let u = u as usize + offset;
            if self.a.runs(u) {
                deps.push(Cow::Borrowed(self.a.step(u).name.as_str()));
            }
        }
        deps.sort_unstable();
        deps.dedup();
    }
}

/// Whether a level's component takes a parameter: each takes what it and
/// the levels inside it read; item inputs start inside the loop.
fn needed(level: Level, u: &ParamUse) -> bool {
    let item = matches!(u.source, ParamSource::Item { .. });
    match level {
        Level::Container => u.at & TEXT != 0,
        Level::InnerCond => u.at & (TEXT | INNER_COND) != 0,
        Level::Loop => !item && u.at & (TEXT | INNER_COND | FROM) != 0,
        Level::OuterCond => !item && u.at & (TEXT | INNER_COND | FROM | OUTER_COND) != 0,
    }
}

fn component_input(name: &str) -> ParameterInput<'static> {
    ParameterInput {
        component_input_parameter: Some(name.to_owned()),
        ..Default::default()
    }
}

fn task_output_parameter<'a>(task: Cow<'a, str>, key: &str) -> ParameterInput<'a> {
    ParameterInput {
        task_output_parameter: Some(TaskOutputParameter {
            output_parameter_key: key.to_owned(),
            producer_task: task,
        }),
        ..Default::default()
    }
}

fn task_output_artifact(task: &str, key: &str) -> ArtifactInput {
    ArtifactInput {
        component_input_artifact: None,
        task_output_artifact: Some(TaskOutputArtifact {
            output_artifact_key: key.to_owned(),
            producer_task: task.to_owned(),
        }),
    }
}

fn parameter_selector(task: &str, key: &str) -> ParameterSelector {
    ParameterSelector {
        value_from_parameter: ValueFromParameter {
            output_parameter_key: key.to_owned(),
            producer_subtask: task.to_owned(),
        },
    }
}

fn artifact_selector(task: &str, key: &str) -> ArtifactSelectors {
    ArtifactSelectors {
        artifact_selectors: vec![ArtifactSelector {
            output_artifact_key: key.to_owned(),
            producer_subtask: task.to_owned(),
        }],
    }
}

/// A CEL double-quoted string (for `parseJson(…)["field"]`, KFP's shape).
fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// `retryPolicy`; the caller refused `on: transient`.
fn retry_policy(r: &couler_ir::Retry) -> RetryPolicy {
    debug_assert_eq!(r.on, RetryOn::Always);
    let backoff = r.backoff.as_ref();
    RetryPolicy {
        backoff_duration: backoff.map(|b| proto_duration(b.duration.as_std())),
        backoff_factor: backoff.map(|b| f64::from(b.factor.unwrap_or(2))),
        backoff_max_duration: backoff
            .and_then(|b| b.max_duration)
            .map(|d| proto_duration(d.as_std())),
        max_retry_count: r.limit,
    }
}

/// A `google.protobuf.Duration` in its JSON form (`"10s"`, `"1.5s"`).
fn proto_duration(d: std::time::Duration) -> String {
    if d.subsec_nanos() == 0 {
        return format!("{}s", d.as_secs());
    }
    let frac = format!("{:09}", d.subsec_nanos());
    format!("{}.{}s", d.as_secs(), frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_proto_json() {
        assert_eq!(proto_duration(std::time::Duration::from_secs(300)), "300s");
        assert_eq!(
            proto_duration(std::time::Duration::from_millis(1500)),
            "1.5s"
        );
    }
}
