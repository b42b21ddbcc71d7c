//! The evaluation harness behind `couler nl-eval`: cases are descriptions
//! with the structure they should produce; each is planned (by the offline
//! planner, or the LLM path in [`llm`]) and checked against what it asks,
//! and every produced workflow against the universal checks: it validates,
//! compiles for every engine (or is refused by name), says what each
//! generic step needs filled in, and has no step nobody asked for.

pub mod llm;
mod stages;

use crate::decompose::{Decomposition, TaskKind};
use crate::library::GENERIC_TEMPLATE;
use crate::offline::{OfflinePlanner, Plan, PlanError, PlanOptions, StepExplanation};
use crate::safety::{Warning, WarningCode};
use couler_ir::{StepKind, Workflow};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// One description and what it should become.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    /// Where the description was paraphrased from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<Lang>,
    pub description: String,
    #[serde(default)]
    pub expect: Expect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Zh,
}

/// Every field is optional; only what is given is checked.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Each stage's tokens in order; several in one stage sorted and
    /// joined with `|`. A token matches a step whose kind it is, or one of
    /// the words of its name (see [`stages`]).
    pub stages: Option<Vec<String>>,
    /// The sizes of the parallel groups, in order.
    pub parallel: Option<Vec<usize>>,
    /// The widest fan-out.
    pub fan_out: Option<usize>,
    /// How many subtasks carry a condition.
    pub conditions: Option<usize>,
    /// Bounds on the number of steps (exit handlers included): exactly
    /// what was asked for.
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
    /// The planner must refuse and explain; these words must be named
    /// (`[]`: a refusal, whatever it names).
    pub unknown: Option<Vec<String>>,
    /// No step may contain these strings (case-insensitive).
    #[serde(default)]
    pub absent: Vec<String>,
    /// The model family of the training steps: one for all of them, or
    /// one per training step in order.
    pub family: Option<Families>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Families {
    One(String),
    Each(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    pub min: usize,
    pub max: usize,
}

/// What a failed check was about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Refused a description it should have planned.
    Refused,
    /// Planned a description it should have refused.
    NotRefused,
    /// Refused without naming the words it should have.
    Unknown,
    Stages,
    Parallel,
    FanOut,
    Conditions,
    Steps,
    Schedule,
    Retry,
    Gpus,
    Memory,
    OnExit,
    Warnings,
    Absent,
    Family,
    /// The workflow does not validate.
    Invalid,
    /// An engine failed on it other than by refusing a named feature.
    Compile,
    /// A generic step without a warning naming what to fill in.
    GenericWarning,
    /// A step nobody asked for.
    Invented,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Refused => "refused",
            Category::NotRefused => "not_refused",
            Category::Unknown => "unknown",
            Category::Stages => "stages",
            Category::Parallel => "parallel",
            Category::FanOut => "fan_out",
            Category::Conditions => "conditions",
            Category::Steps => "steps",
            Category::Schedule => "schedule",
            Category::Retry => "retry",
            Category::Gpus => "gpus",
            Category::Memory => "memory",
            Category::OnExit => "on_exit",
            Category::Warnings => "warnings",
            Category::Absent => "absent",
            Category::Family => "family",
            Category::Invalid => "invalid",
            Category::Compile => "compile",
            Category::GenericWarning => "generic_warning",
            Category::Invented => "invented",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub category: Category,
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.category, self.message)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<Lang>,
    pub passed: bool,
    pub failures: Vec<Failure>,
    /// Steps produced (0 when the planner refused).
    pub steps: usize,
    /// Steps produced that nobody asked for.
    pub invented: usize,
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

    /// Steps produced that nobody asked for, in all cases.
    pub fn invented(&self) -> usize {
        self.results.iter().map(|r| r.invented).sum()
    }

    /// How many cases failed a check of each category.
    pub fn by_category(&self) -> BTreeMap<Category, usize> {
        let mut out = BTreeMap::new();
        for r in &self.results {
            let mut seen: Vec<Category> = r.failures.iter().map(|f| f.category).collect();
            seen.sort_unstable();
            seen.dedup();
            for c in seen {
                *out.entry(c).or_insert(0) += 1;
            }
        }
        out
    }

    /// One line: the pass rate, invented steps and failures by category.
    pub fn summary(&self) -> String {
        let categories: Vec<String> = self
            .by_category()
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        format!(
            "pass rate: {}/{} = {:.1}%; invented steps: {}; failures by category: {}",
            self.passed(),
            self.results.len(),
            self.pass_rate() * 100.0,
            self.invented(),
            if categories.is_empty() {
                "none".to_owned()
            } else {
                categories.join(", ")
            }
        )
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

/// An engine's verdict on a workflow: it compiled, it refused a feature
/// by name (fine: the evaluator accepts a clear refusal), or it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Compiled,
    Refused(String),
    Failed(String),
}

