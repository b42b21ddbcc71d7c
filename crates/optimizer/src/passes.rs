//! The passes after parameter resolution and reuse: hyperparameter search
//! set-up, resource advice from history, and the auto-parallel split.

use crate::split::{self, Budget, Weight};
use crate::{Action, Advice, Facts, Pass, Plan, PlanError, PlanPart, tune};
use couler_ir::scalar::{Cpu, Memory};
use couler_ir::{Resources, Step};

/// Names may not exceed this (Kubernetes label values, IR step names).
const MAX_NAME: usize = 63;

/// Fixes each `tune` step's configurations (grid, seeded random, halving,
/// or the LLM's suggestions handed in as facts). Trials are planned here
/// and run as ordinary steps, batch by batch (see [`crate::stages`]).
pub struct ExpandTuning;

impl Pass for ExpandTuning {
    fn name(&self) -> &'static str {
        "expand-tuning"
    }

    fn apply(&self, plan: &mut Plan, facts: &Facts) -> Result<(), PlanError> {
        let names: std::collections::HashSet<&str> = plan
            .workflow
            .steps
            .iter()
            .chain(&plan.workflow.on_exit)
            .map(|s| s.name.as_str())
            .collect();
        let mut searches = Vec::new();
        for (i, step) in plan.workflow.steps.iter().enumerate() {
            let Some(spec) = &step.tune else { continue };
            // A search kept from an earlier attempt runs no trials again.
            if !matches!(plan.steps[i].action, Action::Run) {
                continue;
            }
            let search = tune::search(spec, facts.tune_answers.get(&step.name).map(String::as_str));
            let longest = longest_trial_id(spec, search.configs.len());
            if step.name.len() + 1 + longest > MAX_NAME {
                return Err(PlanError::Tuning(format!(
                    "step `{}`: its trial names (`{}-{}`) would exceed {MAX_NAME} characters; shorten the step name",
                    step.name, step.name, "t0"
                )));
            }
            if let Some(clash) = (0..search.configs.len())
                .map(|c| format!("{}-t{c}", step.name))
                .find(|n| names.contains(n.as_str()))
            {
                return Err(PlanError::Tuning(format!(
                    "step `{}`: a trial would be named `{clash}`, which another step is called",
                    step.name
                )));
            }
            searches.push((step.name.clone(), spec.clone(), search));
        }
        for (name, spec, search) in searches {
            let batch = spec
                .parallelism
                .unwrap_or_else(|| spec.max_trials.min(4))
                .max(1);
            let mut why = format!(
                "{} search over {} configurations, {batch} trials at a time, objective {} ({:?})",
                format!("{:?}", search.strategy).to_lowercase(),
                search.configs.len(),
                spec.objective.metric,
                spec.objective.goal
            )
            .to_lowercase();
            if let Some(h) = &spec.halving {
                why.push_str(&format!(
                    "; successive halving from budget {} to {} (eta {})",
                    h.min_budget,
                    h.max_budget,
                    h.eta.unwrap_or(3)
                ));
            }
            if let Some(t) = spec.objective.target {
                why.push_str(&format!("; stops early at {t}"));
            }
            plan.decide(self.name(), Some(&name), why);
            for w in &search.warnings {
                plan.decide(self.name(), Some(&name), format!("warning: {w}"));
            }
            plan.tuning.insert(name, search);
        }
        Ok(())
    }
}

/// Characters of the longest trial id (`t12-r3`).
fn longest_trial_id(spec: &couler_ir::Tune, configs: usize) -> usize {
    let digits = |n: usize| n.max(1).to_string().len();
    let rungs = spec.halving.as_ref().map_or(0, |h| {
        let eta = h.eta.unwrap_or(3).max(2) as u64;
        let mut budget = h.min_budget.max(1) as u64;
        let mut r = 0;
        while budget < h.max_budget as u64 {
            budget *= eta;
            r += 1;
        }
        r
    });
    1 + digits(configs) + if rungs > 0 { 2 + digits(rungs) } else { 0 }
}

/// One measured execution of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub wall_ms: u64,
    pub cpu_ms: u64,
    pub max_rss_kb: u64,
}

/// Fewer runs than this give no advice.
pub const MIN_SAMPLES: usize = 3;
/// The percentile recommended, plus [`HEADROOM`].
pub const PERCENTILE: f64 = 0.95;
pub const HEADROOM: f64 = 1.2;

