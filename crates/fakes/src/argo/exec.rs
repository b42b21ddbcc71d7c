//! Walking templates: DAGs and their tasks (fan-outs, `when`, `depends`),
//! retries, suspends; pods are in [`super::pod`].

use super::expr::{self, TaskResult};
use super::text::{self, Scope};
pub(super) use super::values::{Args, Art, Inputs, Outcome, Outputs, Source};
use super::{Halt, NewNode, Run, seconds, text_of};
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// One call of a template: the node it makes.
#[derive(Debug, Clone)]
pub(super) struct Call {
    pub name: String,
    pub display: String,
    pub template: String,
    pub args: Args,
    pub boundary: Option<String>,
    pub parents: Vec<String>,
    /// Part of the exit handler (runs after `Stop`).
    pub exit: bool,
}

impl Call {
    pub fn root(name: &str, display: &str, template: &str, args: Args, exit: bool) -> Call {
        Call {
            name: name.to_owned(),
            display: display.to_owned(),
            template: template.to_owned(),
            args,
            boundary: None,
            parents: Vec::new(),
            exit,
        }
    }
}

/// Runs one template call to its end.
pub(super) fn execute(run: &Arc<Run>, call: Call) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let Some(tmpl) = run.templates.get(&call.template).cloned() else {
            let message = format!("template {:?} is not defined", call.template);
            return ended(run, &call, "Pod", "Error", message, None);
        };
        let runs_pod = tmpl["container"].is_object() || tmpl["script"].is_object();
        let inputs = match resolve_inputs(run, &tmpl, &call.args) {
            Ok(i) => i,
            Err(e) => {
                let kind = if runs_pod { "Pod" } else { "DAG" };
                return ended(run, &call, kind, "Error", e, None);
            }
        };
        if tmpl["dag"].is_object() {
            dag(run, &call, &tmpl, &inputs).await
        } else if runs_pod && tmpl["retryStrategy"].is_object() {
            retry(run, &call, &tmpl, &inputs).await
        } else if runs_pod {
            super::pod::run_pod(run, &call, &tmpl, &inputs).await
        } else if tmpl["suspend"].is_object() {
            suspend(run, &call, &tmpl).await
        } else {
            let message = format!(
                "template {:?}: the fake Argo controller runs dag, container, script and suspend templates only",
                call.template
            );
            ended(run, &call, "Pod", "Error", message, None)
        }
    })
}

/// A node that ends as it is made (errors, skips, omissions).
fn ended(
    run: &Run,
    call: &Call,
    kind: &'static str,
    phase: &'static str,
    message: String,
    inputs: Option<Value>,
) -> Outcome {
    let node = run.add_node(NewNode {
        name: &call.name,
        display: &call.display,
        kind,
        template: &call.template,
        phase,
        boundary: call.boundary.as_deref(),
        parents: &call.parents,
        message: Some(message.clone()),
        inputs,
    });
    Outcome {
        node,
        phase,
        message: Some(message),
        outputs: Outputs::default(),
    }
}

fn resolve_inputs(run: &Run, tmpl: &Value, args: &Args) -> Result<Inputs, String> {
    let globals = run.globals.lock().unwrap().clone();
    let mut inputs = Inputs::default();
    for p in tmpl["inputs"]["parameters"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = p["name"].as_str().unwrap_or_default();
        let value = match (args.parameters.get(name), &p["value"]) {
            (Some(v), _) => v.clone(),
            (None, Value::Null) => match &p["default"] {
                Value::Null => return Err(format!("inputs.parameters.{name} was not supplied")),
                d => text::substitute(&text_of(d), &globals)?,
            },
            (None, v) => text::substitute(&text_of(v), &globals)?,
        };
        inputs.parameters.push((name.to_owned(), value));
    }
    for a in tmpl["inputs"]["artifacts"].as_array().into_iter().flatten() {
        let name = a["name"].as_str().unwrap_or_default();
        let source = match args
            .artifacts
            .get(name)
            .cloned()
            .or_else(|| Source::from_json(a))
        {
            Some(s) => s,
            None if a["optional"].as_bool() == Some(true) => continue,
            None => return Err(format!("inputs.artifacts.{name} was not supplied")),
        };
        inputs.artifacts.push(Art {
            name: name.to_owned(),
            path: a["path"].as_str().map(str::to_owned),
            source,
        });
    }
    Ok(inputs)
}

/// A finished task of a DAG.
#[derive(Debug, Clone)]
struct Done {
    node: String,
    results: Vec<TaskResult>,
}

