//! Hyperparameter search strategies (Couler Algorithm 4, in the manner of
//! Katib): grid, random, successive halving and LLM-proposed configurations.
//!
//! [`search`] fixes the configurations a tuned step tries when the run is
//! planned; [`next`] says which trials run next given the outcomes so far.
//! Both are pure and deterministic, so a scheduler that restarts asks again
//! with the same outcomes and gets the same answer. The `tune` block is
//! expected to have passed `couler_ir` validation (bounds, grid steps,
//! halving budgets).

use couler_ir::{Goal, ParamKind, SearchParam, Strategy, Tune};
use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet};

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
    },
    /// No usable objective, or the step failed.
    Failed {
        message: String,
    },
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
    /// `succeeded`, `failed` or `not-run`.
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

/// The chat request for the `llm` strategy.
pub fn llm_request(tune: &Tune) -> LlmRequest {
    let system = "You are an expert in hyperparameter tuning of machine-learning models. \
        Given a data set, a model and a search space, propose configurations that are likely \
        to do well and that together cover the most promising region. \
        Answer with JSON only, no prose."
        .to_owned();
    let mut lines = Vec::new();
    if let Some(d) = &tune.data_card {
        let mut line = format!("Data set: {}", d.name);
        let details = [("type", &d.kind), ("size", &d.size), ("metric", &d.metric)];
        for (what, value) in details {
            if let Some(v) = value {
                line += &format!("; {what}: {v}");
            }
        }
        if !d.labels.is_empty() {
            line += &format!("; labels: {}", d.labels.join(", "));
        }
        lines.push(line);
    }
    if let Some(m) = &tune.model_card {
        let structure = m.structure.as_deref().map(|s| format!("; structure: {s}"));
        lines.push(format!(
            "Model: {}{}",
            m.name,
            structure.unwrap_or_default()
        ));
    }
    lines.push("Search space:".into());
    for (name, p) in &tune.space {
        lines.push(format!("- {name}: {}", describe(p)));
    }
    let o = &tune.objective;
    let target = o.target.map(|t| format!(" (target {})", double_text(t)));
    let goal = match o.goal {
        Goal::Minimize => "minimize",
        Goal::Maximize => "maximize",
    };
    lines.push(format!(
        "Objective: {goal} `{}`{}.",
        o.metric,
        target.unwrap_or_default()
    ));
    let example: Vec<String> = tune.space.keys().map(|n| format!("\"{n}\": …")).collect();
    lines.push(format!(
        "Propose {} distinct configurations as {{\"configurations\": [{{{}}}]}}.",
        tune.max_trials,
        example.join(", ")
    ));
    let properties: Map<String, Value> = tune
        .space
        .iter()
        .map(|(name, p)| (name.clone(), param_schema(p)))
        .collect();
    let schema = json!({
        "type": "object",
        "properties": {
            "configurations": {
                "type": "array",
                "minItems": 1,
                "maxItems": tune.max_trials,
                "items": {
                    "type": "object",
                    "properties": properties,
                    "required": tune.space.keys().collect::<Vec<_>>(),
                    "additionalProperties": false,
                },
            },
        },
        "required": ["configurations"],
        "additionalProperties": false,
    });
    LlmRequest {
        system,
        user: lines.join("\n"),
        schema,
    }
}

fn describe(p: &SearchParam) -> String {
    let (min, max) = (p.min.unwrap_or(0.0), p.max.unwrap_or(0.0));
    let step = p.step.map(|s| format!(", step {}", double_text(s)));
    let log = if p.log { ", log scale" } else { "" };
    let range = format!(
        "[{}, {}]{}{log}",
        double_text(min),
        double_text(max),
        step.unwrap_or_default()
    );
    match p.kind {
        ParamKind::Int => format!("integer in {range}"),
        ParamKind::Double => format!("number in {range}"),
        ParamKind::Categorical => {
            let values: Vec<String> = p.values.iter().map(|v| format!("{:?}", v.0)).collect();
            format!("one of {}", values.join(", "))
        }
    }
}

