//! The shipped evaluation set: the offline planner must pass at least 90%
//! of `tests/nl/cases.yaml`, and every workflow it produces must validate.

use couler_nl::eval::{self, Case};
use couler_nl::offline::{OfflinePlanner, PlanOptions};

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/nl/cases.yaml");
    let text = std::fs::read_to_string(path).expect("tests/nl/cases.yaml");
    eval::load_cases(&text).expect("the cases parse")
}

#[test]
fn offline_planner_passes_the_evaluation_set() {
    let cases = cases();
    assert!(cases.len() >= 30, "only {} cases", cases.len());
    let chinese = cases
        .iter()
        .filter(|c| {
            c.description
                .chars()
                .any(|ch| ('\u{4e00}'..='\u{9fff}').contains(&ch))
        })
        .count();
    assert!(chinese >= 10, "only {chinese} Chinese cases");
    let report = eval::run(&OfflinePlanner::default(), &cases);
    let failed: Vec<_> = report.results.iter().filter(|r| !r.passed).collect();
    assert!(
        report.pass_rate() >= 0.9,
        "pass rate {:.3}; failures: {failed:#?}",
        report.pass_rate()
    );
}

#[test]
fn every_produced_workflow_validates_and_round_trips() {
    let planner = OfflinePlanner::default();
    let mut produced = 0;
    for case in cases() {
        let Ok(plan) = planner.plan(&case.description, &PlanOptions::default()) else {
            continue;
        };
        produced += 1;
        couler_ir::validate(&plan.workflow, &couler_ir::Limits::default())
            .unwrap_or_else(|p| panic!("{}: {p:?}", case.name));
        let yaml = couler_ir::hash::canonical_yaml(&plan.workflow);
        let back = couler_ir::load(&yaml, couler_ir::Format::Yaml)
            .unwrap_or_else(|p| panic!("{}: {p:?}\n{yaml}", case.name));
        assert_eq!(back, plan.workflow, "{}", case.name);
    }
    assert!(produced >= 25, "only {produced} workflows produced");
}

#[test]
fn a_wrong_expectation_fails_its_case() {
    let case: Vec<Case> = eval::load_cases(
        "- name: wrong\n  description: load the data and train an SVM\n  expect:\n    stages: [load, deploy]\n    steps: {min: 5, max: 9}\n",
    )
    .unwrap();
    let report = eval::run(&OfflinePlanner::default(), &case);
    assert_eq!(report.pass_rate(), 0.0);
    assert_eq!(
        report.results[0].failures.len(),
        2,
        "{:?}",
        report.results[0]
    );
}
