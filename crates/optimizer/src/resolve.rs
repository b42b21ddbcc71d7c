//! Parameter resolution and reuse of an earlier attempt's results.

use crate::{Action, Facts, Pass, Plan, PlanError};
use couler_ir::refs::{Ref, Segment, segments};
use couler_ir::{Condition, EnvVar, Step};

/// Replaces `{{workflow.parameters.*}}` and `{{workflow.name}}` everywhere a
/// step holds text, so engines and cache keys see concrete values. Other
/// references (step outputs, items, trials) stay for run time.
pub struct ResolveParameters;

impl Pass for ResolveParameters {
    fn name(&self) -> &'static str {
        "resolve-parameters"
    }

    fn apply(&self, plan: &mut Plan, facts: &Facts) -> Result<(), PlanError> {
        for p in &plan.workflow.parameters {
            if !facts.parameters.contains_key(&p.name) && p.default.is_none() {
                return Err(PlanError::MissingParameter(p.name.clone()));
            }
        }
        let mut values = facts.parameters.clone();
        for p in &plan.workflow.parameters {
            if let Some(d) = &p.default {
                values
                    .entry(p.name.clone())
                    .or_insert_with(|| d.as_str().to_owned());
            }
        }
        let name = plan.workflow.name.clone();
        let substitute = |s: &mut String| {
            if !couler_ir::refs::has_references(s) {
                return;
            }
            let mut out = String::with_capacity(s.len());
            for seg in segments(s) {
                match seg {
                    Ok(Segment::Text(t)) => out.push_str(t),
                    Ok(Segment::Ref(Ref::WorkflowParameter(p))) => match values.get(p) {
                        Some(v) => out.push_str(v),
                        None => out.push_str(&Ref::WorkflowParameter(p).to_string()),
                    },
                    Ok(Segment::Ref(Ref::WorkflowName)) => out.push_str(&name),
                    Ok(Segment::Ref(r)) => out.push_str(&r.to_string()),
                    // Validation rejected malformed references already.
                    Err(_) => return,
                }
            }
            *s = out;
        };
        let workflow = &mut plan.workflow;
        let steps = workflow
            .steps
            .iter_mut()
            .enumerate()
            .map(|(i, s)| (format!("/steps/{i}"), s));
        let exits = workflow
            .on_exit
            .iter_mut()
            .enumerate()
            .map(|(i, s)| (format!("/onExit/{i}"), s));
        for (at, step) in steps.chain(exits) {
            visit_text(step, &substitute);
            // A map over a workflow parameter is a map over its items now.
            if let Some(map) = &mut step.map
                && let Some(from) = map.from.take_if(|f| !f.contains("{{"))
            {
                let items =
                    serde_json::from_str::<Vec<serde_json::Value>>(&from).map_err(|_| {
                        PlanError::NotAList {
                            path: format!("{at}/map/from"),
                            step: step.name.clone(),
                            value: from.chars().take(80).collect(),
                        }
                    })?;
                map.items = Some(items);
            }
        }
        plan.parameters = values;
        Ok(())
    }
}

/// Calls `f` on every text field of a step that may hold references: what
/// runs (see [`visit_runnable_text`]), its conditions and its `map.from`.
pub fn visit_text(step: &mut Step, f: &impl Fn(&mut String)) {
    visit_runnable_text(step, f);
    let conditions = |cs: &mut Vec<Condition>| {
        for c in cs {
            f(&mut c.input);
        }
    };
    conditions(&mut step.when);
    if let Some(w) = &mut step.repeat {
        conditions(&mut w.condition);
    }
    if let Some(m) = &mut step.map
        && let Some(from) = &mut m.from
    {
        f(from);
    }
}

/// Calls `f` on the text of what a step runs: command, args, script
/// source, env values and working directory.
pub fn visit_runnable_text(step: &mut Step, f: &impl Fn(&mut String)) {
    let env = |env: &mut Vec<EnvVar>| {
        for var in env {
            if let Some(v) = &mut var.value {
                f(v);
            }
        }
    };
    if let Some(c) = &mut step.container {
        c.command.iter_mut().chain(c.args.iter_mut()).for_each(f);
        env(&mut c.env);
        c.working_dir.iter_mut().for_each(f);
    }
    if let Some(s) = &mut step.script {
        s.command.iter_mut().for_each(f);
        f(&mut s.source);
        env(&mut s.env);
        s.working_dir.iter_mut().for_each(f);
    }
    if let Some(j) = &mut step.job {
        j.texts_mut().for_each(f);
        env(&mut j.env);
        j.working_dir.iter_mut().for_each(f);
    }
}

/// Retry from failure: steps that succeeded, were skipped or came from the
/// cache in an earlier attempt keep their results; the rest run again, and
/// so does a kept step whose artifact one of them reads when its location
/// is not known: the engine did not record it (Tekton's stay in the run's
/// volume), or it is gone from its store (the planner clears it). The new
/// attempt could not read it.
pub struct ReuseEarlierResults;

