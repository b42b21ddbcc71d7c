//! Stages of split and searching plans, decided from recorded step states.

use super::*;
use crate::split::Budget;
use crate::{Facts, Named, Pipeline};

fn plan(yaml: &str, budget: Budget) -> (Plan, Dag) {
    let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap();
    let facts = Facts {
        split_budget: budget,
        ..Default::default()
    };
    let plan = Pipeline::default()
        .plan(workflow, &facts, |_, f| f())
        .unwrap();
    let dag = couler_ir::validate(&plan.workflow, &Default::default()).unwrap();
    (plan, dag)
}

const CHAIN: &str = r#"
apiVersion: couler.dev/v1alpha1
name: chain
steps:
  - {name: a, script: {image: x, command: [sh], source: 'echo 1 > {{outputs.parameters.n.path}}'}, outputs: {parameters: [{name: n, path: /n}]}}
  - {name: b, script: {image: x, command: [sh], source: 'echo {{steps.a.outputs.parameters.n}}'}}
  - {name: c, depends: [b], script: {image: x, command: [sh], source: 'echo c'}}
  - {name: d, depends: [c], script: {image: x, command: [sh], source: 'echo d'}}
onExit:
  - {name: report, script: {image: x, command: [sh], source: 'echo {{workflow.status}} {{steps.a.outputs.parameters.n}}'}}
"#;

fn done(outputs: StepOutputs) -> Progress {
    Progress::Done(ReuseStatus::Succeeded, outputs)
}

fn n(value: &str) -> StepOutputs {
    StepOutputs {
        parameters: Named::from_iter([("n".into(), value.into())]),
        ..Default::default()
    }
}

#[test]
fn a_split_plan_runs_part_by_part_with_upstream_outputs_carried_over() {
    let budget = Budget {
        max_steps: Some(2),
        ..Default::default()
    };
    let (plan, dag) = plan(CHAIN, budget);
    assert_eq!(plan.parts.len(), 2, "{:?}", plan.parts);
    assert!(plan.is_staged());
    let none = BTreeSet::new();
    let mut steps = BTreeMap::new();

    let first = advance(&plan, &dag, &steps, false, &none);
    assert_eq!(first.start.len(), 1);
    assert_eq!(first.start[0].id, "p0");
    assert_eq!(
        first.start[0].runs,
        BTreeSet::from(["a".into(), "b".into()])
    );
    // While p0 runs, nothing else starts.
    let active = BTreeSet::from(["p0".to_owned()]);
    assert!(
        advance(&plan, &dag, &steps, false, &active)
            .start
            .is_empty()
    );

    steps.insert("a".into(), done(n("41")));
    steps.insert("b".into(), done(StepOutputs::default()));
    let second = advance(&plan, &dag, &steps, false, &none);
    let stage = &second.start[0];
    assert_eq!(stage.id, "p1");
    assert_eq!(stage.runs, BTreeSet::from(["c".into(), "d".into()]));
    // b stands in for the first part, with its result; a is not needed.
    let names: Vec<&str> = stage.plan.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["b", "c", "d"]);
    assert!(matches!(stage.plan.steps[0].action, Action::Reuse { .. }));
    couler_ir::validate(&stage.plan.workflow, &Default::default()).unwrap();

    steps.insert("c".into(), done(StepOutputs::default()));
    steps.insert("d".into(), done(StepOutputs::default()));
    let exit = advance(&plan, &dag, &steps, false, &none);
    let stage = &exit.start[0];
    assert_eq!(stage.id, "exit");
    let report = stage
        .plan
        .workflow
        .steps
        .iter()
        .find(|s| s.name == "report")
        .unwrap();
    let source = &report.script.as_ref().unwrap().source;
    assert_eq!(source, "echo succeeded {{steps.a.outputs.parameters.n}}");
    // The exit handler reads a's output from its stand-in.
    assert_eq!(
        stage
            .plan
            .steps
            .iter()
            .find(|s| s.name == "a")
            .unwrap()
            .action,
        Action::Reuse {
            status: ReuseStatus::Succeeded,
            outputs: n("41")
        }
    );
    couler_ir::validate(&stage.plan.workflow, &Default::default()).unwrap();

    steps.insert("report".into(), done(StepOutputs::default()));
    let end = advance(&plan, &dag, &steps, false, &none);
    assert_eq!(end.finish, Some((Outcome::Succeeded, None)));
}

