//! Shapes read whatever the words: what is not wanted, ranges of dates,
//! task ids, steps in a branch after "then", lists of unknown actions.

use super::*;
use crate::decompose::{FanOutValues, Subtask};

fn tasks(text: &str) -> Vec<Subtask> {
    let plan = OfflinePlanner::default()
        .plan(text, &PlanOptions::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    plan.decomposition
        .stages
        .into_iter()
        .flat_map(|s| s.tasks)
        .collect()
}

/// The width of the first fan-out among `tasks`.
fn width(tasks: &[Subtask]) -> Option<usize> {
    tasks
        .iter()
        .find_map(|t| t.fan_out.as_ref())
        .map(|f| f.width())
}

fn names(text: &str) -> Vec<String> {
    tasks(text).iter().map(action::step_name).collect()
}

#[test]
fn what_is_not_wanted_makes_no_step() {
    for text in [
        "preprocess the tweets, train a classifier, evaluate it. do NOT deploy anything",
        "train the model and evaluate it, skip the deployment this time",
        "训练模型，评估一下，不要部署",
    ] {
        let kinds: Vec<TaskKind> = tasks(text).iter().map(|t| t.kind).collect();
        assert!(!kinds.contains(&TaskKind::Deploy), "{text}: {kinds:?}");
        assert!(kinds.contains(&TaskKind::Train), "{text}: {kinds:?}");
    }
    // A branch that asks for nothing is no step either.
    let n = tasks("计算 PSI，如果 PSI 大于 0.2 就重新训练，否则什么都不做").len();
    assert_eq!(n, 2);
}

#[test]
fn a_step_after_then_stays_in_its_branch() {
    let all = tasks(
        "compute the drift score; if it is above 0.2 retrain the model and then redeploy it; otherwise do nothing",
    );
    let conditional = all.iter().filter(|t| t.condition.is_some()).count();
    assert_eq!(conditional, 2, "{all:?}");
}

#[test]
fn dates_and_months_fan_out() {
    let all = tasks(
        "for every date from 2024-02-27 to 2024-03-02, run `sessionize.py`, then validate the row counts",
    );
    let dates = all
        .iter()
        .find_map(|t| match &t.fan_out.as_ref()?.values {
            FanOutValues::List(v) => Some(v.clone()),
            _ => None,
        })
        .expect("a fan-out over the dates");
    assert_eq!(
        dates,
        [
            "2024-02-27",
            "2024-02-28",
            "2024-02-29",
            "2024-03-01",
            "2024-03-02"
        ]
    );
    let all = tasks(
        "for each month from January to June 2023, extract text from the invoices, then reconcile the totals",
    );
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(width(&all), Some(6));
}

#[test]
fn counted_things_fan_out_in_both_languages() {
    let fanned = |text: &str| width(&tasks(text));
    assert_eq!(
        fanned("for each of the 20 podcast episodes: transcribe it, then publish the transcripts"),
        Some(20)
    );
    assert_eq!(
        fanned("对北京、上海、广州、深圳、杭州5个城市分别训练 XGBoost 模型，然后出报告"),
        Some(5)
    );
    assert_eq!(fanned("对100个测试问题分别生成答案，然后出报告"), Some(100));
}

#[test]
fn task_ids_and_unknown_verbs_in_a_list_are_steps() {
    assert_eq!(
        names("[extract_customers, extract_orders] >> build_fact_sales >> refresh_dashboard"),
        [
            "extract-customers",
            "extract-orders",
            "build-fact-sales",
            "refresh-dashboard"
        ]
    );
    let n = names(
        "read the changelog from kafka, apply the changes to the table, compact small files, and expire the old snapshots",
    );
    assert_eq!(n.len(), 4, "{n:?}");
    assert!(
        n[2].starts_with("compact") && n[3].starts_with("expire"),
        "{n:?}"
    );
    // A parameter is no task: "num_round from 50 to 100".
    assert_eq!(
        names("hyperparameter search for XGBoost with Katib, num_round from 50 to 100").len(),
        1
    );
}