fn param_schema(p: &SearchParam) -> Value {
    let (min, max) = (p.min.unwrap_or(0.0), p.max.unwrap_or(0.0));
    match p.kind {
        ParamKind::Categorical => json!({"type": "string", "enum": p.values}),
        ParamKind::Int => json!({"type": "integer", "minimum": min as i64, "maximum": max as i64}),
        ParamKind::Double => json!({"type": "number", "minimum": min, "maximum": max}),
    }
}

// ---- The search space -----------------------------------------------------

type Rng = Xoshiro256PlusPlus;

/// One dimension of the space, ready to enumerate, sample and check.
enum Dim {
    Finite(Points),
    /// A double without `step`.
    Range {
        min: f64,
        max: f64,
        log: bool,
    },
}

/// The values of a finite dimension, by index.
enum Points {
    /// Categorical: the distinct values, as written.
    Values(Vec<String>),
    Grid(Grid),
}

/// Int, or double with `step`: `min + i·step` for `i < count`.
struct Grid {
    min: f64,
    max: f64,
    step: f64,
    count: u64,
    int: bool,
    log: bool,
}

fn dims(tune: &Tune) -> BTreeMap<&str, Dim> {
    let dims = tune
        .space
        .iter()
        .map(|(name, p)| (name.as_str(), Dim::new(p)));
    dims.collect()
}

impl Dim {
    fn new(p: &SearchParam) -> Dim {
        let min = p.min.unwrap_or(0.0);
        let max = p.max.unwrap_or(min).max(min);
        let log = p.log && p.kind == ParamKind::Double && min > 0.0;
        match (p.kind, p.step) {
            (ParamKind::Categorical, _) => {
                let mut seen = BTreeSet::new();
                let values = p.values.iter().filter(|v| seen.insert(&v.0));
                Dim::Finite(Points::Values(values.map(|v| v.0.clone()).collect()))
            }
            (ParamKind::Double, None) => Dim::Range { min, max, log },
            (kind, step) => {
                let int = kind == ParamKind::Int;
                // An int step below 1 would only repeat integers.
                let step = step
                    .unwrap_or(1.0)
                    .max(if int { 1.0 } else { f64::MIN_POSITIVE });
                // The tolerance keeps `max` when (max - min) / step lands just below a whole number.
                let count = (((max - min) / step + 1e-9).floor() as u64).saturating_add(1);
                let grid = Grid {
                    min,
                    max,
                    step,
                    count,
                    int,
                    log,
                };
                Dim::Finite(Points::Grid(grid))
            }
        }
    }

    fn count(&self) -> Option<u64> {
        match self {
            Dim::Finite(points) => Some(points.count()),
            Dim::Range { .. } => None,
        }
    }

    fn sample(&self, rng: &mut Rng) -> String {
        match self {
            Dim::Finite(points) => points.sample(rng),
            Dim::Range { min, max, log } => double_text(continuous(*min, *max, *log, rng)),
        }
    }

    /// The text of a proposed value, or why it does not fit.
    fn check(&self, value: &Value) -> Result<String, String> {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => return Err(format!("has the non-scalar value {other}")),
        };
        let (min, max, int) = match self {
            Dim::Finite(Points::Values(values)) if values.contains(&text) => return Ok(text),
            Dim::Finite(Points::Values(values)) => {
                return Err(format!("{text:?} is not one of {values:?}"));
            }
            Dim::Finite(Points::Grid(g)) => (g.min, g.max, g.int),
            Dim::Range { min, max, .. } => (*min, *max, false),
        };
        let x = text.trim().parse::<f64>().ok().filter(|x| x.is_finite());
        let x = x.ok_or_else(|| format!("{text:?} is not a number"))?;
        if int && x.fract() != 0.0 {
            Err(format!("{text} is not a whole number"))
        } else if !(min..=max).contains(&x) {
            Err(format!(
                "{text} is outside [{}, {}]",
                double_text(min),
                double_text(max)
            ))
        } else if int {
            Ok(int_text(x))
        } else {
            Ok(double_text(x))
        }
    }
}

impl Points {
    fn count(&self) -> u64 {
        match self {
            Points::Values(values) => values.len() as u64,
            Points::Grid(g) => g.count,
        }
    }