impl Pass for ReuseEarlierResults {
    fn name(&self) -> &'static str {
        "reuse-earlier-results"
    }

    fn apply(&self, plan: &mut Plan, facts: &Facts) -> Result<(), PlanError> {
        for step in &mut plan.steps {
            if let Some((status, outputs)) = facts.earlier.get(&step.name) {
                step.action = Action::Reuse {
                    status: *status,
                    outputs: outputs.clone(),
                };
            }
        }
        // Until no step that runs reads an unrecorded artifact of a kept one.
        let reads = plan.workflow.artifact_reads();
        loop {
            let unread: Vec<(usize, String)> = (reads.iter())
                .filter(|r| matches!(plan.steps[r.reader].action, Action::Run))
                .filter(|r| match &plan.steps[r.producer].action {
                    // A skipped step produced nothing; its readers are skipped too.
                    Action::Reuse { status, outputs } => {
                        *status != crate::ReuseStatus::Skipped
                            && (outputs.artifacts.get(&r.artifact))
                                .is_none_or(|a| a.location.is_empty())
                    }
                    _ => false,
                })
                .map(|r| {
                    let why = format!(
                        "run again: `{}` reads its artifact `{}`, which the earlier attempt did not record or which is gone from its store",
                        plan.steps[r.reader].name, r.artifact
                    );
                    (r.producer, why)
                })
                .collect();
            if unread.is_empty() {
                break;
            }
            for (u, why) in unread {
                if matches!(plan.steps[u].action, Action::Reuse { .. }) {
                    plan.steps[u].action = Action::Run;
                    let name = plan.steps[u].name.clone();
                    plan.decide(self.name(), Some(&name), why);
                }
            }
        }
        let kept: Vec<String> = (plan.steps.iter())
            .filter(|s| matches!(s.action, Action::Reuse { .. }))
            .filter(|s| facts.earlier.contains_key(&s.name))
            .map(|s| s.name.clone())
            .collect();
        for name in kept {
            plan.decide(self.name(), Some(&name), "kept from the earlier attempt");
        }
        Ok(())
    }
}

/// Steps whose exact inputs were computed before (the cache index's hits,
/// looked up by the scheduler and handed in) are not run: they become
/// `cached`, with the recorded outputs wired to their consumers. Steps
/// computed before that only cached steps read are not run either
/// (`not_needed`).
pub struct UseCacheHits;