/// Recommends CPU and memory from measured history of the same step (its
/// name in the same workflow, or the same image and command elsewhere in
/// the tenant): the 95th percentile plus 20 % headroom. Steps that request
/// nothing get the recommendation; for the others it is advice.
pub struct AdviseResources;

impl Pass for AdviseResources {
    fn name(&self) -> &'static str {
        "advise-resources"
    }

    fn apply(&self, plan: &mut Plan, facts: &Facts) -> Result<(), PlanError> {
        let mut decisions = Vec::new();
        for (i, step) in plan.workflow.steps.iter_mut().enumerate() {
            if !matches!(plan.steps[i].action, Action::Run) || step.job.is_some() {
                continue;
            }
            let Some(history) = facts.history.get(&step.name) else {
                continue;
            };
            let Some((cpu, memory)) = recommend(history) else {
                continue;
            };
            let current = step.resources.clone().unwrap_or(Resources {
                cpu: None,
                memory: None,
                gpu: None,
            });
            let applied = current.cpu.is_none() || current.memory.is_none();
            let mut advice = Advice {
                step: step.name.clone(),
                cpu: Some(cpu.to_string()),
                memory: Some(memory.to_string()),
                applied,
                samples: history.len() as u32,
            };
            let mut why = Vec::new();
            let mut set = current.clone();
            match current.cpu {
                None => {
                    set.cpu = Some(cpu);
                    why.push(format!("cpu {cpu} (set: the step requested none)"));
                }
                Some(c) if c != cpu => why.push(format!("cpu {cpu} recommended (requests {c})")),
                Some(_) => advice.cpu = None,
            }
            match current.memory {
                None => {
                    set.memory = Some(memory);
                    why.push(format!("memory {memory} (set: the step requested none)"));
                }
                Some(m) if m != memory => {
                    why.push(format!("memory {memory} recommended (requests {m})"))
                }
                Some(_) => advice.memory = None,
            }
            if advice.cpu.is_none() && advice.memory.is_none() {
                continue;
            }
            step.resources = Some(set);
            decisions.push((
                step.name.clone(),
                format!(
                    "{} — p95 of {} measured runs plus 20% headroom",
                    why.join(", "),
                    history.len()
                ),
            ));
            plan.advice.push(advice);
        }
        for (step, why) in decisions {
            plan.decide(self.name(), Some(&step), why);
        }
        Ok(())
    }
}

/// CPU (rounded up to 10 millicores) and memory (rounded up to a MiB).
pub fn recommend(history: &[Usage]) -> Option<(Cpu, Memory)> {
    if history.len() < MIN_SAMPLES {
        return None;
    }
    // A run under a millisecond ("echo ok" in a sandbox started ahead)
    // is measured too: its wall counts as 1 ms.
    let cores: Vec<f64> = history
        .iter()
        .map(|u| u.cpu_ms as f64 / u.wall_ms.max(1) as f64)
        .collect();
    let rss: Vec<f64> = history
        .iter()
        .map(|u| u.max_rss_kb as f64 * 1024.0)
        .collect();
    let millis = (percentile(cores, PERCENTILE) * HEADROOM * 1000.0 / 10.0).ceil() as u64 * 10;
    let mib = 1u64 << 20;
    let bytes = (percentile(rss, PERCENTILE) * HEADROOM / mib as f64).ceil() as u64 * mib;
    Some((Cpu(millis.max(10)), Memory(bytes.max(16 * mib))))
}