/// Compiles a workflow for every engine: each engine's name and verdict.
/// The caller brings the engines (this crate does not depend on them).
pub type Compiler<'a> = &'a dyn Fn(&Workflow) -> Vec<(String, Verdict)>;

/// What the universal checks need besides the workflow.
#[derive(Clone, Copy, Default)]
pub struct Checks<'a> {
    pub compile: Option<Compiler<'a>>,
}

/// A produced workflow and how it came about, from either planner.
pub struct Produced<'a> {
    pub decomposition: &'a Decomposition,
    pub workflow: &'a Workflow,
    pub explanations: &'a [StepExplanation],
    pub warnings: &'a [Warning],
}

impl<'a> From<&'a Plan> for Produced<'a> {
    fn from(p: &'a Plan) -> Produced<'a> {
        Produced {
            decomposition: &p.decomposition,
            workflow: &p.workflow,
            explanations: &p.explanations,
            warnings: &p.warnings,
        }
    }
}

pub fn run(planner: &OfflinePlanner, cases: &[Case], checks: Checks<'_>) -> Report {
    let results = cases.iter().map(|c| check(planner, c, checks)).collect();
    Report { results }
}

/// Plans one case with the offline planner and checks the result.
pub fn check(planner: &OfflinePlanner, case: &Case, checks: Checks<'_>) -> CaseResult {
    let outcome = planner.plan(&case.description, &PlanOptions::default());
    judge(case, outcome.as_ref().map(Produced::from), checks)
}

/// Checks a planner's outcome against the case.
pub fn judge(
    case: &Case,
    outcome: Result<Produced<'_>, &PlanError>,
    checks: Checks<'_>,
) -> CaseResult {
    let mut failures = Vec::new();
    let e = &case.expect;
    let (steps, invented) = match outcome {
        Ok(p) => {
            if e.unknown.is_some() {
                failures.push(Failure {
                    category: Category::NotRefused,
                    message: "expected a refusal, but a workflow was produced".into(),
                });
            }
            let invented = universal(&p, e, checks, &mut failures);
            check_plan(&p, e, &mut failures);
            (p.workflow.steps.len() + p.workflow.on_exit.len(), invented)
        }
        Err(err) => {
            match (&e.unknown, err) {
                (Some(words), PlanError::NotUnderstood { unknown, .. }) => {
                    for w in words {
                        if !unknown.iter().any(|u| u.text.contains(w.as_str())) {
                            failures.push(Failure {
                                category: Category::Unknown,
                                message: format!("the refusal does not name {w:?}: {err}"),
                            });
                        }
                    }
                }
                (Some(words), PlanError::Empty { .. }) if words.is_empty() => {}
                (Some(words), PlanError::Policy(_)) if words.is_empty() => {}
                (Some(_), PlanError::Empty { .. }) => {}
                _ => failures.push(Failure {
                    category: Category::Refused,
                    message: format!("refused: {err}"),
                }),
            }
            for code in &e.warnings {
                if !err.warnings().iter().any(|w| w.code == *code) {
                    failures.push(Failure {
                        category: Category::Warnings,
                        message: format!("missing warning {code:?}"),
                    });
                }
            }
            (0, 0)
        }
    };
    CaseResult {
        name: case.name.clone(),
        lang: case.lang,
        passed: failures.is_empty(),
        failures,
        steps,
        invented,
    }
}

/// The checks every produced workflow gets; returns the invented steps.
fn universal(
    p: &Produced<'_>,
    e: &Expect,
    checks: Checks<'_>,
    failures: &mut Vec<Failure>,
) -> usize {
    let w = p.workflow;
    let mut fail = |category, message: String| failures.push(Failure { category, message });
    if let Err(problems) = couler_ir::validate(w, &couler_ir::Limits::default()) {
        fail(
            Category::Invalid,
            format!("the workflow does not validate: {problems:?}"),
        );
    }
    if let Some(compile) = checks.compile {
        for (engine, verdict) in compile(w) {
            if let Verdict::Failed(message) = verdict {
                fail(Category::Compile, format!("{engine}: {message}"));
            }
        }
    }
    for x in p
        .explanations
        .iter()
        .filter(|x| x.template == GENERIC_TEMPLATE)
    {
        let named = p.warnings.iter().any(|warning| {
            warning.code == WarningCode::Incomplete
                && warning.message.contains(&x.step)
                && warning.message.contains("image")
                && warning.message.contains("command")
        });
        if !named {
            fail(
                Category::GenericWarning,
                format!(
                    "generic step {} has no warning saying what to fill in",
                    x.step
                ),
            );
        }
    }
    // A step is asked for when words of the description ask for it; the
    // LLM's subtasks carry no spans, so its words must be its own.
    let subtasks: Vec<_> = p
        .decomposition
        .subtasks()
        .chain(&p.decomposition.on_exit)
        .collect();
    let unasked = subtasks
        .iter()
        .filter(|t| t.span.is_none() && t.text.trim().is_empty())
        .count();
    let produced = w.steps.len() + w.on_exit.len();
    let excess = e.steps.map_or(0, |b| produced.saturating_sub(b.max));
    let invented = unasked.max(excess);
    if invented > 0 {
        fail(
            Category::Invented,
            format!("{invented} step(s) nobody asked for ({produced} produced)"),
        );
    }
    invented
}