    fn value(&self, i: u64) -> String {
        match self {
            Points::Values(values) => values[i as usize].clone(),
            Points::Grid(g) if g.int => int_text((g.min + i as f64 * g.step).round().min(g.max)),
            Points::Grid(g) => double_text(grid_value(g.min, g.step, i).min(g.max)),
        }
    }

    fn sample(&self, rng: &mut Rng) -> String {
        let i = match self {
            // A log-scaled grid is sampled log-uniformly, then snapped to the nearest point.
            Points::Grid(g) if g.log => {
                let x = continuous(g.min, g.max, true, rng);
                (((x - g.min) / g.step).round() as u64).min(g.count - 1)
            }
            _ => rng.random_range(0..self.count()),
        };
        self.value(i)
    }
}

/// Uniform (or log-uniform) in `[min, max]`.
fn continuous(min: f64, max: f64, log: bool, rng: &mut Rng) -> f64 {
    let u: f64 = rng.random();
    let x = if log {
        (min.ln() + u * (max.ln() - min.ln())).exp()
    } else {
        min + u * (max - min)
    };
    x.clamp(min, max)
}

/// `min + i·step` without accumulated noise: rounded to the decimals of `min` and `step`.
fn grid_value(min: f64, step: f64, i: u64) -> f64 {
    let x = min + i as f64 * step;
    let decimals = |v: f64| v.to_string().split_once('.').map_or(0, |(_, f)| f.len());
    let places = decimals(min).max(decimals(step));
    // Both operands of the division are exact below these bounds, so the
    // quotient is the double nearest the decimal the user would write.
    let scaled = (x * 10f64.powi(places as i32)).round();
    if places > 22 || scaled.abs() >= 2f64.powi(53) {
        return x;
    }
    (scaled / 10f64.powi(places as i32)) + 0.0
}

fn int_text(x: f64) -> String {
    (x as i64).to_string()
}

/// The shortest text that reads back as `x` (`0.001`, not `1e-3` or `0.0010000000000000002`).
fn double_text(x: f64) -> String {
    (x + 0.0).to_string()
}

/// `tune.seed`, or else a hash of the search space: the same space always
/// explores the same points, whichever workflow or run it appears in.
fn seed(tune: &Tune) -> u64 {
    tune.seed.unwrap_or_else(|| {
        let space = serde_json::to_string(&tune.space).expect("IR types always serialize");
        fnv1a(space.as_bytes())
    })
}

/// FNV-1a: stable across Rust releases, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The dimensions when every one is finite.
fn finite<'a>(dims: &'a BTreeMap<&'a str, Dim>) -> Option<Vec<(&'a str, &'a Points)>> {
    dims.iter()
        .map(|(name, d)| match d {
            Dim::Finite(points) => Some((*name, points)),
            Dim::Range { .. } => None,
        })
        .collect()
}

fn size(points: &[(&str, &Points)]) -> u128 {
    points
        .iter()
        .fold(1u128, |n, (_, p)| n.saturating_mul(p.count() as u128))
}

/// The `k`-th point of the product, the last dimension varying fastest.
fn config_at(points: &[(&str, &Points)], mut k: u128) -> Config {
    let mut config = Config::new();
    for (name, p) in points.iter().rev() {
        let count = p.count() as u128;
        config.insert(name.to_string(), p.value((k % count) as u64));
        k /= count;
    }
    config
}

fn grid(points: &[(&str, &Points)], max: usize, warnings: &mut Vec<String>) -> Vec<Config> {
    let size = size(points);
    let n = size.min(max as u128);
    if size > n {
        warnings.push(format!(
            "the grid has {size} points but maxTrials is {max}: the last {} are dropped",
            size - n
        ));
    }
    (0..n).map(|k| config_at(points, k)).collect()
}

