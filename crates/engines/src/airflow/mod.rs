//! Compiling plans to Apache Airflow 3: one DAG file (`<dag_id>.py`) per
//! run, written against the `airflow.sdk` authoring API.
//!
//! | IR | Airflow |
//! |---|---|
//! | container / script step | `KubernetesPodOperator` (default) or `BashOperator` ([`Operator::Bash`], for a LocalExecutor) |
//! | dependencies, groups, implied edges | `>>` between tasks |
//! | `depends` naming every upstream step as `x.any` | `trigger_rule=TriggerRule.ALL_DONE`; other outcome or `\|\|`/`!` entries are refused |
//! | `when` | a `ShortCircuitOperator` `<step>__when` in front of the step (`ignore_downstream_trigger_rules=False`, so only the step is skipped directly and skips propagate through `all_success` as in the local engine) |
//! | `map` (items or from) | a `PythonOperator` `<step>__items` computing each instance's arguments, then `.partial(...).expand_kwargs(...)`; `map.parallelism` → `max_active_tis_per_dagrun` |
//! | outputs (`result`, parameters) | XCom: the step's wrapper pushes `{"result": b64, "parameters": {P: b64}}`; consumers read `{{ couler_output(ti, 'S', …) }}` in templated fields |
//! | `retry` | `retries`, `retry_delay`, `retry_exponential_backoff` (the factor), `max_retry_delay`; `on: transient` → `retry_policy` (Airflow ≥ 3.3) |
//! | `timeout` | `execution_timeout` |
//! | `onExit` + `{{workflow.status}}` | `couler__status` (`all_done`, after every leaf) → exit steps → `couler__outcome` (`all_done`), which fails the run if any task failed |
//! | `parallelism` | `max_active_tasks` |
//! | `schedule` | nothing: the DAG has `schedule=None` (the control plane fires schedules; each tick is a run) |
//! | workflow `timeout` | `dagrun_timeout` (the scheduler enforces it too); refused with `onExit` steps, which Airflow would skip |
//! | labels, tenant, run | DAG `tags` and pod `labels` |
//!
//! Cached or reused steps are not emitted; their recorded outputs are
//! written into their consumers as literals.
//!
//! Refused ([`EngineError::Unsupported`]): `while` (a DAG run is acyclic),
//! a workflow `timeout` with exit handlers,
//! training jobs (the Kubernetes provider has no operator that runs a
//! training-operator job to completion), `tune` steps, `when` conditions
//! that read `{{item}}`, and with pods, artifacts (Airflow has no artifact
//! store and pods share no file system). The BashOperator variant keeps
//! artifacts as files under the run's directory on the worker, which a
//! LocalExecutor shares between tasks; like the local engine it records
//! images, resources and scheduling hints without using them.

mod adapter;
pub use adapter::{AirflowAdapter, AirflowConfig};
mod api;
mod poll;
mod step;
mod text;

use crate::compile::{Manifest, ManifestFile};
use crate::{EngineError, RunSpec};
use couler_ir::depends::{Expr, Outcome};
use couler_ir::refs::{Ref, references};
use couler_ir::{Dag, Step};
use couler_optimizer::{Action, Plan, StepOutputs};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use text::{id_part, label_value, py_list, py_str};

pub(crate) const ENGINE: &str = "airflow";
/// Where a BashOperator reads reused artifacts from: the worker's files.
pub const READS: &[&str] = &["file://"];

/// The operator that runs container and script steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Operator {
    /// `KubernetesPodOperator` from apache-airflow-providers-cncf-kubernetes.
    #[default]
    KubernetesPod,
    /// `BashOperator` running the step's command on the worker (LocalExecutor).
    Bash,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AirflowOptions {
    pub operator: Operator,
}

/// Compiles with pods ([`Operator::KubernetesPod`]).
pub fn compile(plan: &Plan, run: &RunSpec) -> Result<Manifest, EngineError> {
    compile_with(plan, run, &AirflowOptions::default())
}

pub fn compile_with(
    plan: &Plan,
    run: &RunSpec,
    options: &AirflowOptions,
) -> Result<Manifest, EngineError> {
    let wf = &plan.workflow;
    if wf.timeout.is_some() && !wf.on_exit.is_empty() {
        return Err(unsupported(
            "a workflow `timeout` with `onExit` steps: Airflow's dagrun_timeout skips every unfinished task, the exit steps included, where Couler still runs them".into(),
        ));
    }
    let dag = crate::compile::dag(plan)?;
    let ctx = Ctx::new(plan, run, options, &dag);
    let content = ctx.dag_file()?;
    Ok(Manifest {
        files: vec![ManifestFile {
            name: format!("{}.py", ctx.dag_id),
            media_type: "text/x-python",
            content,
        }],
    })
}

