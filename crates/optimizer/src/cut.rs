//! Cutting a plan so that cache lookups see the outputs of steps that run.
//!
//! A step's cache key needs the outputs of the steps it reads. Before the
//! run those are known only for hits, so a step downstream of one that runs
//! cannot be looked up at planning time, and without a cut it would run
//! even when its upstream reproduces the same outputs: recomputed because
//! its own entry was evicted or expired, or changed in a way that does not
//! change its result (a new `cache.version`, a comment in a script). Keys
//! are content digests precisely so that such a step can still hit.
//!
//! [`CutForCache`] ends a stage before such a step: the scheduler runs the
//! stages in order and looks each one's steps up when it starts (see
//! [`crate::stages`]), with the recorded outputs of the stages before. A cut
//! costs one more engine submission, so it is made only before a step the
//! tenant has run before: it has measured history (the same step of the
//! same workflow, or the same program, succeeded). A step never run is
//! unlikely to hit, and the tenant's own history says nothing about other
//! tenants' entries. Nor is a cut made where the step reads an artifact of
//! one that runs before it, on an engine that does not report where
//! artifacts are stored ([`Facts::engine_loses_artifacts`]): the next stage
//! could not read it.

use crate::passes::weight;
use crate::{Action, Facts, Pass, Plan, PlanError, PlanPart};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub struct CutForCache;