/// Nearest-rank percentile.
fn percentile(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let rank = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

/// Splits a plan over its engine's or tenant's budget into sub-workflows
/// (Couler Algorithm 3; see [`split`]), and gives each `tune` step a part
/// of its own so its trials can run batch by batch.
pub struct SplitPlan;

impl Pass for SplitPlan {
    fn name(&self) -> &'static str {
        "split"
    }

    fn apply(&self, plan: &mut Plan, facts: &Facts) -> Result<(), PlanError> {
        let dag = couler_ir::validate(&plan.workflow, &couler_ir::Limits::default())?;
        let weights: Vec<Weight> = plan
            .workflow
            .steps
            .iter()
            .zip(&plan.steps)
            .map(|(s, p)| weight(s, &p.action))
            .collect();
        let budget = facts.split_budget;
        let total_bytes: u64 = weights.iter().map(|w| w.bytes).sum();
        let result = split::split(&dag.steps, &weights, &budget);
        if result.parts.len() <= 1 {
            return Ok(());
        }
        if facts.engine_loses_artifacts {
            crossing_artifact(plan, &result, &budget)?;
        }
        let unit = vec![1.0; weights.len()];
        let before = split::makespan(&dag.steps, &unit, None);
        let after = split::makespan(&dag.steps, &unit, Some(&result));
        plan.parts = result
            .parts
            .iter()
            .map(|p| PlanPart {
                steps: p
                    .steps
                    .iter()
                    .map(|&i| plan.workflow.steps[i as usize].name.clone())
                    .collect(),
                after: p.after.clone(),
                bytes: p.bytes,
                pods: p.pods,
            })
            .collect();
        let largest = result
            .parts
            .iter()
            .map(|p| p.steps.len())
            .max()
            .unwrap_or(0);
        plan.decide(
            self.name(),
            None,
            format!(
                "split {} steps (~{} KiB) into {} sub-workflows (largest {} steps) under the budget {}; critical path {} → {} steps",
                weights.len(),
                total_bytes.div_ceil(1024),
                result.parts.len(),
                largest,
                describe(&budget),
                before,
                after,
            ),
        );
        Ok(())
    }
}

/// On an engine that does not record where artifacts are stored, an
/// artifact cannot pass from one sub-workflow to another: a split that
/// needs to is refused before anything runs, at the input that reads it.
fn crossing_artifact(plan: &Plan, split: &split::Split, budget: &Budget) -> Result<(), PlanError> {
    let part = |i: usize| split.part_of[i];
    let crossing = (plan.workflow.artifact_reads().into_iter()).find(|r| {
        part(r.producer) != part(r.reader) && matches!(plan.steps[r.producer].action, Action::Run)
    });
    let Some(r) = crossing else {
        return Ok(());
    };
    let steps = &plan.workflow.steps;
    Err(PlanError::Invalid(couler_ir::Problems(vec![
        couler_ir::Problem {
            path: format!("/steps/{}/inputs/artifacts/{}/from", r.reader, r.input),
            code: couler_ir::Code::UnsupportedFeature,
            message: format!(
                "step `{}` reads artifact `{}` of `{}`, which the split to fit the engine's budget ({}) puts in another sub-workflow, and this engine does not record where artifacts are stored: raise the tenant's split budget, or pass the value as a parameter",
                steps[r.reader].name,
                r.artifact,
                steps[r.producer].name,
                describe(budget),
            ),
        },
    ])))
}

/// What one step costs a sub-workflow: its manifest size (estimated from
/// its IR), its pods, and whether it needs a part of its own.
pub(crate) fn weight(step: &Step, action: &Action) -> Weight {
    if !matches!(action, Action::Run) {
        // Reused steps become literals, not tasks.
        return Weight {
            bytes: 0,
            pods: 0,
            isolate: false,
        };
    }
    let bytes = serde_json::to_vec(step).map_or(0, |v| v.len() as u64);
    let instances = step
        .map
        .as_ref()
        .and_then(|m| m.items.as_ref())
        .map_or(1, |items| items.len() as u64);
    let per_instance = step
        .job
        .as_ref()
        .map_or(1, |j| j.replicas.values().map(|r| r.count as u64).sum());
    Weight {
        bytes,
        pods: instances * per_instance,
        isolate: step.tune.is_some(),
    }
}

fn describe(b: &Budget) -> String {
    let mut parts = Vec::new();
    if let Some(s) = b.max_steps {
        parts.push(format!("{s} steps"));
    }
    if let Some(bytes) = b.max_bytes {
        parts.push(format!("{} KiB", bytes / 1024));
    }
    if let Some(p) = b.max_pods {
        parts.push(format!("{p} pods"));
    }
    if parts.is_empty() {
        "(unlimited; tune steps run on their own)".into()
    } else {
        format!("of {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_under_a_millisecond_are_samples_too() {
        let quick = Usage {
            wall_ms: 0,
            cpu_ms: 0,
            max_rss_kb: 2048,
        };
        let (cpu, memory) = recommend(&[quick; 3]).expect("three samples give advice");
        assert_eq!((cpu.0, memory.0), (10, 16 << 20));
        assert_eq!(recommend(&[quick; 2]), None);
    }
}