/// Adds up to `wanted` random configurations not already in `configs`.
fn sample_into(
    dims: &BTreeMap<&str, Dim>,
    wanted: usize,
    rng: &mut Rng,
    configs: &mut Vec<Config>,
    warnings: &mut Vec<String>,
) {
    let mut seen: BTreeSet<Config> = configs.iter().cloned().collect();
    let goal = configs.len() + wanted;
    // A space no bigger than the goal is enumerated, so every point is found.
    if let Some(points) = finite(dims)
        && size(&points) <= goal as u128
    {
        let size = size(&points);
        let mut rest: Vec<Config> = (0..size)
            .map(|k| config_at(&points, k))
            .filter(|c| !seen.contains(c))
            .collect();
        rest.shuffle(rng);
        configs.extend(rest);
        if configs.len() < goal {
            warnings.push(format!(
                "the search space has only {size} configurations; {} trials instead of {goal}",
                configs.len()
            ));
        }
        return;
    }
    let mut draws = 0;
    while configs.len() < goal && draws < DRAWS_PER_CONFIG * wanted {
        draws += 1;
        let config: Config = dims
            .iter()
            .map(|(name, d)| (name.to_string(), d.sample(rng)))
            .collect();
        if seen.insert(config.clone()) {
            configs.push(config);
        }
    }
    if configs.len() < goal {
        warnings.push(format!(
            "only {} distinct configurations found in {draws} random draws; {goal} wanted",
            configs.len()
        ));
    }
}

/// The LLM's usable configurations (at most `max`), with a warning for each problem.
fn proposed(
    dims: &BTreeMap<&str, Dim>,
    max: usize,
    answer: Option<&str>,
    warnings: &mut Vec<String>,
) -> Vec<Config> {
    let unusable =
        |why: &str| format!("the LLM's answer was not usable: {why}; using random search");
    let list = match answer.map(parse_answer) {
        None => {
            warnings.push("no LLM configured; using random search".into());
            return Vec::new();
        }
        Some(Err(why)) => {
            warnings.push(unusable(&why));
            return Vec::new();
        }
        Some(Ok(list)) => list,
    };
    let mut configs: Vec<Config> = Vec::new();
    for (i, value) in list.iter().enumerate() {
        match check(dims, value) {
            Ok(c) if configs.contains(&c) => warnings.push(format!(
                "LLM configuration {} repeats an earlier one; dropped",
                i + 1
            )),
            Ok(c) => configs.push(c),
            Err(why) => warnings.push(format!("LLM configuration {} dropped: {why}", i + 1)),
        }
    }
    if configs.len() > max {
        warnings.push(format!(
            "the LLM proposed {} usable configurations; only the first {max} (maxTrials) run",
            configs.len()
        ));
        configs.truncate(max);
    }
    if configs.is_empty() {
        let why = match list.len() {
            0 => "it proposed no configurations".to_owned(),
            n => format!("none of its {n} configurations fits the search space"),
        };
        warnings.push(unusable(&why));
    }
    configs
}

/// The proposed configurations in an answer: the JSON may stand alone, sit in
/// a fenced block or be surrounded by prose.
fn parse_answer(answer: &str) -> Result<Vec<Value>, String> {
    let fenced = answer
        .split("```")
        .nth(1)
        .map(|block| block.split_once('\n').map_or(block, |(_, body)| body));
    let braces = match (answer.find('{'), answer.rfind('}')) {
        (Some(a), Some(b)) if a < b => Some(&answer[a..=b]),
        _ => None,
    };
    let json = [Some(answer), fenced, braces]
        .into_iter()
        .flatten()
        .find_map(|text| serde_json::from_str::<Value>(text.trim()).ok());
    match json {
        Some(Value::Object(mut fields)) => match fields.remove("configurations") {
            Some(Value::Array(list)) => Ok(list),
            _ => Err("the JSON has no `configurations` list".into()),
        },
        Some(Value::Array(list)) => Ok(list),
        Some(_) => Err("the JSON is not an object with `configurations`".into()),
        None => Err("it contains no JSON".into()),
    }
}