fn task_result(phase: &str) -> TaskResult {
    match phase {
        "Succeeded" => TaskResult::Succeeded,
        "Skipped" => TaskResult::Skipped,
        "Omitted" => TaskResult::Omitted,
        "Error" => TaskResult::Errored,
        _ => TaskResult::Failed,
    }
}

async fn dag(run: &Arc<Run>, call: &Call, tmpl: &Value, inputs: &Inputs) -> Outcome {
    let id = run.add_node(NewNode {
        name: &call.name,
        display: &call.display,
        kind: "DAG",
        template: &call.template,
        phase: "Running",
        boundary: call.boundary.as_deref(),
        parents: &call.parents,
        message: None,
        inputs: inputs.to_json(),
    });
    let tasks: Vec<Value> = tmpl["dag"]["tasks"].as_array().cloned().unwrap_or_default();
    let name_of = |t: &Value| t["name"].as_str().unwrap_or_default().to_owned();
    let deps: Vec<Vec<String>> = tasks
        .iter()
        .map(|t| match t["depends"].as_str() {
            Some(d) => expr::depends_tasks(d),
            None => t["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|d| d.as_str().map(str::to_owned))
                .collect(),
        })
        .collect();
    // A failure is handled when some task's `depends` asks for it.
    let handled = |task: &str| {
        tasks.iter().any(|t| {
            let d = t["depends"].as_str().unwrap_or_default();
            ["Failed", "Errored", "Completed", "AnyFailed", "AllFailed"]
                .iter()
                .any(|r| d.contains(&format!("{task}.{r}")))
        })
    };
    let limit = tmpl["parallelism"]
        .as_u64()
        .map(|n| Arc::new(Semaphore::new(n.max(1) as usize)));
    let mut scope = run.globals.lock().unwrap().clone();
    scope.extend(inputs.scope());
    let mut artifacts: HashMap<String, Source> = HashMap::new();
    let mut done: HashMap<String, Done> = HashMap::new();
    let mut started = vec![false; tasks.len()];
    let mut running = FuturesUnordered::new();
    let mut failed: Option<String> = None;
    loop {
        let mut progressed = true;
        while progressed && run.halted(call.exit).is_none() {
            progressed = false;
            for (i, task) in tasks.iter().enumerate() {
                if started[i] || !deps[i].iter().all(|d| done.contains_key(d)) {
                    continue;
                }
                let name = name_of(task);
                let parents: Vec<String> = if deps[i].is_empty() {
                    vec![id.clone()]
                } else {
                    deps[i]
                        .iter()
                        .flat_map(|d| run.outbound(&done[d].node))
                        .collect()
                };
                let go = match task["depends"].as_str() {
                    Some(d) => expr::depends(d, &|t| done.get(t).map(|d| d.results.clone())),
                    None => Ok(deps[i].iter().all(|d| {
                        done[d]
                            .results
                            .iter()
                            .all(|r| matches!(r, TaskResult::Succeeded | TaskResult::Skipped))
                    })),
                };
                let node_call = Call {
                    name: format!("{}.{name}", call.name),
                    display: name.clone(),
                    template: task["template"].as_str().unwrap_or_default().to_owned(),
                    args: Args::default(),
                    boundary: Some(id.clone()),
                    parents,
                    exit: call.exit,
                };
                let (phase, message) = match go {
                    Ok(true) if failed.is_some() => continue,
                    Ok(true) => {
                        started[i] = true;
                        progressed = true;
                        let ctx = TaskCall {
                            task: task.clone(),
                            call: node_call,
                            scope: scope.clone(),
                            artifacts: artifacts.clone(),
                            limit: limit.clone(),
                        };
                        running.push(run_task(run, ctx));
                        continue;
                    }
                    Ok(false) => ("Omitted", "omitted: depends condition not met".to_owned()),
                    Err(e) => ("Error", format!("invalid 'depends' expression: {e}")),
                };
                started[i] = true;
                progressed = true;
                let kind = if phase == "Omitted" { "Skipped" } else { "Pod" };
                let out = ended(run, &node_call, kind, phase, message, None);
                if phase == "Error" && !handled(&name) {
                    failed.get_or_insert(out.node.clone());
                }
                done.insert(
                    name,
                    Done {
                        node: out.node,
                        results: vec![task_result(phase)],
                    },
                );
            }
        }
        let Some((name, out, results)) = running.next().await else {
            break;
        };
        let prefix = format!("tasks.{name}");
        scope.insert(format!("{prefix}.id"), out.node.clone());
        scope.insert(format!("{prefix}.status"), out.phase.to_owned());
        if let Some(r) = &out.outputs.result {
            scope.insert(format!("{prefix}.outputs.result"), r.clone());
        }
        if let Some(c) = &out.outputs.exit_code {
            scope.insert(format!("{prefix}.exitCode"), c.clone());
        }
        for (p, v) in &out.outputs.parameters {
            scope.insert(format!("{prefix}.outputs.parameters.{p}"), v.clone());
        }
        for a in &out.outputs.artifacts {
            artifacts.insert(
                format!("{prefix}.outputs.artifacts.{}", a.name),
                a.source.clone(),
            );
        }
        if matches!(out.phase, "Failed" | "Error") && !handled(&name) {
            failed.get_or_insert(out.node.clone());
        }
        done.insert(
            name,
            Done {
                node: out.node,
                results,
            },
        );
    }
    // Leaves: tasks no other task depends on.
    let leaves: Vec<String> = tasks
        .iter()
        .map(name_of)
        .filter(|t| !deps.iter().any(|d| d.contains(t)))
        .filter_map(|t| done.get(&t).map(|d| d.node.clone()))
        .flat_map(|n| run.outbound(&n))
        .collect();
    run.update(&id, |n| n.outbound_nodes = leaves);
    let all_done = done.len() == tasks.len();
    let mut outcome = Outcome {
        node: id.clone(),
        phase: "Succeeded",
        message: None,
        outputs: Outputs::default(),
    };
    if let Some(child) = failed {
        outcome.phase = "Failed";
        outcome.message = Some(format!("child '{child}' failed"));
    } else if let Some(halt) = run.halted(call.exit).filter(|_| !all_done) {
        outcome.phase = "Failed";
        outcome.message = Some(halt.node_message());
    } else if !all_done {
        outcome.phase = "Error";
        outcome.message = Some("some tasks depend on tasks that are not in the DAG".into());
    } else {
        match dag_outputs(tmpl, &scope, &artifacts) {
            Ok(o) => outcome.outputs = o,
            Err(e) => {
                outcome.phase = "Error";
                outcome.message = Some(e);
            }
        }
    }
    run.finish(&id, &outcome);
    outcome
}

/// A DAG template's outputs, from its tasks'.
fn dag_outputs(
    tmpl: &Value,
    scope: &Scope,
    artifacts: &HashMap<String, Source>,
) -> Result<Outputs, String> {
    let mut outputs = Outputs::default();
    for p in tmpl["outputs"]["parameters"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = p["name"].as_str().unwrap_or_default().to_owned();
        let from = &p["valueFrom"];
        let value = if let Some(param) = from["parameter"].as_str() {
            text::substitute(param, scope)?
        } else if let Some(e) = from["expression"].as_str() {
            expr::eval(e, &text::environment(scope))?.text()
        } else {
            text::substitute(&text_of(&p["value"]), scope)?
        };
        outputs.parameters.push((name, value));
    }
    for a in tmpl["outputs"]["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = a["name"].as_str().unwrap_or_default().to_owned();
        let from = a["from"].as_str().unwrap_or_default();
        let source = artifact_from(from, artifacts)
            .ok_or_else(|| format!("unable to resolve outputs from scope: {from}"))?;
        outputs.artifacts.push(Art {
            name,
            path: None,
            source,
        });
    }
    Ok(outputs)
}

fn artifact_from(from: &str, artifacts: &HashMap<String, Source>) -> Option<Source> {
    let tag = from.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    artifacts.get(tag).cloned()
}

/// A task about to run, with what it can see.
struct TaskCall {
    task: Value,
    call: Call,
    scope: Scope,
    artifacts: HashMap<String, Source>,
    limit: Option<Arc<Semaphore>>,
}

/// Runs a task (every instance of a fanned-out one); its name, outcome
/// and results for `depends`.
fn run_task(run: &Arc<Run>, t: TaskCall) -> BoxFuture<'_, (String, Outcome, Vec<TaskResult>)> {
    Box::pin(async move {
        let name = t.call.display.clone();
        let items = if let Some(items) = t.task["withItems"].as_array() {
            Some(Ok(items.clone()))
        } else {
            t.task["withParam"].as_str().map(|p| {
                text::substitute(p, &t.scope).and_then(|text| {
                    serde_json::from_str::<Vec<Value>>(&text).map_err(|e| {
                        format!("withParam value could not be parsed as a JSON list: {text}: {e}")
                    })
                })
            })
        };
        let items = match items {
            None => {
                let out = instance(run, &t, t.call.clone(), &t.scope).await;
                let result = task_result(out.phase);
                return (name, out, vec![result]);
            }
            Some(Err(e)) => {
                let out = ended(run, &t.call, "TaskGroup", "Error", e, None);
                return (name, out, vec![TaskResult::Errored]);
            }
            Some(Ok(items)) => items,
        };
        let group = run.add_node(NewNode {
            name: &t.call.name,
            display: &t.call.display,
            kind: "TaskGroup",
            template: &t.call.template,
            phase: "Running",
            boundary: t.call.boundary.as_deref(),
            parents: &t.call.parents,
            message: None,
            inputs: None,
        });
        let mut instances = Vec::with_capacity(items.len());
        let t = &t;
        for (i, item) in items.iter().enumerate() {
            let label = match item {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let mut scope = t.scope.clone();
            scope.insert("item".into(), label.clone());
            if let Value::Object(fields) = item {
                for (k, v) in fields {
                    scope.insert(format!("item.{k}"), text_of(v));
                }
            }
            let call = Call {
                name: format!("{}({i}:{label})", t.call.name),
                display: format!("{}({i}:{label})", t.call.display),
                parents: vec![group.clone()],
                ..t.call.clone()
            };
            instances.push(async move { instance(run, t, call, &scope).await });
        }
        let outs = futures::future::join_all(instances).await;
        let results: Vec<TaskResult> = outs.iter().map(|o| task_result(o.phase)).collect();
        let phase = if outs.iter().any(|o| matches!(o.phase, "Failed" | "Error")) {
            "Failed"
        } else if outs
            .iter()
            .all(|o| matches!(o.phase, "Skipped" | "Omitted"))
            && !outs.is_empty()
        {
            "Skipped"
        } else {
            "Succeeded"
        };
        let outcome = Outcome {
            node: group.clone(),
            phase,
            message: (phase == "Failed").then(|| "child failed".to_owned()),
            outputs: aggregate(&outs),
        };
        // Argo computes a fan-out's aggregated outputs where they are read
        // and keeps none on the group node.
        run.finish(
            &group,
            &Outcome {
                outputs: Outputs::default(),
                ..outcome.clone()
            },
        );
        (name, outcome, results)
    })
}

/// A fan-out's outputs: each parameter and the results as JSON lists
/// (JSON objects embedded, anything else as a string).
fn aggregate(outs: &[Outcome]) -> Outputs {
    let ran: Vec<&Outcome> = outs.iter().filter(|o| o.phase == "Succeeded").collect();
    let mut outputs = Outputs::default();
    if ran.iter().any(|o| o.outputs.result.is_some()) {
        let list: Vec<Value> = ran
            .iter()
            .map(|o| {
                let r = o.outputs.result.clone().unwrap_or_default();
                match serde_json::from_str::<Value>(&r) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => Value::String(r),
                }
            })
            .collect();
        outputs.result = Some(Value::Array(list).to_string());
    }
    if let Some(first) = ran.first() {
        for (name, _) in &first.outputs.parameters {
            let list: Vec<Value> = ran
                .iter()
                .filter_map(|o| o.outputs.parameters.iter().find(|(n, _)| n == name))
                .map(|(_, v)| Value::String(v.clone()))
                .collect();
            outputs
                .parameters
                .push((name.clone(), Value::Array(list).to_string()));
        }
    }
    outputs
}

