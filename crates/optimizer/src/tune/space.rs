//! The search space: enumerating, sampling and checking configurations.

use super::*;
use couler_ir::{ParamKind, SearchParam, Tune};
use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::SliceRandom;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

// ---- The search space -----------------------------------------------------

pub(super) type Rng = Xoshiro256PlusPlus;

/// One dimension of the space, ready to enumerate, sample and check.
pub(super) enum Dim {
    Finite(Points),
    /// A double without `step`.
    Range {
        min: f64,
        max: f64,
        log: bool,
    },
}

/// The values of a finite dimension, by index.
pub(super) enum Points {
    /// Categorical: the distinct values, as written.
    Values(Vec<String>),
    Grid(Grid),
}

/// Int, or double with `step`: `min + i·step` for `i < count`.
pub(super) struct Grid {
    min: f64,
    max: f64,
    step: f64,
    count: u64,
    int: bool,
    log: bool,
}

pub(super) fn dims(tune: &Tune) -> BTreeMap<&str, Dim> {
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

    pub(super) fn count(&self) -> Option<u64> {
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
    pub(super) fn check(&self, value: &Value) -> Result<String, String> {
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
    pub(super) fn count(&self) -> u64 {
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
pub(super) fn continuous(min: f64, max: f64, log: bool, rng: &mut Rng) -> f64 {
    let u: f64 = rng.random();
    let x = if log {
        (min.ln() + u * (max.ln() - min.ln())).exp()
    } else {
        min + u * (max - min)
    };
    x.clamp(min, max)
}

/// `min + i·step` without accumulated noise: rounded to the decimals of `min` and `step`.
pub(super) fn grid_value(min: f64, step: f64, i: u64) -> f64 {
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

pub(super) fn int_text(x: f64) -> String {
    (x as i64).to_string()
}

/// The shortest text that reads back as `x` (`0.001`, not `1e-3` or `0.0010000000000000002`).
pub(super) fn double_text(x: f64) -> String {
    (x + 0.0).to_string()
}

/// `tune.seed`, or else a hash of the search space: the same space always
/// explores the same points, whichever workflow or run it appears in.
pub(super) fn seed(tune: &Tune) -> u64 {
    tune.seed.unwrap_or_else(|| {
        let space = serde_json::to_string(&tune.space).expect("IR types always serialize");
        fnv1a(space.as_bytes())
    })
}

/// FNV-1a: stable across Rust releases, unlike `DefaultHasher`.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The dimensions when every one is finite.
pub(super) fn finite<'a>(dims: &'a BTreeMap<&'a str, Dim>) -> Option<Vec<(&'a str, &'a Points)>> {
    dims.iter()
        .map(|(name, d)| match d {
            Dim::Finite(points) => Some((*name, points)),
            Dim::Range { .. } => None,
        })
        .collect()
}

pub(super) fn size(points: &[(&str, &Points)]) -> u128 {
    points
        .iter()
        .fold(1u128, |n, (_, p)| n.saturating_mul(p.count() as u128))
}

/// The `k`-th point of the product, the last dimension varying fastest.
pub(super) fn config_at(points: &[(&str, &Points)], mut k: u128) -> Config {
    let mut config = Config::new();
    for (name, p) in points.iter().rev() {
        let count = p.count() as u128;
        config.insert(name.to_string(), p.value((k % count) as u64));
        k /= count;
    }
    config
}

pub(super) fn grid(
    points: &[(&str, &Points)],
    max: usize,
    warnings: &mut Vec<String>,
) -> Vec<Config> {
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
pub(super) fn sample_into(
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