/// A proposed configuration as text, or every way it misses the space.
fn check(dims: &BTreeMap<&str, Dim>, value: &Value) -> Result<Config, String> {
    let Value::Object(fields) = value else {
        return Err("it is not a JSON object".into());
    };
    let mut config = Config::new();
    let mut problems = Vec::new();
    for (name, dim) in dims {
        match fields.get(*name).map(|v| dim.check(v)) {
            Some(Ok(text)) => {
                config.insert(name.to_string(), text);
            }
            Some(Err(why)) => problems.push(format!("{name} {why}")),
            None => problems.push(format!("{name} is missing")),
        }
    }
    for name in fields.keys().filter(|n| !dims.contains_key(n.as_str())) {
        problems.push(format!("{name} is not in the search space"));
    }
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(problems.join("; "))
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
        Some(TrialOutcome::Succeeded { objective }) if objective.is_finite() => {
            (Some(*objective), SUCCEEDED, None)
        }
        Some(TrialOutcome::Succeeded { objective }) => (
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
    let ran = rows.iter().filter(|(_, r)| r.status != NOT_RUN).count();
    let failed = rows.iter().filter(|(_, r)| r.status == FAILED).count();
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
    Next::Done(Summary {
        best: best.id.clone(),
        objective,
        parameters: search.configs[config as usize].clone(),
        stopped_early: hit.is_some(),
        trials: rows.into_iter().map(|(_, r)| r).collect(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A validated tune block on a step that reports `loss`.
    fn tune(block: &str) -> Tune {
        let doc = format!(
            "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - name: train\n    container: {{image: x}}\n    outputs: {{parameters: [{{name: loss, path: /tmp/loss}}]}}\n    tune: {block}\n"
        );
        let workflow = couler_ir::load(&doc, couler_ir::Format::Yaml).unwrap();
        workflow.steps[0].tune.clone().unwrap()
    }

    /// Drives a search like a scheduler: every batch, then its outcomes.
    fn drive(
        tune: &Tune,
        search: &Search,
        objective: impl Fn(&Trial) -> TrialOutcome,
    ) -> (Vec<Vec<Trial>>, Next) {
        let mut outcomes = BTreeMap::new();
        let mut batches = Vec::new();
        loop {
            match next(tune, search, &outcomes) {
                Next::Run(batch) => {
                    assert!(!batch.is_empty() && batches.len() < 100);
                    for t in &batch {
                        outcomes.insert(t.id.clone(), objective(t));
                    }
                    batches.push(batch);
                }
                done => return (batches, done),
            }
        }
    }

    fn number(t: &Trial, name: &str) -> f64 {
        t.parameters[name].parse().unwrap()
    }

    fn ok(objective: f64) -> TrialOutcome {
        TrialOutcome::Succeeded { objective }
    }

    fn summary(next: Next) -> Summary {
        match next {
            Next::Done(s) => s,
            other => panic!("expected Done, got {other:?}"),
        }
    }

    const SMALL_GRID: &str = "{space: {a: {type: int, min: 1, max: 3}, b: {type: categorical, values: [x, y]}}, objective: {metric: loss, goal: minimize}, strategy: grid, maxTrials: MAX}";

    #[test]
    fn grid_enumerates_the_product_in_order() {
        let s = search(&tune(&SMALL_GRID.replace("MAX", "10")), None);
        assert_eq!(s.strategy, Strategy::Grid);
        assert_eq!(s.configs.len(), 6);
        assert!(s.warnings.is_empty());
        let text = |c: &Config| format!("{}{}", c["a"], c["b"]);
        let all: Vec<String> = s.configs.iter().map(text).collect();
        assert_eq!(all, ["1x", "1y", "2x", "2y", "3x", "3y"]);
    }

    #[test]
    fn a_grid_larger_than_max_trials_is_truncated_with_a_warning() {
        let s = search(&tune(&SMALL_GRID.replace("MAX", "4")), None);
        assert_eq!(s.configs.len(), 4);
        assert_eq!(s.configs[3]["a"], "2");
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].contains("6 points") && s.warnings[0].contains("last 2"));
    }

    #[test]
    fn float_grid_values_print_cleanly() {
        let values = |space: &str| -> Vec<String> {
            let t = tune(&format!(
                "{{space: {{lr: {space}}}, objective: {{metric: loss, goal: minimize}}, strategy: grid, maxTrials: 100}}"
            ));
            search(&t, None)
                .configs
                .iter()
                .map(|c| c["lr"].clone())
                .collect()
        };
        assert_eq!(
            values("{type: double, min: 0.1, max: 0.3, step: 0.1}"),
            ["0.1", "0.2", "0.3"]
        );
        let lr = values("{type: double, min: 0.001, max: 0.1, step: 0.011}");
        assert_eq!(lr.len(), 10);
        assert_eq!((lr[3].as_str(), lr[9].as_str()), ("0.034", "0.1"));
        assert!(lr.iter().all(|v| v.len() <= 5), "{lr:?}");
        assert_eq!(
            values("{type: int, min: 0, max: 10, step: 5}"),
            ["0", "5", "10"]
        );
    }

    const SPACE: &str = "{lr: {type: double, min: 0.001, max: 0.1, log: true}, layers: {type: int, min: 1, max: 8}, act: {type: categorical, values: [relu, tanh]}}";

    /// Random search over [`SPACE`], 20 trials, plus `extra` fields.
    fn random(extra: &str) -> Tune {
        tune(&format!(
            "{{space: {SPACE}, objective: {{metric: loss, goal: minimize}}, maxTrials: 20{extra}}}"
        ))
    }

    #[test]
    fn random_is_reproducible_and_within_bounds() {
        let with_seed = |seed: &str| search(&random(seed), None);
        let a = with_seed(", seed: 7");
        assert_eq!(a, with_seed(", seed: 7"));
        assert_ne!(a.configs, with_seed(", seed: 8").configs);
        // Without a seed, the space decides: still reproducible.
        assert_eq!(with_seed(""), with_seed(""));
        assert_eq!(a.strategy, Strategy::Random);
        assert_eq!(a.configs.len(), 20);
        assert_eq!(a.configs.iter().collect::<BTreeSet<_>>().len(), 20);
        for c in &a.configs {
            let lr: f64 = c["lr"].parse().unwrap();
            assert!((0.001..=0.1).contains(&lr), "{c:?}");
            assert!(
                (1..=8).contains(&c["layers"].parse::<i64>().unwrap()),
                "{c:?}"
            );
            assert!(["relu", "tanh"].contains(&c["act"].as_str()), "{c:?}");
        }
    }

    #[test]
    fn log_uniform_samples_spread_over_the_decades() {
        let t = tune(
            "{space: {lr: {type: double, min: 0.0001, max: 1, log: true}}, objective: {metric: loss, goal: minimize}, maxTrials: 400, seed: 1}",
        );
        let mut decades = [0; 4];
        for c in search(&t, None).configs {
            let lr: f64 = c["lr"].parse().unwrap();
            decades[((lr.log10() + 4.0).floor() as usize).min(3)] += 1;
        }
        // About 100 each; a linear sampler would put ~90% in the top decade.
        assert!(
            decades.iter().all(|&n| (60..=140).contains(&n)),
            "{decades:?}"
        );
    }

    #[test]
    fn a_space_smaller_than_max_trials_gives_all_of_it_with_a_warning() {
        let t = tune(
            "{space: {n: {type: int, min: 1, max: 3}}, objective: {metric: loss, goal: minimize}, maxTrials: 5}",
        );
        let s = search(&t, None);
        let mut values: Vec<&str> = s.configs.iter().map(|c| c["n"].as_str()).collect();
        values.sort();
        assert_eq!(values, ["1", "2", "3"]);
        assert!(
            s.warnings[0].contains("only 3 configurations"),
            "{:?}",
            s.warnings
        );
    }

    const HALVING: &str = "{space: {lr: {type: double, min: 0.001, max: 0.1, log: true}}, objective: {metric: loss, goal: minimize}, strategy: halving, maxTrials: 9, parallelism: 9, seed: 3, halving: {minBudget: 1, maxBudget: 9, eta: 3}}";

    /// Best near lr = 0.01; more budget lowers the loss.
    fn loss(t: &Trial) -> f64 {
        (number(t, "lr").log10() + 2.0).abs() + 1.0 / t.budget.unwrap() as f64
    }

    #[test]
    fn halving_runs_rungs_of_shrinking_size_and_growing_budget() {
        let t = tune(HALVING);
        let s = search(&t, None);
        let (batches, done) = drive(&t, &s, |t| ok(loss(t)));
        let shape: Vec<(usize, Option<u32>)> =
            batches.iter().map(|b| (b.len(), b[0].budget)).collect();
        assert_eq!(shape, [(9, Some(1)), (3, Some(3)), (1, Some(9))]);
        let true_best = (0..9)
            .min_by(|&a, &b| loss(&batches[0][a]).total_cmp(&loss(&batches[0][b])))
            .unwrap();
        let promoted: BTreeSet<u32> = batches[1].iter().map(|t| t.config).collect();
        assert!(promoted.contains(&batches[0][true_best].config));
        let summary = summary(done);
        assert_eq!(
            summary.best,
            format!("t{}-r2", batches[0][true_best].config)
        );
        assert_eq!(summary.trials.len(), 13);
        assert!(summary.reason.contains("halving") && summary.reason.contains("1, 3, 9"));
    }

    #[test]
    fn failed_trials_are_never_promoted() {
        let t = tune(HALVING);
        let s = search(&t, None);
        // Every trial but two fails at the first rung: only those two go on.
        let (batches, done) = drive(&t, &s, |t| match t.config {
            4 | 7 => ok(loss(t)),
            _ if t.rung == 0 => TrialOutcome::Failed {
                message: "oom".into(),
            },
            _ => ok(loss(t)),
        });
        let promoted: Vec<u32> = batches[1].iter().map(|t| t.config).collect();
        assert_eq!(promoted.len(), 2);
        assert!(promoted.iter().all(|c| [4, 7].contains(c)));
        assert_eq!(
            summary(done)
                .trials
                .iter()
                .filter(|r| r.status == "failed")
                .count(),
            7
        );
    }

    #[test]
    fn reaching_the_target_stops_early() {
        let t = tune(&format!(
            "{{space: {SPACE}, objective: {{metric: loss, goal: minimize, target: 1}}, maxTrials: 20, parallelism: 2, seed: 1}}"
        ));
        let s = search(&t, None);
        let (batches, done) = drive(&t, &s, |t| ok(number(t, "lr")));
        assert_eq!(batches.len(), 1);
        let summary = summary(done);
        assert!(summary.stopped_early && summary.reason.contains("stopped early"));
        let not_run = summary
            .trials
            .iter()
            .filter(|r| r.status == "not-run")
            .count();
        assert_eq!((summary.trials.len(), not_run), (20, 18));
        assert!(summary.objective <= 1.0);
    }

    #[test]
    fn batches_respect_parallelism() {
        let sizes = |extra: &str| {
            let t = random(extra);
            let (batches, _) = drive(&t, &search(&t, None), |_| ok(1.0));
            batches.iter().map(Vec::len).collect::<Vec<_>>()
        };
        assert_eq!(sizes(", parallelism: 6"), [6, 6, 6, 2]);
        assert_eq!(sizes(""), [4; 5]);
    }

    #[test]
    fn ties_go_to_the_lower_config() {
        let t = random("");
        let (_, done) = drive(&t, &search(&t, None), |_| ok(0.5));
        assert_eq!(summary(done).best, "t0");
    }

    #[test]
    fn every_trial_failing_fails_the_search() {
        let t = random("");
        let s = search(&t, None);
        let (_, done) = drive(&t, &s, |t| match t.config {
            0 => ok(f64::NAN),
            n => TrialOutcome::Failed {
                message: format!("crash {n}"),
            },
        });
        let Next::Failed(why) = done else {
            panic!("{done:?}")
        };
        assert!(
            why.contains("all 20 trials failed") && why.contains("t0"),
            "{why}"
        );
        assert!(why.contains("not a finite number"), "{why}");
    }

    #[test]
    fn next_is_idempotent() {
        let t = tune(HALVING);
        let s = search(&t, None);
        assert_eq!(s, search(&t, None));
        let mut outcomes = BTreeMap::new();
        for i in 0..9 {
            outcomes.insert(format!("t{i}"), ok(i as f64));
        }
        outcomes.insert("t0-r1".into(), ok(0.0));
        let first = next(&t, &s, &outcomes);
        assert!(matches!(&first, Next::Run(b) if b.len() == 2 && b[0].id == "t1-r1"));
        assert_eq!(first, next(&t, &s, &outcomes));
    }

    const LLM: &str = "{space: {lr: {type: double, min: 0.001, max: 0.1}, layers: {type: int, min: 1, max: 8}, act: {type: categorical, values: [relu, tanh]}}, objective: {metric: loss, goal: minimize}, strategy: llm, maxTrials: 4, seed: 5}";
    const ANSWER: &str = r#"{"configurations": [{"lr": 0.01, "layers": 4, "act": "relu"}, {"lr": "0.05", "layers": 2.0, "act": "tanh"}]}"#;

    #[test]
    fn llm_configurations_are_kept_and_filled_up_with_random_ones() {
        let t = tune(LLM);
        let s = search(&t, Some(ANSWER));
        assert_eq!(s.strategy, Strategy::Llm);
        assert_eq!(s.configs.len(), 4);
        let first = |c: &Config| format!("{} {} {}", c["lr"], c["layers"], c["act"]);
        assert_eq!(first(&s.configs[0]), "0.01 4 relu");
        assert_eq!(first(&s.configs[1]), "0.05 2 tanh");
        assert!(
            s.warnings.iter().any(|w| w.contains("fill up")),
            "{:?}",
            s.warnings
        );
        let fenced = format!("Here you go:\n```json\n{ANSWER}\n```\nGood luck!");
        assert_eq!(search(&t, Some(&fenced)).configs, s.configs);
        assert_eq!(
            search(&t, Some(&format!("Sure! {ANSWER} Hope it helps."))).configs,
            s.configs
        );
    }

    #[test]
    fn invalid_llm_configurations_are_dropped_with_warnings() {
        let answer = r#"{"configurations": [
            {"lr": 5, "layers": 4, "act": "relu"},
            {"lr": 0.01, "layers": 2.5, "act": "relu"},
            {"lr": 0.01, "layers": 2, "act": "gelu"},
            {"lr": 0.01, "layers": 2},
            {"lr": 0.01, "layers": 2, "act": "relu", "momentum": 0.9},
            {"lr": 0.02, "layers": 3, "act": "tanh"},
            {"lr": 0.02, "layers": 3, "act": "tanh"}]}"#;
        let s = search(&tune(LLM), Some(answer));
        assert_eq!(s.strategy, Strategy::Llm);
        assert_eq!(s.configs[0]["lr"], "0.02");
        let expect = [
            "outside",
            "whole number",
            "not one of",
            "missing",
            "not in the search space",
            "repeats",
        ];
        for (i, needle) in expect.iter().enumerate() {
            assert!(s.warnings[i].contains(needle), "{i}: {:?}", s.warnings);
        }
    }

    #[test]
    fn an_unusable_llm_answer_falls_back_to_random() {
        let t = tune(LLM);
        let random = search(
            &tune(&LLM.replace("strategy: llm", "strategy: random")),
            None,
        );
        for (answer, warning) in [
            (None, "no LLM configured"),
            (Some("I cannot help with that."), "not usable"),
            (Some(r#"{"configurations": [{"lr": 9}]}"#), "not usable"),
        ] {
            let s = search(&t, answer);
            assert_eq!(s.strategy, Strategy::Random);
            assert_eq!(s.configs, random.configs);
            assert!(
                s.warnings.iter().any(|w| w.contains(warning)),
                "{:?}",
                s.warnings
            );
        }
    }

    #[test]
    fn the_llm_request_describes_the_cards_space_and_goal() {
        let t = tune(&LLM.replace("seed: 5", "seed: 5, dataCard: {name: mnist, type: image, labels: [digit]}, modelCard: {name: cnn, structure: 2 conv layers}"));
        let r = llm_request(&t);
        assert!(r.system.contains("JSON"));
        for needle in [
            "mnist",
            "image",
            "digit",
            "cnn",
            "2 conv layers",
            "minimize",
            "loss",
            "Propose 4",
        ] {
            assert!(r.user.contains(needle), "{needle}: {}", r.user);
        }
        let item = &r.schema["properties"]["configurations"]["items"];
        assert_eq!(item["properties"]["act"]["enum"], json!(["relu", "tanh"]));
        assert_eq!(
            item["properties"]["layers"],
            json!({"type": "integer", "minimum": 1, "maximum": 8})
        );
        assert_eq!(item["required"], json!(["act", "layers", "lr"]));
    }
}