fn check_plan(p: &Produced<'_>, e: &Expect, failures: &mut Vec<Failure>) {
    let d = p.decomposition;
    let w = p.workflow;
    let mut expect = |category: Category, what: &str, ok: bool, got: String| {
        if !ok {
            failures.push(Failure {
                category,
                message: format!("{what}: got {got}"),
            });
        }
    };
    if let Some(want) = &e.stages {
        let (ok, got) = stages::matches(want, d, p.explanations);
        expect(Category::Stages, &format!("stages {want:?}"), ok, got);
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
            Category::Parallel,
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
            Category::FanOut,
            &format!("fan-out width {width}"),
            got == width && ir == width,
            format!("{got} (IR {ir})"),
        );
    }
    if let Some(n) = e.conditions {
        let got = d.subtasks().filter(|t| t.condition.is_some()).count();
        let ir = w.steps.iter().filter(|s| !s.when.is_empty()).count();
        expect(
            Category::Conditions,
            &format!("{n} conditions"),
            got == n && ir == n,
            format!("{got} (IR {ir})"),
        );
    }
    if let Some(b) = e.steps {
        let got = w.steps.len() + w.on_exit.len();
        expect(
            Category::Steps,
            &format!("steps in {}..={}", b.min, b.max),
            (b.min..=b.max).contains(&got),
            got.to_string(),
        );
    }
    if let Some(cron) = &e.schedule {
        let got = w.schedule.as_ref().map(|s| s.cron.clone());
        expect(
            Category::Schedule,
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
        expect(
            Category::Retry,
            &format!("retry {n}"),
            got == Some(n),
            format!("{got:?}"),
        );
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
        expect(
            Category::Gpus,
            &format!("{n} GPUs"),
            got == Some(n),
            format!("{got:?}"),
        );
    }
    if let Some(n) = e.memory_gib {
        let got = resources()
            .filter_map(|r| r.memory)
            .map(|m| m.0 >> 30)
            .max();
        expect(
            Category::Memory,
            &format!("{n} GiB"),
            got == Some(u64::from(n)),
            format!("{got:?}"),
        );
    }
    if let Some(n) = e.on_exit {
        expect(
            Category::OnExit,
            &format!("{n} exit steps"),
            w.on_exit.len() == n,
            w.on_exit.len().to_string(),
        );
    }
    for code in &e.warnings {
        let ok = p.warnings.iter().any(|x| x.code == *code);
        expect(
            Category::Warnings,
            &format!("warning {code:?}"),
            ok,
            format!(
                "{:?}",
                p.warnings.iter().map(|x| x.code).collect::<Vec<_>>()
            ),
        );
    }
    if !e.absent.is_empty() {
        // What the steps are, not the user's words they quote nor the
        // program a library template runs ("skip evaluation" is met by a
        // fine-tuning whose script reports its eval loss).
        let steps: Vec<_> = w
            .steps
            .iter()
            .chain(&w.on_exit)
            .cloned()
            .map(|mut s| {
                s.description = None;
                if let Some(script) = &mut s.script {
                    script.source.clear();
                }
                s
            })
            .collect();
        let text = serde_json::to_string(&steps)
            .unwrap_or_default()
            .to_lowercase();
        for s in &e.absent {
            expect(
                Category::Absent,
                &format!("no {s:?} in the workflow"),
                !text.contains(&s.to_lowercase()),
                "present".into(),
            );
        }
    }
    if let Some(want) = &e.family {
        let got = families(d);
        let ok = match want {
            Families::One(f) => !got.is_empty() && got.iter().all(|g| g.as_deref() == Some(f)),
            Families::Each(fs) => {
                got.len() == fs.len() && got.iter().zip(fs).all(|(g, f)| g.as_deref() == Some(f))
            }
        };
        expect(
            Category::Family,
            &format!("family {want:?}"),
            ok,
            format!("{got:?}"),
        );
    }
}

/// The model family of each training subtask, in order.
pub fn families(d: &Decomposition) -> Vec<Option<String>> {
    d.subtasks()
        .filter(|t| matches!(t.kind, TaskKind::Train | TaskKind::DistributedTrain))
        .map(|t| {
            t.model
                .as_deref()
                .and_then(crate::offline::kinds::family)
                .map(str::to_owned)
        })
        .collect()
}