/// One instance of a task: its `when`, its arguments, then the template.
async fn instance(run: &Arc<Run>, t: &TaskCall, mut call: Call, scope: &Scope) -> Outcome {
    if let Some(when) = t.task["when"].as_str() {
        let decided = text::substitute(when, scope).and_then(|w| {
            expr::condition(&w, &BTreeMap::new())
                .map(|go| (go, w.clone()))
                .map_err(|e| format!("invalid 'when' expression {w:?}: {e}"))
        });
        match decided {
            Ok((true, _)) => {}
            Ok((false, w)) => {
                let message = format!("when '{w}' evaluated false");
                return ended(run, &call, "Skipped", "Skipped", message, None);
            }
            Err(e) => return ended(run, &call, "Skipped", "Error", e, None),
        }
    }
    for p in t.task["arguments"]["parameters"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = p["name"].as_str().unwrap_or_default().to_owned();
        match text::substitute(&text_of(&p["value"]), scope) {
            Ok(v) => {
                call.args.parameters.insert(name, v);
            }
            Err(e) => return ended(run, &call, "Pod", "Error", e, None),
        }
    }
    for a in t.task["arguments"]["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = a["name"].as_str().unwrap_or_default().to_owned();
        let source = match a["from"].as_str() {
            Some(from) => artifact_from(from, &t.artifacts)
                .or_else(|| artifact_from(from, &run.global_artifacts.lock().unwrap())),
            None => Source::from_json(a),
        };
        match source {
            Some(s) => {
                call.args.artifacts.insert(name, s);
            }
            None => {
                let message = format!("unable to resolve artifact {name}: {}", a["from"]);
                return ended(run, &call, "Pod", "Error", message, None);
            }
        }
    }
    let _permit = match &t.limit {
        Some(limit) => Some(limit.clone().acquire_owned().await.expect("never closed")),
        None => None,
    };
    execute(run, call).await
}