pub(crate) fn unsupported(feature: String) -> EngineError {
    EngineError::Unsupported {
        engine: ENGINE,
        feature,
    }
}

/// Everything the compilation of one plan shares.
pub(crate) struct Ctx<'a> {
    pub plan: &'a Plan,
    pub run: &'a RunSpec,
    pub operator: Operator,
    pub dag: &'a Dag,
    pub dag_id: String,
    /// Outputs of steps that are not run (cached or reused).
    pub reused: HashMap<&'a str, &'a StepOutputs>,
    /// Steps (by name) that are `map` steps.
    pub mapped: HashSet<&'a str>,
    /// Steps whose result or parameters an emitted step reads.
    pub read: HashSet<&'a str>,
}

/// An emitted step's first and last task variable (gate, builder, operator).
pub(crate) struct Emitted {
    pub first: String,
    pub last: String,
}

impl<'a> Ctx<'a> {
    fn new(plan: &'a Plan, run: &'a RunSpec, options: &AirflowOptions, dag: &'a Dag) -> Self {
        let wf = &plan.workflow;
        let mut id = format!("couler_{}_{}", wf.name, id_part(&run.run));
        if let Some(stage) = &run.stage {
            let _ = write!(id, "_{}", id_part(stage));
        }
        if run.attempt > 1 {
            let _ = write!(id, "_attempt{}", run.attempt);
        }
        let dag_id: String = id.chars().take(250).collect();
        let mut reused = HashMap::new();
        let mut mapped = HashSet::new();
        let mut read = HashSet::new();
        for (i, planned) in plan.steps.iter().enumerate() {
            let step = plan.ir_step(i);
            if let Action::Reuse { outputs, .. } = &planned.action {
                reused.insert(step.name.as_str(), outputs);
            }
            if step.map.is_some() {
                mapped.insert(step.name.as_str());
            }
        }
        for (i, planned) in plan.steps.iter().enumerate() {
            if planned.action != Action::Run {
                continue;
            }
            for_each_text(plan.ir_step(i), &mut |s| {
                for r in references(s).flatten() {
                    if let Ref::StepResult(s) | Ref::StepParameter(s, _) = r {
                        read.insert(s);
                    }
                }
            });
        }
        Ctx {
            plan,
            run,
            operator: options.operator,
            dag,
            dag_id,
            reused,
            mapped,
            read,
        }
    }

