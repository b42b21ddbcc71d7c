//! The evaluation harness behind `couler nl-eval`: cases are descriptions
//! with the structure they should produce; each is planned and checked.

use crate::decompose::Decomposition;
use crate::offline::{OfflinePlanner, Plan, PlanError, PlanOptions};
use crate::safety::WarningCode;
use couler_ir::{StepKind, Workflow};
use serde::{Deserialize, Serialize};

/// One description and what it should become.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub expect: Expect,
}

/// Every field is optional; only what is given is checked.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The kinds of each stage in order; a mixed stage is `a|b` (sorted).
    pub stages: Option<Vec<String>>,
    /// The sizes of the parallel groups, in order.
    pub parallel: Option<Vec<usize>>,
    /// The widest fan-out.
    pub fan_out: Option<usize>,
    /// How many subtasks carry a condition.
    pub conditions: Option<usize>,
    /// Bounds on the number of IR steps (exit handlers included).
    pub steps: Option<Bounds>,
    pub schedule: Option<String>,
    /// The highest retry limit of any step.
    pub retry: Option<u32>,
    /// The most GPUs any step (or job replica) asks for.
    pub gpus: Option<u32>,
    /// The most memory any step asks for, in GiB.
    pub memory_gib: Option<u32>,
    /// How many exit-handler steps.
    pub on_exit: Option<usize>,
    /// Warnings that must be reported.
    #[serde(default)]
    pub warnings: Vec<WarningCode>,
    /// The planner must refuse and explain; these words must be named.
    pub unknown: Option<Vec<String>>,
    /// No step may contain these strings (case-insensitive).
    #[serde(default)]
    pub absent: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    pub min: usize,
    pub max: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    pub name: String,
    pub passed: bool,
    pub failures: Vec<String>,
    /// IR steps produced (0 when the planner refused).
    pub steps: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub results: Vec<CaseResult>,
}

impl Report {
    pub fn passed(&self) -> usize {
        self.results.iter().filter(|r| r.passed).count()
    }

    /// Between 0 and 1; 0 for an empty report.
    pub fn pass_rate(&self) -> f64 {
        if self.results.is_empty() {
            return 0.0;
        }
        self.passed() as f64 / self.results.len() as f64
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("invalid cases file: {0}")]
    Parse(String),
    #[error("the cases file has no cases")]
    Empty,
}

pub fn load_cases(yaml: &str) -> Result<Vec<Case>, EvalError> {
    let cases: Vec<Case> =
        serde_saphyr::from_str(yaml).map_err(|e| EvalError::Parse(e.to_string()))?;
    if cases.is_empty() {
        return Err(EvalError::Empty);
    }
    Ok(cases)
}

pub fn run(planner: &OfflinePlanner, cases: &[Case]) -> Report {
    let results = cases.iter().map(|c| check(planner, c)).collect();
    Report { results }
}

/// Plans one case and compares the result with its expectations.
pub fn check(planner: &OfflinePlanner, case: &Case) -> CaseResult {
    let outcome = planner.plan(&case.description, &PlanOptions::default());
    let mut failures = Vec::new();
    let e = &case.expect;
    let steps = match &outcome {
        Ok(plan) => {
            if e.unknown.is_some() {
                failures.push("expected the planner to refuse, but it produced a workflow".into());
            }
            check_plan(plan, e, &mut failures);
            plan.workflow.steps.len() + plan.workflow.on_exit.len()
        }
        Err(err) => {
            match (&e.unknown, err) {
                (Some(words), PlanError::NotUnderstood { unknown, .. }) => {
                    for w in words {
                        if !unknown.iter().any(|u| u.text.contains(w.as_str())) {
                            failures.push(format!("the explanation does not name {w:?}: {err}"));
                        }
                    }
                }
                (Some(_), PlanError::Empty { .. }) => {}
                _ => failures.push(format!("planner failed: {err}")),
            }
            for code in &e.warnings {
                if !err.warnings().iter().any(|w| w.code == *code) {
                    failures.push(format!("missing warning {code:?}"));
                }
            }
            0
        }
    };
    CaseResult {
        name: case.name.clone(),
        passed: failures.is_empty(),
        failures,
        steps,
    }
}

