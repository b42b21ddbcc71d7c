//! Hyperparameter search strategies (Couler Algorithm 4, in the manner of
//! Katib): grid, random, successive halving and LLM-proposed configurations.
//!
//! [`search`] fixes the configurations a tuned step tries when the run is
//! planned; [`next`] says which trials run next given the outcomes so far.
//! Both are pure and deterministic, so a scheduler that restarts asks again
//! with the same outcomes and gets the same answer. The `tune` block is
//! expected to have passed `couler_ir` validation (bounds, grid steps,
//! halving budgets).

mod llm;
mod space;
#[cfg(test)]
mod tests;

pub use llm::llm_request;
use llm::proposed;
use space::*;

use couler_ir::{Goal, Strategy, Tune};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cmp::{Ordering, Reverse};
use std::collections::BTreeMap;

/// One configuration: hyperparameter name → value as text (what `{{trial.parameters.NAME}}` becomes).
pub type Config = BTreeMap<String, String>;

/// The configurations a search will try, fixed when the run is planned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Search {
    /// The strategy actually used: `llm` falls back to `random`.
    pub strategy: Strategy,
    pub configs: Vec<Config>,
    pub warnings: Vec<String>,
}

/// One trial to run: configuration `config` at `rung` (0 unless halving) with `budget`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trial {
    /// Stable, step-name-safe id: `t3` for config 3 at rung 0, `t3-r1` at rung 1.
    pub id: String,
    pub config: u32,
    pub rung: u32,
    /// `{{trial.budget}}`; `None` unless halving.
    pub budget: Option<u32>,
    pub parameters: Config,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TrialOutcome {
    Succeeded {
        objective: f64,
        /// It came from the cache rather than running.
        cached: bool,
    },
    /// No usable objective, or the step failed.
    Failed { message: String },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// The next batch; never empty.
    Run(Vec<Trial>),
    Done(Summary),
    /// No trial succeeded.
    Failed(String),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The best trial's id.
    pub best: String,
    pub objective: f64,
    pub parameters: Config,
    pub trials: Vec<TrialRow>,
    pub stopped_early: bool,
    /// Why the search stopped, and with which strategy.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrialRow {
    pub id: String,
    pub rung: u32,
    pub budget: Option<u32>,
    pub parameters: Config,
    pub objective: Option<f64>,
    /// `succeeded`, `cached` (its result came from the cache), `failed` or
    /// `not-run`.
    pub status: String,
    pub message: Option<String>,
}

/// The chat request for the `llm` strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmRequest {
    pub system: String,
    pub user: String,
    /// JSON Schema for `response_format`: `{"configurations": [{name: value…}]}`
    /// constrained by the space's types, choices and bounds.
    pub schema: Value,
}

/// Trials per batch when `parallelism` is absent (fewer if `maxTrials` is smaller).
const DEFAULT_PARALLELISM: u32 = 4;
/// Successive halving keeps the best 1/eta of each rung when `eta` is absent.
const DEFAULT_ETA: u32 = 3;
/// Random draws allowed per wanted configuration before giving up on new ones.
const DRAWS_PER_CONFIG: usize = 100;
const SUCCEEDED: &str = "succeeded";
const CACHED: &str = "cached";
const FAILED: &str = "failed";
const NOT_RUN: &str = "not-run";

/// Builds the configurations. `llm_answer` is the raw text the configured LLM
/// answered to [`llm_request`] (`None` when no LLM is configured or the call failed).
pub fn search(tune: &Tune, llm_answer: Option<&str>) -> Search {
    let dims = dims(tune);
    let max = tune.max_trials as usize;
    let mut warnings = Vec::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed(tune));
    let mut configs = Vec::new();
    let mut strategy = tune.strategy;
    match tune.strategy {
        _ if dims.values().any(|d| d.count() == Some(0)) => {
            warnings.push("a hyperparameter has no values to try".into())
        }
        Strategy::Grid => match finite(&dims) {
            Some(points) => configs = grid(&points, max, &mut warnings),
            None => {
                warnings.push("the grid needs a `step` for every double; sampling randomly".into());
                strategy = Strategy::Random;
                sample_into(&dims, max, &mut rng, &mut configs, &mut warnings);
            }
        },
        Strategy::Random | Strategy::Halving => {
            sample_into(&dims, max, &mut rng, &mut configs, &mut warnings)
        }
        Strategy::Llm => {
            configs = proposed(&dims, max, llm_answer, &mut warnings);
            if configs.is_empty() {
                strategy = Strategy::Random;
            } else if configs.len() < max {
                warnings.push(format!(
                    "the LLM proposed {} usable configurations; random ones fill up to maxTrials {max}",
                    configs.len()
                ));
            }
            let wanted = max - configs.len();
            sample_into(&dims, wanted, &mut rng, &mut configs, &mut warnings);
        }
    }
    Search {
        strategy,
        configs,
        warnings,
    }
}