    fn dag_file(&self) -> Result<String, EngineError> {
        let wf = &self.plan.workflow;
        let main = wf.steps.len();
        let runs = |i: usize| self.plan.steps[i].action == Action::Run;
        for i in 0..self.plan.steps.len() {
            if runs(i) {
                self.check(self.plan.ir_step(i))?;
            }
        }

        // One buffer for the whole file, sized up front (under 1 kB a step)
        // so that a big DAG is not copied as it grows.
        let mut out = String::with_capacity(16384 + 1024 * self.plan.steps.len());
        self.header(&mut out);
        let mut edges = String::new();
        let mut emitted: HashMap<usize, Emitted> = HashMap::new();
        let mut tasks: Vec<String> = Vec::new();
        for &i in self.dag.steps.order() {
            let i = i as usize;
            if !runs(i) {
                continue;
            }
            let e = step::emit(self, &wf.steps[i], false, &mut out)?;
            let ups = self.dag.steps.upstream(i as u32).iter();
            let ups: Vec<&str> = ups
                .filter_map(|&u| emitted.get(&(u as usize)).map(|e| e.last.as_str()))
                .collect();
            edge(&mut edges, &ups, &e.first);
            tasks.push(wf.steps[i].name.clone());
            emitted.insert(i, e);
        }
        let leaves: Vec<&str> = self
            .dag
            .steps
            .order()
            .iter()
            .filter(|&&i| emitted.contains_key(&(i as usize)))
            .filter(|&&i| {
                self.dag
                    .steps
                    .downstream(i)
                    .iter()
                    .all(|d| !emitted.contains_key(&(*d as usize)))
            })
            .map(|i| emitted[&(*i as usize)].last.as_str())
            .collect();

        let exit_runs = (0..wf.on_exit.len()).any(|j| runs(main + j));
        if exit_runs {
            let _ = write!(
                out,
                "    t_couler__status = PythonOperator(\n        task_id=\"couler__status\",\n        python_callable=couler_status,\n        op_kwargs={{\"tasks\": {}}},\n        trigger_rule=TriggerRule.ALL_DONE,\n        retries=0,\n    )\n",
                py_list(&tasks)
            );
            edge(&mut edges, &leaves, "t_couler__status");
            let mut exit_emitted: HashMap<usize, Emitted> = HashMap::new();
            for &j in self.dag.on_exit.order() {
                let j = j as usize;
                if !runs(main + j) {
                    continue;
                }
                let e = step::emit(self, &wf.on_exit[j], true, &mut out)?;
                let ups: Vec<&str> = self
                    .dag
                    .on_exit
                    .upstream(j as u32)
                    .iter()
                    .filter_map(|&u| exit_emitted.get(&(u as usize)).map(|e| e.last.as_str()))
                    .collect();
                if ups.is_empty() {
                    edge(&mut edges, &["t_couler__status"], &e.first);
                } else {
                    edge(&mut edges, &ups, &e.first);
                }
                tasks.push(wf.on_exit[j].name.clone());
                exit_emitted.insert(j, e);
            }
            let exit_leaves: Vec<&str> = self
                .dag
                .on_exit
                .order()
                .iter()
                .filter(|&&j| exit_emitted.contains_key(&(j as usize)))
                .filter(|&&j| {
                    self.dag
                        .on_exit
                        .downstream(j)
                        .iter()
                        .all(|d| !exit_emitted.contains_key(&(*d as usize)))
                })
                .map(|j| exit_emitted[&(*j as usize)].last.as_str())
                .collect();
            tasks.push("couler__status".into());
            let _ = write!(
                out,
                "    t_couler__outcome = PythonOperator(\n        task_id=\"couler__outcome\",\n        python_callable=couler_outcome,\n        op_kwargs={{\"tasks\": {}}},\n        trigger_rule=TriggerRule.ALL_DONE,\n        retries=0,\n    )\n",
                py_list(&tasks)
            );
            edge(&mut edges, &exit_leaves, "t_couler__outcome");
        }

        if !edges.is_empty() {
            out.push('\n');
            out.push_str(&edges);
        }
        Ok(out)
    }