#[test]
fn a_stage_keeps_what_the_plan_reuses_instead_of_running_it() {
    let budget = Budget {
        max_steps: Some(2),
        ..Default::default()
    };
    let (mut plan, dag) = plan(CHAIN, budget);
    // The cache had `c`: planning made it a hit.
    let hit = Action::Reuse {
        status: ReuseStatus::Cached,
        outputs: StepOutputs::default(),
    };
    let c = plan.steps.iter().position(|s| s.name == "c").unwrap();
    plan.steps[c].action = hit.clone();
    let mut steps = BTreeMap::new();
    steps.insert("a".into(), done(n("41")));
    steps.insert("b".into(), done(StepOutputs::default()));
    let next = advance(&plan, &dag, &steps, false, &BTreeSet::new());
    let stage = &next.start[0];
    assert_eq!(stage.runs, BTreeSet::from(["c".into(), "d".into()]));
    let action = |name: &str| {
        &stage
            .plan
            .steps
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .action
    };
    assert_eq!(action("c"), &hit, "a hit is reported, not run");
    assert_eq!(action("d"), &Action::Run);
}

#[test]
fn after_a_failure_nothing_new_starts_and_the_exit_handlers_learn_it() {
    let budget = Budget {
        max_steps: Some(2),
        ..Default::default()
    };
    let (plan, dag) = plan(CHAIN, budget);
    let none = BTreeSet::new();
    let mut steps = BTreeMap::new();
    steps.insert("a".into(), done(n("1")));
    steps.insert("b".into(), Progress::Failed("exit status 1".into()));

    let next = advance(&plan, &dag, &steps, false, &none);
    assert!(next.start.is_empty());
    let cancelled: Vec<&str> = next.settle.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(cancelled, ["c", "d"]);
    for (name, settle) in next.settle {
        assert!(matches!(settle, Settle::Cancelled(_)));
        steps.insert(name, Progress::Cancelled);
    }
    let exit = advance(&plan, &dag, &steps, false, &none);
    let report = &exit.start[0].plan.workflow.steps;
    let handler = report.iter().find(|s| s.name == "report").unwrap();
    assert!(
        handler
            .script
            .as_ref()
            .unwrap()
            .source
            .starts_with("echo failed")
    );
    steps.insert("report".into(), done(StepOutputs::default()));
    let (outcome, message) = advance(&plan, &dag, &steps, false, &none).finish.unwrap();
    assert_eq!(outcome, Outcome::Failed);
    assert!(message.unwrap().contains("step `b` failed"));
}

#[test]
fn a_cancelled_run_waits_for_its_running_stages_then_ends_cancelled() {
    let budget = Budget {
        max_steps: Some(2),
        ..Default::default()
    };
    let (plan, dag) = plan(CHAIN, budget);
    let mut steps = BTreeMap::from([("a".to_owned(), Progress::Running)]);
    let active = BTreeSet::from(["p0".to_owned()]);
    let next = advance(&plan, &dag, &steps, true, &active);
    assert!(next.start.is_empty() && next.settle.is_empty() && next.finish.is_none());

    steps.insert("a".into(), Progress::Cancelled);
    let none = BTreeSet::new();
    let next = advance(&plan, &dag, &steps, true, &none);
    assert_eq!(next.settle.len(), 3, "b, c and d never start");
    for (name, _) in next.settle {
        steps.insert(name, Progress::Cancelled);
    }
    steps.insert("report".into(), done(StepOutputs::default()));
    let end = advance(&plan, &dag, &steps, true, &none);
    assert_eq!(end.finish, Some((Outcome::Cancelled, None)));
}

#[test]
fn a_taken_over_failing_run_reattaches_to_the_parts_still_running() {
    let budget = Budget {
        max_steps: Some(2),
        ..Default::default()
    };
    let (plan, dag) = plan(CHAIN, budget);
    let steps = BTreeMap::from([
        ("a".to_owned(), Progress::Failed("boom".into())),
        ("b".to_owned(), Progress::Running),
    ]);
    let next = advance(&plan, &dag, &steps, false, &BTreeSet::new());
    assert_eq!(next.start.len(), 1);
    assert_eq!(next.start[0].id, "p0");
}

const TUNED: &str = r#"
apiVersion: couler.dev/v1alpha1
name: tuned
steps:
  - {name: data, script: {image: x, command: [sh], source: 'echo d'}}
  - name: train
    depends: [data]
    script: {image: x, command: [sh], source: 'echo lr={{trial.parameters.lr}} > {{outputs.parameters.loss.path}}'}
    outputs: {parameters: [{name: loss, path: /loss}]}
    tune:
      space: {lr: {type: categorical, values: ['0.1', '0.2', '0.3', '0.4']}}
      objective: {metric: loss, goal: minimize}
      strategy: grid
      maxTrials: 4
      parallelism: 2
  - {name: report, script: {image: x, command: [sh], source: 'echo {{steps.train.outputs.parameters.loss}}'}}