impl Pass for CutForCache {
    fn name(&self) -> &'static str {
        "cache-cut"
    }

    fn apply(&self, plan: &mut Plan, facts: &Facts) -> Result<(), PlanError> {
        let steps = &plan.workflow.steps;
        let mut worthy: Vec<bool> = steps
            .iter()
            .zip(&plan.steps)
            .map(|(s, p)| {
                matches!(p.action, Action::Run)
                    && facts.cache_pending.contains(&s.name)
                    && facts.history.get(&s.name).is_some_and(|h| !h.is_empty())
            })
            .collect();
        if !worthy.contains(&true) {
            return Ok(());
        }
        let dag = couler_ir::validate(&plan.workflow, &couler_ir::Limits::default())?;
        let graph = &dag.steps;
        let index: HashMap<&str, usize> = steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let mut part_of = vec![0usize; steps.len()];
        for (k, part) in plan.parts.iter().enumerate() {
            for name in &part.steps {
                part_of[index[name.as_str()]] = k;
            }
        }
        let runs = |u: usize| matches!(plan.steps[u].action, Action::Run);

        // A step's round within its part: one more than a step it reads
        // that runs in the same part, if it is worth a lookup of its own.
        let rounds = |worthy: &[bool]| {
            let mut round = vec![0u32; steps.len()];
            let mut cut_before = Vec::new();
            for &v in graph.order() {
                let v = v as usize;
                let mut r = 0;
                let mut cut = false;
                for &u in graph.upstream(v as u32) {
                    let u = u as usize;
                    if part_of[u] != part_of[v] {
                        continue; // a part boundary: looked up when the part starts
                    }
                    let later = worthy[v] && runs(u);
                    cut |= later;
                    r = r.max(round[u] + u32::from(later));
                }
                round[v] = r;
                if cut {
                    cut_before.push(v);
                }
            }
            (round, cut_before)
        };
        let (mut round, mut cut_before) = rounds(&worthy);
        // An artifact the engine does not record cannot cross from one
        // stage to the next: a step reading one of a step that runs stays
        // in its round, its ancestors in the part uncut with it.
        let unrecorded = match facts.engine_loses_artifacts {
            true => plan.workflow.artifact_reads(),
            false => Vec::new(),
        };
        let crossing = |round: &[u32]| -> Vec<usize> {
            (unrecorded.iter())
                .filter(|r| part_of[r.producer] == part_of[r.reader] && runs(r.producer))
                .filter(|r| round[r.producer] != round[r.reader])
                .map(|r| r.reader)
                .collect()
        };
        let mut crossed = crossing(&round);
        while !crossed.is_empty() {
            let mut seen = vec![false; steps.len()];
            for v in crossed {
                let mut stack = vec![v];
                while let Some(x) = stack.pop() {
                    if std::mem::replace(&mut seen[x], true) {
                        continue;
                    }
                    worthy[x] = false;
                    stack.extend(
                        (graph.upstream(x as u32).iter())
                            .map(|&u| u as usize)
                            .filter(|&u| part_of[u] == part_of[v]),
                    );
                }
            }
            (round, cut_before) = rounds(&worthy);
            crossed = crossing(&round);
        }
        if cut_before.is_empty() {
            return Ok(());
        }

        // The new parts, by (old part, round): a topological order, since
        // old parts are one and rounds only grow along edges within a part.
        let groups: BTreeSet<(usize, u32)> =
            (0..steps.len()).map(|v| (part_of[v], round[v])).collect();
        let number: BTreeMap<(usize, u32), usize> =
            groups.iter().enumerate().map(|(k, &g)| (g, k)).collect();
        let new_part = |v: usize| number[&(part_of[v], round[v])];
        let mut parts: Vec<PlanPart> = groups
            .iter()
            .map(|_| PlanPart {
                steps: Vec::new(),
                after: Vec::new(),
                bytes: 0,
                pods: 0,
            })
            .collect();
        let mut after: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); parts.len()];
        for &v in graph.order() {
            let v = v as usize;
            let k = new_part(v);
            let w = weight(&steps[v], &plan.steps[v].action);
            parts[k].steps.push(steps[v].name.clone());
            parts[k].bytes += w.bytes;
            parts[k].pods += w.pods;
            for &u in graph.upstream(v as u32) {
                let j = new_part(u as usize);
                if j != k {
                    after[k].insert(j as u32);
                }
            }
        }
        // What an old part waited for, each of its pieces waits for.
        for (&(old, _), &k) in &number {
            if let Some(part) = plan.parts.get(old) {
                for &a in &part.after {
                    let pieces = number.range((a as usize, 0)..=(a as usize, u32::MAX));
                    after[k].extend(pieces.map(|(_, &j)| j as u32));
                }
            }
        }
        for (part, after) in parts.iter_mut().zip(after) {
            part.after = after.into_iter().collect();
        }

        let count = parts.len();
        let cut_names: Vec<String> = cut_before.iter().map(|&v| steps[v].name.clone()).collect();
        plan.parts = parts;
        for name in &cut_names {
            let message = "looked up in the cache again once the steps it reads have run: \
                           its key needs their outputs, and the tenant has run it (or the same program) before";
            plan.decide(self.name(), Some(name), message);
        }
        plan.decide(
            self.name(),
            None,
            format!(
                "run in {count} stages so that {} steps are looked up once their inputs are known",
                cut_names.len()
            ),
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split::Budget;
    use crate::stages::{Progress, advance};
    use crate::{Named, Pipeline, ReuseStatus, StepOutputs, Usage};

    const DIAMOND: &str = r#"
apiVersion: couler.dev/v1alpha1
name: diamond
steps:
  - {name: prep, script: {image: x, command: [sh], source: 'echo 1 > {{outputs.parameters.n.path}}'}, outputs: {parameters: [{name: n, path: /n}]}}
  - {name: train-a, script: {image: x, command: [sh], source: 'echo a{{steps.prep.outputs.parameters.n}}'}}
  - {name: train-b, script: {image: x, command: [sh], source: 'echo b{{steps.prep.outputs.parameters.n}}'}}
  - {name: report, script: {image: x, command: [sh], source: 'echo {{steps.train-a.outputs.result}} {{steps.train-b.outputs.result}}'}}
"#;

    fn facts(pending: &[&str], ran_before: &[&str]) -> Facts {
        let usage = Usage {
            wall_ms: 60_000,
            cpu_ms: 60_000,
            max_rss_kb: 1024,
        };
        Facts {
            cache_pending: pending.iter().map(|s| s.to_string()).collect(),
            history: ran_before
                .iter()
                .map(|s| (s.to_string(), vec![usage]))
                .collect(),
            ..Default::default()
        }
    }

    fn plan(yaml: &str, facts: &Facts) -> Plan {
        let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap();
        Pipeline::default()
            .plan(workflow, facts, |_, f| f())
            .unwrap()
    }

    fn parts(plan: &Plan) -> Vec<(Vec<&str>, Vec<u32>)> {
        plan.parts
            .iter()
            .map(|p| {
                (
                    p.steps.iter().map(String::as_str).collect(),
                    p.after.clone(),
                )
            })
            .collect()
    }

    fn done(result: &str) -> Progress {
        Progress::Done(
            ReuseStatus::Succeeded,
            StepOutputs {
                result: Some(result.into()),
                parameters: Named::from_iter([("n".into(), "1".into())]),
                ..Default::default()
            },
        )
    }

    #[test]
    fn no_stage_is_cut_across_an_artifact_the_engine_does_not_record() {
        let yaml = r#"
apiVersion: couler.dev/v1alpha1
name: w
steps:
  - {name: train, container: {image: x, command: [sh, -c, 'echo 1 > /tmp/m']}, outputs: {artifacts: [{name: model, path: /tmp/m}]}}
  - {name: evaluate, inputs: {artifacts: [{name: model, from: '{{steps.train.outputs.artifacts.model}}', path: /tmp/m}]}, container: {image: x, command: [cat, /tmp/m]}}
  - {name: report, container: {image: x, command: [echo, '{{steps.train.outputs.result}}']}}
"#;
        let mut facts = facts(&["evaluate", "report"], &["evaluate", "report"]);
        assert_eq!(
            parts(&plan(yaml, &facts)),
            vec![
                (vec!["train"], vec![]),
                (vec!["evaluate", "report"], vec![0])
            ]
        );
        // Tekton's artifacts stay in the run's volume: only `report`, which
        // reads a result, waits for a stage of its own.
        facts.engine_loses_artifacts = true;
        assert_eq!(
            parts(&plan(yaml, &facts)),
            vec![
                (vec!["train", "evaluate"], vec![]),
                (vec!["report"], vec![0])
            ]
        );
        // Nor does an artifact cross by another path: `evaluate` also reads
        // `tune`, which would be cut after `train`.
        let yaml = crate::fixtures::TRAIN_TUNE_EVALUATE;
        let mut indirect = self::facts(&["tune", "evaluate"], &["tune", "evaluate"]);
        assert_eq!(parts(&plan(yaml, &indirect)).len(), 3, "a stage each");
        indirect.engine_loses_artifacts = true;
        assert_eq!(parts(&plan(yaml, &indirect)), [], "no cut: one stage");
    }

    #[test]
    fn steps_run_before_are_looked_up_after_the_steps_they_read() {
        let all = ["train-a", "train-b", "report"];
        let plan = plan(DIAMOND, &facts(&all, &["train-a", "report"]));
        assert_eq!(
            parts(&plan),
            vec![
                (vec!["prep", "train-b"], vec![]),
                (vec!["train-a"], vec![0]),
                (vec!["report"], vec![0, 1]),
            ]
        );
        let cut: Vec<_> = plan
            .decisions
            .iter()
            .filter(|d| d.pass == "cache-cut")
            .map(|d| d.step.as_deref())
            .collect();
        assert_eq!(cut, [Some("train-a"), Some("report"), None]);

        // Each stage starts once the steps it reads have finished: `train-a`
        // needs `prep` only, not `train-b`, which runs in the same stage.
        let dag = plan.dag().unwrap().into_owned();
        let mut steps = BTreeMap::new();
        let first = advance(&plan, &dag, &steps, false, &BTreeSet::new());
        assert_eq!(
            first.start.iter().map(|s| &s.id[..]).collect::<Vec<_>>(),
            ["p0"]
        );
        assert!(!first.start[0].look_up, "planning looked p0 up");
        let active = BTreeSet::from(["p0".to_owned()]);
        steps.insert("train-b".to_owned(), Progress::Running);
        let waiting = advance(&plan, &dag, &steps, false, &active);
        assert!(waiting.start.is_empty(), "{:?}", waiting.start);
        steps.insert("prep".to_owned(), done("1"));
        let second = advance(&plan, &dag, &steps, false, &active);
        assert_eq!(second.start.len(), 1);
        assert_eq!(second.start[0].id, "p1");
        assert_eq!(second.start[0].runs, BTreeSet::from(["train-a".to_owned()]));
        assert!(second.start[0].look_up, "p1 is looked up when it starts");
        // The stage carries what it reads: the recorded outputs of `prep`.
        let prep = &second.start[0].plan.steps[0];
        assert!(matches!(prep.action, Action::Reuse { .. }), "{prep:?}");
        // `report` reads `train-b` too.
        steps.insert("train-a".to_owned(), done("a1"));
        let active = BTreeSet::from(["p0".to_owned(), "p1".to_owned()]);
        assert!(
            advance(&plan, &dag, &steps, false, &active)
                .start
                .is_empty()
        );
        steps.insert("train-b".to_owned(), done("b1"));
        let third = advance(&plan, &dag, &steps, false, &active);
        assert_eq!(
            third.start.iter().map(|s| &s.id[..]).collect::<Vec<_>>(),
            ["p2"]
        );
    }

    #[test]
    fn no_cut_for_steps_never_run_or_keyed_from_hits() {
        let all = ["train-a", "train-b", "report"];
        // Never run by the tenant: a lookup could not hit on its own outputs.
        let never = plan(DIAMOND, &facts(&all, &[]));
        assert!(never.parts.is_empty(), "{:?}", never.parts);
        assert!(!never.is_staged());
        // Keyed before the run (the step it reads is a hit): nothing pending.
        let mut hit = facts(&[], &all);
        hit.cache_hits
            .insert("prep".into(), (StepOutputs::default(), "cache hit".into()));
        let keyed = plan(DIAMOND, &hit);
        assert!(keyed.parts.is_empty(), "{:?}", keyed.parts);
    }

    #[test]
    fn cuts_refine_the_parts_of_a_split_plan() {
        let chain = r#"
apiVersion: couler.dev/v1alpha1
name: chain
steps:
  - {name: a, script: {image: x, command: [sh], source: 'echo 1'}}
  - {name: b, depends: [a], script: {image: x, command: [sh], source: 'echo b'}}
  - {name: c, depends: [b], script: {image: x, command: [sh], source: 'echo c'}}
  - {name: d, depends: [c], script: {image: x, command: [sh], source: 'echo d'}}
"#;
        let mut facts = facts(&["b", "c", "d"], &["b", "c"]);
        facts.split_budget = Budget {
            max_steps: Some(2),
            ..Default::default()
        };
        let plan = plan(chain, &facts);
        // `c` starts a part of the split anyway: looked up when it starts.
        assert_eq!(
            parts(&plan),
            vec![
                (vec!["a"], vec![]),
                (vec!["b"], vec![0]),
                (vec!["c", "d"], vec![0, 1])
            ]
        );
    }
}