    /// The trigger rule of a step whose `depends` ask for more than
    /// success, when one rule says exactly the same: `all_done` for a step
    /// that waits for each upstream step to end whatever its outcome
    /// (`x.any` for all of them). Anything else is refused: `one_success`
    /// starts before the others end and `all_failed` counts
    /// `upstream_failed` as failed and skips where Couler's and Argo's rule
    /// would let a failure fail the run.
    pub(crate) fn trigger_rule(
        &self,
        step: &Step,
        exit: bool,
    ) -> Result<Option<&'static str>, EngineError> {
        let wf = &self.plan.workflow;
        let list = if exit { &wf.on_exit } else { &wf.steps };
        let Some(node) = list.iter().position(|s| s.name == step.name) else {
            return Ok(None);
        };
        let node = node as u32;
        let requirements = self.dag.requirements(exit);
        if requirements.is_plain(node) {
            return Ok(None);
        }
        let offset = if exit { wf.steps.len() } else { 0 };
        let upstream = self.dag.graph(exit).upstream(node);
        let all_any = requirements.of(node).iter().all(|r| {
            r.expr.refs().iter().all(|(_, o)| *o == Some(Outcome::Any))
                && matches!(&r.expr, Expr::Ref(..) | Expr::And(_))
        });
        let all_run = upstream
            .iter()
            .all(|&u| self.plan.steps[offset + u as usize].action == Action::Run);
        let handlers_outcome = !wf.on_exit.is_empty();
        if all_any && all_run && step.when.is_empty() && step.map.is_none() && !handlers_outcome {
            return Ok(Some("ALL_DONE"));
        }
        let entry = (requirements.of(node).iter())
            .find(|r| !r.expr.is_conjunction_of_successes())
            .and_then(|r| r.entry)
            .and_then(|e| step.depends.get(e))
            .cloned()
            .unwrap_or_default();
        Err(unsupported(format!(
            "step `{}`: the `depends` entry `{entry}` has no Airflow trigger rule of the same meaning (only `all_done`, for a step without `when` or `map` that names every upstream step as `.any`, in a run without exit handlers, whose outcome task counts every failed task)",
            step.name
        )))
    }

    /// Refuses what this engine cannot express, naming step and feature.
    fn check(&self, step: &Step) -> Result<(), EngineError> {
        let name = &step.name;
        if step.tune.is_some() {
            return Err(unsupported(format!(
                "step `{name}` is a `tune` step: the scheduler runs hyperparameter trials in stages; compile each stage's plan instead"
            )));
        }
        if step.repeat.is_some() {
            return Err(unsupported(format!(
                "step `{name}` uses `while`: an Airflow DAG run is acyclic and cannot rerun a task on its own outputs"
            )));
        }
        if step.job.is_some() {
            return Err(unsupported(format!(
                "step `{name}` is a training job: apache-airflow-providers-cncf-kubernetes has no operator that runs a PyTorchJob/TFJob/MPIJob to completion (KubernetesCreateResourceOperator only creates it)"
            )));
        }
        if step.map.is_some()
            && step.when.iter().any(|c| {
                references(&c.input)
                    .flatten()
                    .any(|r| matches!(r, Ref::Item(_)))
            })
        {
            return Err(unsupported(format!(
                "step `{name}`: a `when` condition reads `{{{{item}}}}`, which would need a per-instance skip of a mapped task"
            )));
        }
        if self.operator == Operator::KubernetesPod {
            let artifact = step
                .inputs
                .iter()
                .flat_map(|i| &i.artifacts)
                .map(|a| &a.name)
                .chain(
                    step.outputs
                        .iter()
                        .flat_map(|o| &o.artifacts)
                        .map(|a| &a.name),
                )
                .next();
            if let Some(a) = artifact {
                return Err(unsupported(format!(
                    "step `{name}` passes artifact `{a}`: Airflow has no artifact store and KubernetesPodOperator pods share no volume (compile with the BashOperator for a LocalExecutor to keep artifacts as files on the worker)"
                )));
            }
        }
        Ok(())
    }

    fn header(&self, out: &mut String) {
        let wf = &self.plan.workflow;
        let _ = writeln!(
            out,
            "# Generated by Couler from workflow {:?} (tenant {:?}, run {:?}, attempt {}); do not edit.",
            wf.name, self.run.tenant, self.run.run, self.run.attempt
        );
        out.push_str("from __future__ import annotations\n\nimport base64\nimport json\nimport os\nimport re\nfrom datetime import timedelta\n\nimport pendulum\n");
        out.push_str("from airflow.providers.standard.operators.python import PythonOperator, ShortCircuitOperator\n");
        match self.operator {
            Operator::KubernetesPod => out.push_str(
                "from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator\nfrom airflow.providers.cncf.kubernetes.secret import Secret\nfrom kubernetes.client import models as k8s\n",
            ),
            Operator::Bash => {
                out.push_str("from airflow.providers.standard.operators.bash import BashOperator\n")
            }
        }
        let transient = self.plan.steps.iter().enumerate().any(|(i, p)| {
            p.action == Action::Run
                && self
                    .plan
                    .ir_step(i)
                    .retry
                    .as_ref()
                    .is_some_and(|r| r.on == couler_ir::RetryOn::Transient)
        });
        out.push_str("from airflow.sdk import DAG, TriggerRule");
        if transient {
            out.push_str(", ExceptionRetryPolicy, RetryAction, RetryRule");
        }
        out.push_str("\n\nCOULER_DATA = os.environ.get(\"COULER_AIRFLOW_DATA\", \"/tmp/couler-airflow\")\n\n");
        out.push_str(include_str!("runtime.py"));
        if transient {
            out.push_str(match self.operator {
                Operator::KubernetesPod => TRANSIENT_POD,
                Operator::Bash => TRANSIENT_BASH,
            });
        }

        let mut tags = vec![
            "couler".to_owned(),
            format!("couler.dev/workflow={}", label_value(&wf.name)),
            format!("couler.dev/tenant={}", label_value(&self.run.tenant)),
            format!("couler.dev/run={}", label_value(&self.run.run)),
        ];
        tags.extend(
            wf.labels
                .iter()
                .map(|(k, v)| format!("{k}={v}").chars().take(100).collect()),
        );
        let _ = write!(out, "\n\nwith DAG(\n    dag_id={},\n", py_str(&self.dag_id));
        if let Some(d) = &wf.description {
            let _ = writeln!(out, "    description={},", py_str(d));
        }
        // One DAG per run, triggered once by the adapter: never on a
        // timetable of its own. The control plane fires `schedule:`, and
        // each tick is a run with a DAG of its own.
        out.push_str("    schedule=None,\n");
        out.push_str("    start_date=pendulum.datetime(2024, 1, 1, tz=\"UTC\"),\n");
        out.push_str("    catchup=False,\n    is_paused_upon_creation=False,\n");
        if let Some(p) = wf.parallelism {
            let _ = writeln!(out, "    max_active_tasks={p},");
        }
        if let Some(t) = wf.timeout {
            let _ = writeln!(out, "    dagrun_timeout={},", step::seconds(t.as_std()));
        }
        let _ = writeln!(out, "    tags={},", py_list(&tags));
        out.push_str("    user_defined_macros={\"couler_output\": couler_output, \"couler_dir\": couler_dir},\n    jinja_environment_kwargs={\"keep_trailing_newline\": True},\n) as dag:\n");
    }

    /// The pod labels of a step: the workflow's, then Couler's own.
    pub(crate) fn labels(&self, step: &str) -> Vec<(String, String)> {
        let mut labels: Vec<(String, String)> = self
            .plan
            .workflow
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), label_value(v)))
            .collect();
        labels.push((
            "couler.dev/workflow".into(),
            label_value(&self.plan.workflow.name),
        ));
        labels.push(("couler.dev/tenant".into(), label_value(&self.run.tenant)));
        labels.push(("couler.dev/run".into(), label_value(&self.run.run)));
        labels.push(("couler.dev/step".into(), label_value(step)));
        labels
    }
}