"#;

fn loss(v: &str) -> Progress {
    Progress::Done(
        ReuseStatus::Succeeded,
        StepOutputs {
            parameters: Named::from_iter([("loss".into(), v.into())]),
            ..Default::default()
        },
    )
}

#[test]
fn a_search_runs_its_trials_in_batches_and_the_step_takes_the_best_trial() {
    let (plan, dag) = plan(TUNED, Budget::default());
    assert_eq!(
        plan.parts.len(),
        3,
        "data, train and report each alone: {:?}",
        plan.parts
    );
    assert_eq!(plan.tuning["train"].configs.len(), 4);
    let none = BTreeSet::new();
    let mut steps = BTreeMap::from([("data".to_owned(), done(StepOutputs::default()))]);

    let first = advance(&plan, &dag, &steps, false, &none);
    assert!(matches!(&first.settle[..], [(s, Settle::Running(_))] if s == "train"));
    let stage = &first.start[0];
    assert_eq!(stage.id, "train-t0");
    assert_eq!(
        stage.runs,
        BTreeSet::from(["train-t0".into(), "train-t1".into()])
    );
    let t1 = stage
        .plan
        .workflow
        .steps
        .iter()
        .find(|s| s.name == "train-t1")
        .unwrap();
    assert!(t1.tune.is_none());
    assert!(
        t1.script
            .as_ref()
            .unwrap()
            .source
            .starts_with("echo lr=0.2 > ")
    );
    assert_eq!(t1.depends, ["data"]);
    couler_ir::validate(&stage.plan.workflow, &Default::default()).unwrap();

    steps.insert("train".into(), Progress::Running);
    steps.insert("train-t0".into(), loss("0.5"));
    steps.insert("train-t1".into(), loss("0.2"));
    let second = advance(&plan, &dag, &steps, false, &none);
    assert_eq!(second.start[0].id, "train-t2");
    assert!(second.settle.is_empty());

    steps.insert("train-t2".into(), Progress::Failed("out of luck".into()));
    steps.insert("train-t3".into(), loss("0.3"));
    let done_search = advance(&plan, &dag, &steps, false, &none);
    let (name, Settle::Succeeded(outputs, message)) = &done_search.settle[0] else {
        panic!("{:?}", done_search.settle);
    };
    assert_eq!(name, "train");
    assert_eq!(outputs.parameters.get("loss").unwrap(), "0.2");
    assert!(message.contains("t1"), "{message}");
    let (_, summary) = &done_search.tuned[0];
    assert_eq!(summary.best, "t1");
    assert_eq!(summary.trials.len(), 4);

    steps.insert("train".into(), done(outputs.clone()));
    let report = advance(&plan, &dag, &steps, false, &none);
    let stage = &report.start[0];
    assert_eq!(stage.runs, BTreeSet::from(["report".into()]));
    assert!(matches!(
        &stage.plan.steps.iter().find(|s| s.name == "train").unwrap().action,
        Action::Reuse { outputs, .. } if outputs.parameters.get("loss").unwrap() == "0.2"
    ));
}

#[test]
fn a_split_that_would_pass_an_unrecorded_artifact_between_sub_workflows_is_refused() {
    let yaml = crate::fixtures::TRAIN_TUNE_EVALUATE;
    let budget = Budget {
        max_steps: Some(1),
        ..Budget::default()
    };
    // Engines that record where artifacts are stored pass them on.
    let (split, _) = plan(yaml, budget);
    assert_eq!(split.parts.len(), 3);
    // Tekton's stay in the run's volume: refused before anything runs,
    // at the input that would read it.
    let facts = Facts {
        split_budget: budget,
        engine_loses_artifacts: true,
        ..Default::default()
    };
    let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap();
    let refused = Pipeline::default().plan(workflow, &facts, |_, f| f());
    let Err(crate::PlanError::Invalid(problems)) = refused else {
        panic!("{refused:?}");
    };
    assert_eq!(problems.0[0].path, "/steps/2/inputs/artifacts/0/from");
    assert!(
        problems.0[0]
            .message
            .contains("raise the tenant's split budget")
    );
}