fn check_plan(plan: &Plan, e: &Expect, failures: &mut Vec<String>) {
    let d: &Decomposition = &plan.decomposition;
    let w: &Workflow = &plan.workflow;
    let mut expect = |what: &str, ok: bool, got: String| {
        if !ok {
            failures.push(format!("{what}: got {got}"));
        }
    };
    if let Some(stages) = &e.stages {
        let got: Vec<String> = d.stages.iter().map(|s| s.kinds_label()).collect();
        expect(
            &format!("stages {stages:?}"),
            &got == stages,
            format!("{got:?}"),
        );
    }
    if let Some(parallel) = &e.parallel {
        let got: Vec<usize> = d
            .stages
            .iter()
            .filter(|s| s.is_parallel_group())
            .map(|s| s.tasks.len())
            .collect();
        let groups: Vec<usize> = w.groups.iter().map(|g| g.steps.len()).collect();
        expect(
            &format!("parallel groups {parallel:?}"),
            &got == parallel && &groups == parallel,
            format!("{got:?} (IR groups {groups:?})"),
        );
    }
    if let Some(width) = e.fan_out {
        let got = d
            .subtasks()
            .filter_map(|t| t.fan_out.as_ref())
            .map(|f| f.width())
            .max()
            .unwrap_or(0);
        let ir = w
            .steps
            .iter()
            .filter_map(|s| s.map.as_ref()?.items.as_ref())
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        expect(
            &format!("fan-out width {width}"),
            got == width && ir == width,
            format!("{got} (IR {ir})"),
        );
    }
    if let Some(n) = e.conditions {
        let got = d.subtasks().filter(|t| t.condition.is_some()).count();
        let ir = w.steps.iter().filter(|s| !s.when.is_empty()).count();
        expect(
            &format!("{n} conditions"),
            got == n && ir == n,
            format!("{got} (IR {ir})"),
        );
    }
    if let Some(b) = e.steps {
        let got = w.steps.len() + w.on_exit.len();
        expect(
            &format!("steps in {}..={}", b.min, b.max),
            (b.min..=b.max).contains(&got),
            got.to_string(),
        );
    }
    if let Some(cron) = &e.schedule {
        let got = w.schedule.as_ref().map(|s| s.cron.clone());
        expect(
            &format!("schedule {cron:?}"),
            got.as_deref() == Some(cron.as_str()),
            format!("{got:?}"),
        );
    }
    let all = || w.steps.iter().chain(&w.on_exit);
    if let Some(n) = e.retry {
        let got = all()
            .filter_map(|s| s.retry.as_ref().map(|r| r.limit))
            .max();
        expect(&format!("retry {n}"), got == Some(n), format!("{got:?}"));
    }
    let resources = || {
        all().flat_map(|s| {
            let mut r: Vec<couler_ir::Resources> = s.resources.iter().cloned().collect();
            if let Some(StepKind::Job(j)) = s.kind() {
                r.extend(j.replicas.values().filter_map(|x| x.resources.clone()));
            }
            r
        })
    };
    if let Some(n) = e.gpus {
        let got = resources().filter_map(|r| r.gpu).max();
        expect(&format!("{n} GPUs"), got == Some(n), format!("{got:?}"));
    }
    if let Some(n) = e.memory_gib {
        let got = resources()
            .filter_map(|r| r.memory)
            .map(|m| m.0 >> 30)
            .max();
        expect(
            &format!("{n} GiB"),
            got == Some(u64::from(n)),
            format!("{got:?}"),
        );
    }
    if let Some(n) = e.on_exit {
        expect(
            &format!("{n} exit steps"),
            w.on_exit.len() == n,
            w.on_exit.len().to_string(),
        );
    }
    for code in &e.warnings {
        let ok = plan.warnings.iter().any(|x| x.code == *code);
        expect(
            &format!("warning {code:?}"),
            ok,
            format!(
                "{:?}",
                plan.warnings.iter().map(|x| x.code).collect::<Vec<_>>()
            ),
        );
    }
    if !e.absent.is_empty() {
        let text = serde_json::to_string(w).unwrap_or_default().to_lowercase();
        for s in &e.absent {
            expect(
                &format!("no {s:?} in the workflow"),
                !text.contains(&s.to_lowercase()),
                "present".into(),
            );
        }
    }
}
