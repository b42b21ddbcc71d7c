//! Compiling a plan into an engine's own manifest: what `couler compile`
//! prints, what the API's compile endpoint returns and what adapters submit.
//! Every engine compiles the same optimized plan; a feature an engine cannot
//! express is refused with [`EngineError::Unsupported`] naming the feature
//! and the engine, never dropped.

use crate::{EngineError, RunSpec};
use couler_ir::Dag;
use couler_optimizer::Plan;
use std::borrow::Cow;

/// The engines Couler compiles to.
pub const ENGINES: &[&str] = &["argo", "tekton", "airflow", "kfp"];

/// One compiled manifest: one or more files (an Argo `Workflow`; a Tekton
/// `Pipeline` and `PipelineRun`; an Airflow DAG file; a KFP `PipelineSpec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub files: Vec<ManifestFile>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFile {
    /// A file name for the manifest, e.g. `workflow.yaml` or `couler_diamond.py`.
    pub name: String,
    /// `application/yaml` or `text/x-python`.
    pub media_type: &'static str,
    pub content: String,
}

impl Manifest {
    /// Every file, separated by YAML document markers or file headers.
    pub fn text(&self) -> String {
        match self.files.as_slice() {
            [one] => one.content.clone(),
            files => files
                .iter()
                .map(|f| format!("# {}\n{}", f.name, f.content))
                .collect::<Vec<_>>()
                .join("\n---\n"),
        }
    }
}

/// Compiles `plan` for `engine`; `run` names the run in labels and
/// resource names (a preview uses a placeholder run).
pub fn compile(engine: &str, plan: &Plan, run: &RunSpec) -> Result<Manifest, EngineError> {
    match engine {
        "argo" => crate::argo::compile(plan, run),
        "tekton" => crate::tekton::compile(plan, run),
        "airflow" => crate::airflow::compile(plan, run),
        "kfp" => crate::kfp::compile(plan, run),
        other => Err(EngineError::Other(format!(
            "unknown engine {other:?}; Couler compiles to {}",
            ENGINES.join(", ")
        ))),
    }
}

/// Each engine's name and its verdict on a workflow.
pub type Verdicts = Vec<(&'static str, Result<(), EngineError>)>;

/// Whether `workflow` compiles for every engine, planned as a preview
/// run would be: each engine's name and its verdict, the local engine's
/// last (it compiles nothing, but runs the same plan). Parameters without
/// a default get a placeholder value. For drafts (`couler nl-eval`).
pub fn preview_all(workflow: &couler_ir::Workflow) -> Result<Verdicts, String> {
    let parameters = workflow
        .parameters
        .iter()
        .map(|p| {
            let value = p
                .default
                .as_ref()
                .map(|d| d.to_string())
                .unwrap_or_else(|| "placeholder".to_owned());
            (p.name.clone(), value)
        })
        .collect();
    let facts = couler_optimizer::Facts {
        parameters,
        ..Default::default()
    };
    let plan = couler_optimizer::Pipeline::default()
        .plan(workflow.clone(), &facts, |_, f| f())
        .map_err(|e| e.to_string())?;
    let run = RunSpec::new("preview", "preview", 1);
    let mut out: Verdicts = ENGINES
        .iter()
        .map(|&engine| (engine, compile(engine, &plan, &run).map(|_| ())))
        .collect();
    let tuned = plan
        .workflow
        .steps
        .iter()
        .zip(&plan.steps)
        .find(|(s, p)| s.tune.is_some() && matches!(p.action, couler_optimizer::Action::Run));
    out.push((
        "local",
        match tuned {
            Some((step, _)) => Err(EngineError::Unsupported {
                engine: "local",
                feature: format!("step `{}` uses `tune`", step.name),
            }),
            None => crate::compile::dag(&plan).map(|_| ()),
        },
    ));
    Ok(out)
}

/// The plan's dependency graphs (the planner's when it kept them).
pub(crate) fn dag(plan: &Plan) -> Result<Cow<'_, Dag>, EngineError> {
    plan.dag()
        .map_err(|p| EngineError::Other(format!("the plan's workflow is invalid: {p}")))
}

/// The first running step whose `depends` ask for more than "these steps
/// succeeded" (an outcome, `||` or `!`), refused for an engine that only
/// starts a task after its upstream tasks succeeded; `why` says so.
pub(crate) fn plain_depends_only(
    plan: &Plan,
    dag: &Dag,
    engine: &'static str,
    why: &str,
) -> Result<(), EngineError> {
    let main = plan.workflow.steps.len();
    for (i, planned) in plan.steps.iter().enumerate() {
        if !matches!(planned.action, couler_optimizer::Action::Run) {
            continue;
        }
        let (exit, node) = if i < main {
            (false, i as u32)
        } else {
            (true, (i - main) as u32)
        };
        let step = plan.ir_step(i);
        let rich = dag
            .requirements(exit)
            .of(node)
            .iter()
            .find(|r| !r.expr.is_conjunction_of_successes());
        if let Some(r) = rich {
            let entry = r
                .entry
                .and_then(|e| step.depends.get(e))
                .cloned()
                .unwrap_or_default();
            return Err(EngineError::Unsupported {
                engine,
                feature: format!(
                    "step `{}`: the `depends` entry `{entry}` asks for an outcome or uses `||`/`!`; {why}",
                    step.name
                ),
            });
        }
    }
    Ok(())
}