impl Pass for UseCacheHits {
    fn name(&self) -> &'static str {
        "use-cache-hits"
    }

    fn apply(&self, plan: &mut Plan, facts: &Facts) -> Result<(), PlanError> {
        let mut decided = Vec::new();
        for step in &mut plan.steps {
            // A result kept from an earlier attempt wins over the cache.
            if !matches!(step.action, Action::Run) {
                continue;
            }
            let found = [
                (&facts.cache_hits, crate::ReuseStatus::Cached),
                (&facts.cache_not_needed, crate::ReuseStatus::NotNeeded),
            ]
            .into_iter()
            .find_map(|(found, status)| Some((found.get(&step.name)?, status)));
            if let Some(((outputs, why), status)) = found {
                step.action = Action::Reuse {
                    status,
                    outputs: outputs.clone(),
                };
                decided.push((step.name.clone(), why.clone()));
            }
        }
        for (name, why) in decided {
            plan.decide(self.name(), Some(&name), why);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Pipeline, ReuseStatus, StepOutputs};
    use std::collections::BTreeMap;

    fn workflow() -> couler_ir::Workflow {
        couler_ir::load(
            "apiVersion: couler.dev/v1alpha1\nname: w\nparameters: [{name: lr, default: '0.1'}, {name: n}]\nsteps:\n  - name: a\n    container: {image: x, args: ['--lr={{workflow.parameters.lr}}', '--n={{ workflow.parameters.n }}', '{{workflow.name}}']}\n  - name: b\n    script: {image: x, command: [sh], source: 'echo {{steps.a.outputs.result}} {{workflow.parameters.n}}'}\n",
            couler_ir::Format::Yaml,
        )
        .unwrap()
    }

    fn no_spans(
        _: &'static str,
        f: &mut dyn FnMut() -> Result<(), PlanError>,
    ) -> Result<(), PlanError> {
        f()
    }

    #[test]
    fn parameters_are_substituted_and_step_references_kept() {
        let facts = Facts {
            parameters: BTreeMap::from([("n".into(), "7".into())]),
            ..Default::default()
        };
        let plan = Pipeline::default()
            .plan(workflow(), &facts, no_spans)
            .unwrap();
        let a = plan.workflow.steps[0].container.as_ref().unwrap();
        assert_eq!(a.args, ["--lr=0.1", "--n=7", "w"]);
        let b = plan.workflow.steps[1].script.as_ref().unwrap();
        assert_eq!(b.source, "echo {{steps.a.outputs.result}} 7");
        assert_eq!(plan.parameters["lr"], "0.1");
    }

    #[test]
    fn a_missing_required_parameter_is_an_error() {
        let err = Pipeline::default()
            .plan(workflow(), &Facts::default(), no_spans)
            .unwrap_err();
        assert!(matches!(err, PlanError::MissingParameter(p) if p == "n"));
    }

    #[test]
    fn retries_keep_earlier_results() {
        let outputs = StepOutputs {
            result: Some("hello".into()),
            ..Default::default()
        };
        let facts = Facts {
            parameters: BTreeMap::from([("n".into(), "1".into())]),
            earlier: BTreeMap::from([("a".into(), (ReuseStatus::Succeeded, outputs.clone()))]),
            cache_hits: BTreeMap::from([
                ("a".into(), (StepOutputs::default(), "hit".into())),
                ("b".into(), (outputs.clone(), "cache hit, saves 5 s".into())),
            ]),
            ..Default::default()
        };
        let plan = Pipeline::default()
            .plan(workflow(), &facts, no_spans)
            .unwrap();
        assert_eq!(
            plan.steps[0].action,
            Action::Reuse {
                status: ReuseStatus::Succeeded,
                outputs: outputs.clone()
            }
        );
        // The earlier attempt's result wins; b comes from the cache.
        assert_eq!(
            plan.steps[1].action,
            Action::Reuse {
                status: ReuseStatus::Cached,
                outputs
            }
        );
        assert_eq!(plan.decisions.len(), 2);
    }

    #[test]
    fn a_kept_step_whose_artifact_was_not_recorded_runs_again_for_its_reader() {
        let yaml = "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - {name: prep, container: {image: x, command: [sh, -c, 'echo 1 > /tmp/d']}, outputs: {artifacts: [{name: data, path: /tmp/d}]}}\n  - {name: train, inputs: {artifacts: [{name: data, from: '{{steps.prep.outputs.artifacts.data}}', path: /tmp/d}]}, container: {image: x, command: [sh, -c, 'cat /tmp/d > /tmp/m']}, outputs: {artifacts: [{name: model, path: /tmp/m}]}}\n  - {name: evaluate, inputs: {artifacts: [{name: model, from: '{{steps.train.outputs.artifacts.model}}', path: /tmp/m}]}, container: {image: x, command: [cat, /tmp/m]}}\n";
        let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap();
        let stored = |location: &str| StepOutputs {
            artifacts: crate::Named::from_iter([(
                "data".into(),
                crate::ArtifactRef {
                    digest: "d".into(),
                    size: 1,
                    location: location.into(),
                },
            )]),
            ..Default::default()
        };
        let retry = |prep: StepOutputs| {
            let facts = Facts {
                earlier: BTreeMap::from([
                    ("prep".into(), (ReuseStatus::Succeeded, prep)),
                    (
                        "train".into(),
                        (ReuseStatus::Succeeded, StepOutputs::default()),
                    ),
                ]),
                ..Default::default()
            };
            let plan = Pipeline::default()
                .plan(workflow.clone(), &facts, no_spans)
                .unwrap();
            let runs: Vec<&str> = (plan.steps.iter())
                .filter(|s| matches!(s.action, Action::Run))
                .map(|s| s.name.as_str())
                .collect();
            (runs.join(" "), plan)
        };
        // `evaluate` failed; `train` recorded no model, so it runs again,
        // and reads `prep`'s data, stored where it can be read.
        let (runs, plan) = retry(stored("s3://b/prep/data"));
        assert_eq!(runs, "train evaluate");
        let why = plan
            .decisions
            .iter()
            .find(|d| d.step.as_deref() == Some("train"));
        assert!(
            why.unwrap()
                .message
                .contains("`evaluate` reads its artifact `model`")
        );
        // Where `prep`'s data was not recorded either, it runs again too.
        assert_eq!(retry(StepOutputs::default()).0, "prep train evaluate");
    }

    #[test]
    fn a_map_over_a_workflow_parameter_maps_over_its_items() {
        let yaml = "apiVersion: couler.dev/v1alpha1\nname: w\nparameters: [{name: sizes, default: '[1, 2]'}]\nsteps:\n  - {name: a, map: {from: '{{workflow.parameters.sizes}}'}, container: {image: x, args: ['{{item}}']}}\n";
        let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap();
        let plan = Pipeline::default()
            .plan(workflow.clone(), &Facts::default(), no_spans)
            .unwrap();
        let map = plan.workflow.steps[0].map.as_ref().unwrap();
        assert_eq!(map.from, None);
        assert_eq!(
            map.items,
            Some(vec![serde_json::json!(1), serde_json::json!(2)])
        );

        let facts = Facts {
            parameters: BTreeMap::from([("sizes".into(), "not a list".into())]),
            ..Default::default()
        };
        let err = Pipeline::default()
            .plan(workflow, &facts, no_spans)
            .unwrap_err();
        assert!(
            matches!(err, PlanError::NotAList { ref path, .. } if path == "/steps/0/map/from"),
            "{err}"
        );
    }
}
