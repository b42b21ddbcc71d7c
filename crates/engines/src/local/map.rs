//! `map` steps: one instance `step[i]` per item, each a step of its own,
//! and the step's aggregated end.

use super::driver::{Phase, Run};
use super::step::{Instance, StepEnd, report_end, scope, skipped};
use super::template::{self, Scope};
use crate::{StepPhase, Update};
use couler_ir::Step;
use couler_optimizer::StepOutputs;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Fans a `map` step out into instances `step[i]` and aggregates them.
pub(super) async fn run_map(
    run: Arc<Run>,
    phase: Arc<Phase>,
    index: usize,
    halt: tokio_util::sync::CancellationToken,
) -> StepEnd {
    let ir = run.plan.ir_step(index);
    let map = ir.map.as_ref().expect("a map step");
    let name = &ir.name;
    let per_instance_when = template::reads_item(&ir.when);
    let items = {
        let outputs = run.outputs.read().unwrap_or_else(|e| e.into_inner());
        let scope = scope(&run, &phase, &outputs, None, None);
        fan_out(&scope, ir, per_instance_when)
    };
    let items = match items {
        Ok(items) => items,
        Err(end) => return report_end(&run, name, end).await,
    };
    let running = StepEnd {
        phase: StepPhase::Running,
        outputs: Arc::default(),
        message: Some(format!("fan-out over {} items", items.len())),
    };
    run.send(Update::Step(running.state(name))).await;

    let slots = map
        .parallelism
        .map(|p| Arc::new(Semaphore::new(p as usize)));
    let mut tasks = JoinSet::new();
    let count = items.len();
    for (i, item) in items.into_iter().enumerate() {
        let instance = Instance {
            run: run.clone(),
            phase: phase.clone(),
            halt: halt.clone(),
            index,
            name: format!("{name}[{i}]"),
            item: Some(item),
            slots: slots.clone(),
            judge_when: per_instance_when,
        };
        tasks.spawn(async move { (i, instance.run().await) });
    }
    let mut ends: Vec<Option<StepEnd>> = (0..count).map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((i, end)) => ends[i] = Some(end),
            Err(e) => {
                return report_end(&run, name, StepEnd::failed(format!("internal error: {e}")))
                    .await;
            }
        }
    }
    let ends: Vec<StepEnd> = ends
        .into_iter()
        .map(|e| e.expect("every instance ends"))
        .collect();
    report_end(&run, name, aggregate(ir, &ends)).await
}

/// The items of a map step, or why it does not run: its (item-free)
/// `when` is false, or `from` is not a JSON list.
fn fan_out(scope: &Scope<'_>, ir: &Step, per_instance_when: bool) -> Result<Vec<Value>, StepEnd> {
    if !ir.when.is_empty() && !per_instance_when {
        match scope.all_hold(&ir.when) {
            Ok(true) => {}
            Ok(false) => return Err(skipped(scope.first_false(&ir.when).unwrap_or_default())),
            Err(e) => return Err(StepEnd::failed(e)),
        }
    }
    let map = ir.map.as_ref().expect("a map step");
    match (&map.items, &map.from) {
        (Some(items), _) => Ok(items.clone()),
        (None, Some(from)) => scope
            .render(from)
            .and_then(|text| {
                serde_json::from_str::<Vec<Value>>(&text)
                    .map_err(|_| format!("map.from {from} is not a JSON list: {text:.200}"))
            })
            .map_err(StepEnd::failed),
        (None, None) => Err(StepEnd::failed("map needs items or from".into())),
    }
}

/// The map step's own end: failed if an instance failed, otherwise
/// cancelled if one was, skipped if all were, else succeeded with each
/// output as a JSON list over the instances that ran.
fn aggregate(ir: &Step, ends: &[StepEnd]) -> StepEnd {
    if let Some((i, end)) = ends
        .iter()
        .enumerate()
        .find(|(_, e)| e.phase == StepPhase::Failed)
    {
        let why = end.message.as_deref().unwrap_or("failed");
        return StepEnd::failed(format!("instance `{}[{i}]` failed: {why}", ir.name));
    }
    if ends.iter().any(|e| e.phase == StepPhase::Cancelled) {
        return StepEnd {
            phase: StepPhase::Cancelled,
            outputs: Arc::default(),
            message: Some("an instance was cancelled".into()),
        };
    }
    if !ends.is_empty() && ends.iter().all(|e| e.phase == StepPhase::Skipped) {
        return skipped("every instance was skipped".into());
    }
    let ran: Vec<&StepOutputs> = ends
        .iter()
        .filter(|e| e.phase != StepPhase::Skipped)
        .map(|e| &*e.outputs)
        .collect();
    let mut outputs = StepOutputs {
        result: Some(crate::track::json_list(
            ran.iter().map(|o| o.result.as_deref().unwrap_or_default()),
        )),
        ..Default::default()
    };
    for p in ir.outputs.iter().flat_map(|o| &o.parameters) {
        let values = ran.iter().map(|o| {
            o.parameters
                .get(&p.name)
                .map(String::as_str)
                .unwrap_or_default()
        });
        outputs
            .parameters
            .insert(p.name.clone(), crate::track::json_list(values));
    }
    StepEnd {
        phase: StepPhase::Succeeded,
        outputs: Arc::new(outputs),
        message: Some(format!("{} instances", ends.len())),
    }
}