async fn retry(run: &Arc<Run>, call: &Call, tmpl: &Value, inputs: &Inputs) -> Outcome {
    let id = run.add_node(NewNode {
        name: &call.name,
        display: &call.display,
        kind: "Retry",
        template: &call.template,
        phase: "Running",
        boundary: call.boundary.as_deref(),
        parents: &call.parents,
        message: None,
        inputs: inputs.to_json(),
    });
    let strategy = &tmpl["retryStrategy"];
    let limit = match &strategy["limit"] {
        Value::Null => u32::MAX,
        v => text_of(v).parse().unwrap_or(0),
    };
    let policy = strategy["retryPolicy"].as_str().unwrap_or("OnFailure");
    let mut attempt = 0u32;
    loop {
        let child = Call {
            name: format!("{}({attempt})", call.name),
            display: format!("{}({attempt})", call.display),
            parents: vec![id.clone()],
            ..call.clone()
        };
        let out = super::pod::run_pod(run, &child, tmpl, inputs).await;
        let message = out.message.clone().unwrap_or_default();
        let wants = match policy {
            "Always" => matches!(out.phase, "Failed" | "Error"),
            "OnError" => out.phase == "Error",
            "OnTransientError" => {
                matches!(out.phase, "Failed" | "Error") && run.config.transient(&message)
            }
            _ => out.phase == "Failed",
        };
        let halted = run.halted(call.exit).is_some();
        if !wants || attempt >= limit || halted {
            let message = if wants && !halted {
                Some("No more retries left".to_owned())
            } else {
                out.message.clone()
            };
            let outcome = Outcome {
                node: id.clone(),
                message,
                ..out
            };
            run.finish(&id, &outcome);
            return outcome;
        }
        let backoff = &strategy["backoff"];
        if let Some(base) = seconds(&backoff["duration"]) {
            let factor = text_of(&backoff["factor"]).parse::<f64>().unwrap_or(1.0);
            let mut wait = base * factor.powi(attempt as i32);
            if let Some(cap) = seconds(&backoff["cap"]).or_else(|| seconds(&backoff["maxDuration"]))
            {
                wait = wait.min(cap);
            }
            let mut halt = run.halt.subscribe();
            let exit = call.exit;
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs_f64(wait)) => {}
                _ = halt.wait_for(|h: &Halt| h.stops(exit)) => {}
            }
        }
        attempt += 1;
    }
}

async fn suspend(run: &Arc<Run>, call: &Call, tmpl: &Value) -> Outcome {
    let id = run.add_node(NewNode {
        name: &call.name,
        display: &call.display,
        kind: "Suspend",
        template: &call.template,
        phase: "Running",
        boundary: call.boundary.as_deref(),
        parents: &call.parents,
        message: None,
        inputs: None,
    });
    let mut outcome = Outcome {
        node: id.clone(),
        phase: "Succeeded",
        message: None,
        outputs: Outputs::default(),
    };
    let wait = seconds(&tmpl["suspend"]["duration"]);
    let mut halt = run.halt.subscribe();
    let exit = call.exit;
    tokio::select! {
        _ = async {
            match wait {
                Some(w) => tokio::time::sleep(Duration::from_secs_f64(w)).await,
                // Suspended until resumed, which the fake does not offer.
                None => std::future::pending().await,
            }
        } => {}
        _ = halt.wait_for(|h: &Halt| h.stops(exit)) => {
            outcome.phase = "Failed";
            outcome.message = Some(run.halt.borrow().node_message());
        }
    }
    run.finish(&id, &outcome);
    outcome
}