/// What to run next given the outcomes so far (keyed by trial id).
pub fn next(tune: &Tune, search: &Search, outcomes: &BTreeMap<String, TrialOutcome>) -> Next {
    if search.configs.is_empty() {
        return Next::Failed("the search has no configurations to try".into());
    }
    let ladder = Ladder::of(tune, search.strategy);
    let default_batch = tune.max_trials.min(DEFAULT_PARALLELISM);
    let batch = tune.parallelism.unwrap_or(default_batch).max(1) as usize;
    let mut rows: Vec<(u32, TrialRow)> = Vec::new();
    let mut configs: Vec<u32> = (0..search.configs.len() as u32).collect();
    let mut rung = 0;
    loop {
        let trials: Vec<Trial> = configs
            .iter()
            .map(|&c| Trial {
                id: trial_id(c, rung),
                config: c,
                rung,
                budget: ladder.budget(rung),
                parameters: search.configs[c as usize].clone(),
            })
            .collect();
        let start = rows.len();
        rows.extend(
            trials
                .iter()
                .map(|t| (t.config, row(t, outcomes.get(&t.id)))),
        );
        let this_rung = &rows[start..];
        if let Some((_, hit)) = this_rung.iter().find(|(_, r)| reached(tune, r)) {
            let hit = hit.id.clone();
            return finish(tune, search, &ladder, rows, Some(&hit));
        }
        let pending: Vec<Trial> = trials
            .into_iter()
            .filter(|t| !outcomes.contains_key(&t.id))
            .take(batch)
            .collect();
        if !pending.is_empty() {
            return Next::Run(pending);
        }
        match ladder.promote(rung, this_rung, tune.objective.goal) {
            Some(promoted) => (configs, rung) = (promoted, rung + 1),
            None => return finish(tune, search, &ladder, rows, None),
        }
    }
}

// ---- Running trials -------------------------------------------------------

/// Rung budgets: successive halving's, or a single rung without a budget.
struct Ladder {
    budgets: Vec<u32>,
    eta: u32,
}

impl Ladder {
    fn of(tune: &Tune, strategy: Strategy) -> Ladder {
        let Some(h) = tune
            .halving
            .as_ref()
            .filter(|_| strategy == Strategy::Halving)
        else {
            return Ladder {
                budgets: Vec::new(),
                eta: 1,
            };
        };
        let eta = h.eta.unwrap_or(DEFAULT_ETA).max(2);
        let mut budget = h.min_budget.max(1);
        let mut budgets = vec![budget];
        while budget < h.max_budget {
            budget = budget.saturating_mul(eta).min(h.max_budget);
            budgets.push(budget);
        }
        Ladder { budgets, eta }
    }

    fn halving(&self) -> bool {
        !self.budgets.is_empty()
    }

    fn budget(&self, rung: u32) -> Option<u32> {
        self.budgets.get(rung as usize).copied()
    }

    /// The configs promoted out of a finished rung, best first; `None` after
    /// the last rung or when no trial of the rung succeeded.
    fn promote(&self, rung: u32, rows: &[(u32, TrialRow)], goal: Goal) -> Option<Vec<u32>> {
        if rung as usize + 1 >= self.budgets.len() {
            return None;
        }
        let keep = rows.len().div_ceil(self.eta as usize);
        let mut ranked: Vec<(f64, u32)> = rows
            .iter()
            .filter_map(|(c, r)| r.objective.map(|o| (o, *c)))
            .collect();
        ranked.sort_by(|a, b| rank(goal, *a, *b));
        let promoted: Vec<u32> = ranked.into_iter().take(keep).map(|(_, c)| c).collect();
        (!promoted.is_empty()).then_some(promoted)
    }
}

fn trial_id(config: u32, rung: u32) -> String {
    match rung {
        0 => format!("t{config}"),
        _ => format!("t{config}-r{rung}"),
    }
}