/// Infrastructure failures a retry with `on: transient` covers.
const TRANSIENT_POD: &str = r#"

# `retry.on: transient`: the pod could not be scheduled, started or found,
# or the Kubernetes API refused (quota, throttling). An out-of-memory kill
# surfaces as an ordinary pod failure and is not told apart.
COULER_TRANSIENT = ExceptionRetryPolicy(
    rules=[
        RetryRule(
            exception=[
                "airflow.providers.cncf.kubernetes.kubernetes_helper_functions.PodLaunchFailedException",
                "airflow.providers.cncf.kubernetes.utils.pod_manager.PodLaunchTimeoutException",
                "airflow.providers.cncf.kubernetes.utils.pod_manager.PodNotFoundException",
                "airflow.providers.cncf.kubernetes.kubernetes_helper_functions.KubernetesApiException",
                "kubernetes.client.exceptions.ApiException",
                "urllib3.exceptions.HTTPError",
            ],
            action=RetryAction.RETRY,
        )
    ],
    default=RetryAction.FAIL,
)
"#;

/// On the worker there is no infrastructure between Airflow and the
/// process but the OS: only failures to start or talk to it are transient.
const TRANSIENT_BASH: &str = r#"

# `retry.on: transient`: only OS-level failures to run the command; the
# command's own non-zero exit (including an out-of-memory kill) fails.
COULER_TRANSIENT = ExceptionRetryPolicy(
    rules=[RetryRule(exception=["builtins.OSError"], action=RetryAction.RETRY)],
    default=RetryAction.FAIL,
)
"#;

fn edge(out: &mut String, ups: &[&str], down: &str) {
    match ups {
        [] => {}
        [one] => {
            let _ = writeln!(out, "    {one} >> {down}");
        }
        many => {
            let _ = writeln!(out, "    [{}] >> {down}", many.join(", "));
        }
    }
}

/// Calls `f` on every string of a step that may hold references: what it
/// runs, its conditions, its map source and its input artifacts.
pub(crate) fn for_each_text<'s>(step: &'s Step, f: &mut impl FnMut(&'s str)) {
    let env = |env: &'s [couler_ir::EnvVar], f: &mut dyn FnMut(&'s str)| {
        for v in env {
            if let Some(v) = &v.value {
                f(v);
            }
        }
    };
    if let Some(c) = &step.container {
        c.command.iter().chain(&c.args).for_each(|s| f(s));
        env(&c.env, f);
        c.working_dir.iter().for_each(|s| f(s));
        f(&c.image);
    }
    if let Some(s) = &step.script {
        s.command.iter().for_each(|x| f(x));
        f(&s.source);
        env(&s.env, f);
        s.working_dir.iter().for_each(|x| f(x));
        f(&s.image);
    }
    for c in &step.when {
        f(&c.input);
    }
    if let Some(from) = step.map.as_ref().and_then(|m| m.from.as_deref()) {
        f(from);
    }
    for a in step.inputs.iter().flat_map(|i| &i.artifacts) {
        f(&a.from);
    }
}