fn row(trial: &Trial, outcome: Option<&TrialOutcome>) -> TrialRow {
    let (objective, status, message) = match outcome {
        Some(TrialOutcome::Succeeded { objective, cached }) if objective.is_finite() => (
            Some(*objective),
            if *cached { CACHED } else { SUCCEEDED },
            None,
        ),
        Some(TrialOutcome::Succeeded { objective, .. }) => (
            None,
            FAILED,
            Some(format!("the objective {objective} is not a finite number")),
        ),
        Some(TrialOutcome::Failed { message }) => (None, FAILED, Some(message.clone())),
        None => (None, NOT_RUN, None),
    };
    TrialRow {
        id: trial.id.clone(),
        rung: trial.rung,
        budget: trial.budget,
        parameters: trial.parameters.clone(),
        objective,
        status: status.to_owned(),
        message,
    }
}

fn reached(tune: &Tune, row: &TrialRow) -> bool {
    match (row.objective, tune.objective.target, tune.objective.goal) {
        (Some(o), Some(t), Goal::Minimize) => o <= t,
        (Some(o), Some(t), Goal::Maximize) => o >= t,
        _ => false,
    }
}

/// Better objective first; ties go to the lower config index.
fn rank(goal: Goal, a: (f64, u32), b: (f64, u32)) -> Ordering {
    let by_objective = match goal {
        Goal::Minimize => a.0.total_cmp(&b.0),
        Goal::Maximize => b.0.total_cmp(&a.0),
    };
    by_objective.then(a.1.cmp(&b.1))
}

fn strategy_name(s: Strategy) -> &'static str {
    match s {
        Strategy::Grid => "grid",
        Strategy::Random => "random",
        Strategy::Halving => "halving",
        Strategy::Llm => "llm",
    }
}

fn finish(
    tune: &Tune,
    search: &Search,
    ladder: &Ladder,
    rows: Vec<(u32, TrialRow)>,
    hit: Option<&str>,
) -> Next {
    let goal = tune.objective.goal;
    // The best objective at the highest rung that has one.
    let best = rows
        .iter()
        .filter_map(|(c, r)| r.objective.map(|o| (r, o, *c)))
        .min_by(|a, b| {
            let by_rung = Reverse(a.0.rung).cmp(&Reverse(b.0.rung));
            by_rung.then(rank(goal, (a.1, a.2), (b.1, b.2)))
        });
    let count = |status: &str| rows.iter().filter(|(_, r)| r.status == status).count();
    let (cached, failed) = (count(CACHED), count(FAILED));
    let ran = rows.len() - count(NOT_RUN) - cached;
    let Some((best, objective, config)) = best else {
        let first = rows
            .iter()
            .find_map(|(_, r)| Some((&r.id, r.message.as_ref()?)));
        let first = first.map(|(id, m)| format!("; the first, {id}, failed with: {m}"));
        return Next::Failed(format!(
            "all {ran} trials failed{}",
            first.unwrap_or_default()
        ));
    };
    let strategy = strategy_name(search.strategy);
    let metric = &tune.objective.metric;
    let last_rung = rows.last().map_or(0, |(_, r)| r.rung);
    let mut reason = match hit {
        Some(id) => {
            let op = if goal == Goal::Minimize { "≤" } else { "≥" };
            let target = tune.objective.target.map(double_text).unwrap_or_default();
            format!(
                "{strategy} search stopped early: {id} reached the target {metric} {op} {target}"
            )
        }
        None if ladder.halving() && last_rung as usize + 1 < ladder.budgets.len() => format!(
            "{strategy} search stopped at budget {}: no trial of that rung succeeded",
            ladder.budgets[last_rung as usize]
        ),
        None if ladder.halving() => {
            let budgets: Vec<String> = ladder.budgets.iter().map(u32::to_string).collect();
            format!(
                "{strategy} search finished its {} rungs (budgets {})",
                budgets.len(),
                budgets.join(", ")
            )
        }
        None => format!(
            "{strategy} search tried all {} configurations",
            search.configs.len()
        ),
    };
    reason += &format!("; {ran} trials ran, {failed} failed");
    if cached > 0 {
        reason += &format!(", {cached} came from the cache");
    }
    Next::Done(Summary {
        best: best.id.clone(),
        objective,
        parameters: search.configs[config as usize].clone(),
        stopped_early: hit.is_some(),
        trials: rows.into_iter().map(|(_, r)| r).collect(),
        reason,
    })
}
