//! Decomposition → IR document: one step per subtask from its best-ranked
//! library template, wired to earlier steps through artifacts, parameters
//! and environment variables; parallel stages become groups.

use super::action::step_name;
use super::{StepExplanation, Unrecognized};
use crate::decompose::{ConditionSpec, Decomposition, FanOut, Stage, Subtask, TaskKind};
use crate::library::{GENERIC_TEMPLATE, Library, Need, Ranked, Template};
use crate::safety::{Warning, WarningCode};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

pub struct Built {
    pub document: Value,
    pub explanations: Vec<StepExplanation>,
    pub warnings: Vec<Warning>,
}

#[derive(Default)]
struct State {
    /// Steps whose `data` artifact is the current dataset.
    data: Vec<String>,
    /// Steps that produced models, latest training stage.
    models: Vec<String>,
    /// The evaluation step (its `scores`).
    evaluate: Option<String>,
    /// The selection step (its `best`, `best_score`).
    select: Option<String>,
    /// Steps with a metric output, oldest first: (step, parameter, whether
    /// the step fans out, so that its metric is a list).
    metrics: Vec<(String, String, bool)>,
    /// Quality checks (their `status`).
    quality: Vec<String>,
    /// Steps with a `result` output (generic steps), oldest first.
    results: Vec<String>,
    /// Where a model was saved, if the description said.
    model_store: Option<String>,
    /// Every step and group with the steps upstream of it.
    ancestors: BTreeMap<String, BTreeSet<String>>,
    /// What the stage being built runs after, so that a condition reads
    /// a step that has run (not one on a branch beside it).
    reach: BTreeSet<String>,
    /// The step each conditional step's condition reads, and which output:
    /// the steps after it in its branch read the same.
    guards: BTreeMap<String, (ConditionSpec, String, String)>,
}

struct Builder<'a> {
    lib: &'a Library,
    d: &'a Decomposition,
    names: BTreeSet<String>,
    params: Vec<Value>,
    steps: Vec<Value>,
    groups: Vec<Value>,
    on_exit: Vec<Value>,
    explanations: Vec<StepExplanation>,
    warnings: Vec<Warning>,
    unknown: Vec<Unrecognized>,
    state: State,
}

pub fn build(
    d: &Decomposition,
    lib: &Library,
    name: &str,
    description: &str,
) -> Result<Built, Vec<Unrecognized>> {
    let mut b = Builder {
        lib,
        d,
        names: BTreeSet::new(),
        params: Vec::new(),
        steps: Vec::new(),
        groups: Vec::new(),
        on_exit: Vec::new(),
        explanations: Vec::new(),
        warnings: Vec::new(),
        unknown: Vec::new(),
        state: State::default(),
    };
    let stages = b.loads_first(&d.stages);
    let mut upstream: Vec<String> = Vec::new();
    for (i, stage) in stages.iter().enumerate() {
        let built = b.stage(stage, i, &upstream);
        // Couler skips what is below a skipped step, so the steps after
        // conditional ones (an if/otherwise pair: one is always skipped)
        // wait for what the conditions waited for — unless they carry the
        // same condition ("if … retrain and redeploy").
        let conditional = stage.tasks.iter().all(|t| t.condition.is_some());
        let next = stages.get(i + 1).and_then(|next| {
            let c = next.tasks.first()?.condition.as_ref()?;
            next.tasks
                .iter()
                .all(|n| n.condition.as_ref() == Some(c))
                .then_some(c)
        });
        let carry = |t: &Subtask| next.is_some() && t.condition.as_ref() == next;
        let chained = stage.tasks.iter().all(carry);
        if !conditional || chained {
            upstream = built;
        } else if built.len() == stage.tasks.len() && stage.tasks.iter().any(carry) {
            // "Otherwise: aggregate -> publish": after the branch it is in.
            upstream = built
                .into_iter()
                .zip(&stage.tasks)
                .filter(|(_, t)| carry(t))
                .map(|(name, _)| name)
                .collect();
        }
    }
    for task in &d.on_exit {
        if let Some(step) = b.step(task, &[], true) {
            b.on_exit.push(step);
        }
    }
    if !b.unknown.is_empty() {
        return Err(b.unknown);
    }
    for step in b.steps.iter_mut().chain(b.on_exit.iter_mut()) {
        super::templates::keep_literal(step, &mut b.warnings);
    }
    let mut doc = Map::new();
    doc.insert("apiVersion".into(), json!(couler_ir::API_VERSION));
    doc.insert("name".into(), json!(name));
    let summary: String = description.split_whitespace().collect::<Vec<_>>().join(" ");
    doc.insert(
        "description".into(),
        json!(summary.chars().take(500).collect::<String>()),
    );
    doc.insert(
        "labels".into(),
        json!({"generated-by": "couler-nl-offline"}),
    );
    if !b.params.is_empty() {
        doc.insert("parameters".into(), Value::Array(b.params));
    }
    doc.insert("steps".into(), Value::Array(b.steps));
    if !b.groups.is_empty() {
        doc.insert("groups".into(), Value::Array(b.groups));
    }
    if !b.on_exit.is_empty() {
        doc.insert("onExit".into(), Value::Array(b.on_exit));
    }
    if let Some(s) = &d.schedule {
        doc.insert(
            "schedule".into(),
            json!({"cron": s.cron, "timezone": "UTC"}),
        );
    }
    Ok(Built {
        document: Value::Object(doc),
        explanations: b.explanations,
        warnings: b.warnings,
    })
}

impl Builder<'_> {
    /// Data is read after it is loaded, never beside it. No step is added:
    /// a step that reads data no earlier step loads reads the place the
    /// description named, or the `data_url` parameter.
    fn loads_first(&mut self, stages: &[Stage]) -> Vec<Stage> {
        let mut out = Vec::with_capacity(stages.len() + 1);
        for (i, stage) in stages.iter().enumerate() {
            let loads = stage.tasks.iter().any(|t| t.kind == TaskKind::Load);
            if loads && stage.tasks.iter().any(|t| t.kind.reads_data()) {
                self.warnings.push(Warning {
                    code: WarningCode::Assumption,
                    message: format!(
                        "stage {i} loaded data and read it in parallel; the loading now runs first"
                    ),
                    span: None,
                });
                let (loads, rest) = stage
                    .tasks
                    .iter()
                    .cloned()
                    .partition(|t| t.kind == TaskKind::Load);
                out.push(Stage { tasks: loads });
                out.push(Stage { tasks: rest });
            } else {
                out.push(stage.clone());
            }
        }
        out
    }

    fn unique(&mut self, base: &str) -> String {
        let base: String = base.chars().take(55).collect();
        let base = base.trim_end_matches('-').to_owned();
        let mut name = base.clone();
        let mut n = 2;
        while self.names.contains(&name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        self.names.insert(name.clone());
        name
    }

    fn stage(&mut self, stage: &Stage, index: usize, upstream: &[String]) -> Vec<String> {
        let group = stage.is_parallel_group();
        let depends: &[String] = if group { &[] } else { upstream };
        let mut reach: BTreeSet<String> = upstream.iter().cloned().collect();
        for u in upstream {
            reach.extend(self.state.ancestors.get(u).into_iter().flatten().cloned());
        }
        self.state.reach = reach.clone();
        let mut built = Vec::new();
        for task in &stage.tasks {
            if let Some(step) = self.step(task, depends, false) {
                built.push((
                    task,
                    step["name"].as_str().unwrap_or_default().to_owned(),
                    step,
                ));
            }
        }
        let names: Vec<String> = built.iter().map(|(_, n, _)| n.clone()).collect();
        let mut produced_data = Vec::new();
        let mut produced_models = Vec::new();
        for (task, name, step) in built {
            let outputs = &step["outputs"];
            let has_artifact = |a: &str| {
                outputs["artifacts"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|x| x["name"] == a))
            };
            self.state.ancestors.insert(name.clone(), reach.clone());
            if has_artifact("data") {
                produced_data.push(name.clone());
            }
            if has_artifact("model") {
                produced_models.push(name.clone());
            }
            for p in outputs["parameters"].as_array().into_iter().flatten() {
                let p = p["name"].as_str().unwrap_or_default();
                if p == "result" {
                    self.state.results.push(name.clone());
                }
                if matches!(p, "score" | "best_score") {
                    let fans_out = step.get("map").is_some();
                    self.state
                        .metrics
                        .push((name.clone(), p.to_owned(), fans_out));
                }
            }
            match task.kind {
                TaskKind::Evaluate => self.state.evaluate = Some(name.clone()),
                TaskKind::Select => self.state.select = Some(name.clone()),
                TaskKind::QualityCheck => self.state.quality.push(name.clone()),
                TaskKind::Register if task.target.is_some() => {
                    self.state.model_store = task.target.clone()
                }
                _ => {}
            }
            self.steps.push(step);
        }
        if !produced_data.is_empty() {
            self.state.data = produced_data;
        }
        if !produced_models.is_empty() {
            self.state.models = produced_models;
            self.state.evaluate = None;
            self.state.select = None;
        }
        if group && names.len() > 1 {
            let kinds: BTreeSet<TaskKind> = stage.tasks.iter().map(|t| t.kind).collect();
            let base = match kinds.iter().next() {
                Some(TaskKind::Train | TaskKind::DistributedTrain) if kinds.len() == 1 => {
                    "train-models".to_owned()
                }
                Some(k) if kinds.len() == 1 => format!("{}-group", k.as_str().replace('_', "-")),
                _ => format!("parallel-{}", index + 1),
            };
            let gname = self.unique(&base);
            let mut inside = reach.clone();
            inside.extend(names.iter().cloned());
            self.state.ancestors.insert(gname.clone(), inside);
            let mut g = json!({"name": gname, "steps": names});
            if !upstream.is_empty() {
                g["depends"] = json!(upstream);
            }
            self.groups.push(g);
            vec![gname]
        } else {
            names
        }
    }

    fn step(&mut self, task: &Subtask, depends: &[String], exit: bool) -> Option<Value> {
        let generic = task.kind == TaskKind::Shell && task.command.is_none();
        let ranked = if generic {
            self.lib.get(GENERIC_TEMPLATE).map(|template| Ranked {
                template,
                score: 0.0,
            })
        } else {
            self.lib
                .rank_for(task)
                .into_iter()
                .find(|r| r.template.id != GENERIC_TEMPLATE)
        };
        let Some(ranked) = ranked else {
            self.unknown.push(Unrecognized {
                text: task.text.clone(),
                span: task.span,
                reason: format!("the step library has no template for a {} step", task.kind),
            });
            return None;
        };
        let template: &Template = ranked.template;
        let name = self.unique(&step_name(task));
        let mut step = template.step.clone();
        step["name"] = json!(name);
        step["description"] = json!(task.text);
        let mut wiring: Vec<String> = Vec::new();
        let mut env: Vec<Value> = Vec::new();
        for need in &template.needs {
            self.need(*need, task, &mut step, &mut env, &mut wiring, exit);
        }
        if generic {
            self.placeholder(task, &name, &mut step, &mut env, exit);
        }
        for p in &template.parameters {
            self.param(p.clone());
        }
        if let Some(model) = &task.model {
            env.push(json!({"name": "MODEL", "value": model}));
        }
        if let Some(f) = &task.fan_out {
            fan_out(&mut step, &mut env, f);
            wiring.push(format!(
                "one instance per {} ({} values)",
                f.parameter,
                f.width()
            ));
        }
        self.secrets(task, &mut env, &mut wiring);
        merge_env(&mut step, env);
        resources(&mut step, task);
        if let Some(limit) = task.retry.or(self.d.retry) {
            step["retry"] =
                json!({"limit": limit.min(100), "backoff": {"duration": "10s", "factor": 2}});
        }
        if exit && let Some(cond) = &task.condition {
            // At the end the outcome is the workflow's: "notify me only if it failed".
            let failed =
                (cond.value == "fail") == (cond.operator == crate::decompose::Comparison::Eq);
            step["when"] = json!([{
                "input": "{{workflow.status}}",
                "operator": if failed { "ne" } else { "eq" },
                "value": "Succeeded",
            }]);
            wiring.push(format!(
                "runs only if the workflow {}",
                if failed { "failed" } else { "succeeded" }
            ));
        } else if let Some(cond) = &task.condition {
            let reached = |s: &String| self.state.reach.contains(s);
            let result = || {
                self.state
                    .results
                    .iter()
                    .rfind(|s| reached(s))
                    .map(|s| (s.clone(), "result".to_owned(), false))
            };
            // "if the checks fail, page_oncall and then restart": restart
            // reads the checks, as page_oncall does.
            let guards: Option<Vec<_>> = depends.iter().map(|d| self.state.guards.get(d)).collect();
            let branch = guards
                .filter(|g| !g.is_empty() && g.iter().all(|(c, ..)| c == cond))
                .and_then(|g| g.first().map(|(_, s, p)| (s.clone(), p.clone(), false)));
            let source = match cond.metric.as_str() {
                _ if branch.is_some() => branch,
                "quality" => self
                    .state
                    .quality
                    .iter()
                    .rfind(|s| reached(s))
                    .map(|s| (s.clone(), "status".to_owned(), false))
                    .or_else(result),
                "result" => result(),
                _ => self
                    .state
                    .metrics
                    .iter()
                    .rfind(|m| reached(&m.0))
                    .cloned()
                    .or_else(result),
            };
            match source {
                Some((s, _, true)) => self.unknown.push(Unrecognized {
                    text: task.text.clone(),
                    span: task.span,
                    reason: format!(
                        "the condition reads the {:?} of {s}, which runs once per value, so there is one per run; \
                         say which counts, e.g. \"evaluate them, keep the best, and if its {} ...\"",
                        cond.metric, cond.metric
                    ),
                }),
                Some((s, p, false)) => {
                    let name = step["name"].as_str().unwrap_or_default().to_owned();
                    self.state.guards.insert(name, (cond.clone(), s.clone(), p.clone()));
                    // (A branch on a parameter: no step is named.)
                    let input = if s.is_empty() {
                        format!("{{{{workflow.parameters.{p}}}}}")
                    } else {
                        format!("{{{{steps.{s}.outputs.parameters.{p}}}}}")
                    };
                    step["when"] = json!([{
                        "input": input,
                        "operator": serde_json::to_value(cond.operator).expect("serializes"),
                        "value": cond.value,
                    }]);
                    wiring.push(format!(
                        "runs only if {s}'s {p} {:?} {}",
                        cond.operator, cond.value
                    ));
                }
                // No earlier step measures it: the run says, as a parameter.
                None => {
                    let name = super::action::slug(std::slice::from_ref(&cond.metric)).replace('-', "_");
                    let name = if name.is_empty() { "condition".to_owned() } else { name };
                    let step_name = step["name"].as_str().unwrap_or_default().to_owned();
                    self.state.guards.insert(step_name, (cond.clone(), String::new(), name.clone()));
                    self.param(json!({"name": name, "description": format!("what the condition of step {:?} reads; no earlier step measures it", task.text)}));
                    step["when"] = json!([{
                        "input": format!("{{{{workflow.parameters.{name}}}}}"),
                        "operator": serde_json::to_value(cond.operator).expect("serializes"),
                        "value": cond.value,
                    }]);
                    self.warnings.push(Warning {
                        code: WarningCode::Assumption,
                        message: format!(
                            "no step before {:?} measures {:?}; its condition reads the `{name}` parameter",
                            task.text, cond.metric
                        ),
                        span: task.span,
                    });
                }
            }
        }
        if !depends.is_empty() {
            step["depends"] = json!(depends);
        }
        let mut why = format!("{}: {}", template.id, template.description);
        if !wiring.is_empty() {
            why.push_str(&format!(" Wiring: {}.", wiring.join("; ")));
        }
        self.explanations.push(StepExplanation {
            step: name,
            kind: task.kind,
            template: template.id.clone(),
            relevance: ranked.score,
            text: task.text.clone(),
            why,
        });
        Some(step)
    }

    fn need(
        &mut self,
        need: Need,
        task: &Subtask,
        step: &mut Value,
        env: &mut Vec<Value>,
        wiring: &mut Vec<String>,
        exit: bool,
    ) {
        let set =
            |env: &mut Vec<Value>, k: &str, v: String| env.push(json!({"name": k, "value": v}));
        match need {
            Need::Data if self.state.data.is_empty() => {
                let source = task.target.clone().unwrap_or_else(|| {
                    self.param(json!({"name": "data_url", "description": "URL, bucket path or file of the input data"}));
                    "{{workflow.parameters.data_url}}".into()
                });
                if super::fill::read_data_from_url(step) {
                    wiring.push(format!("reads its data from {source}"));
                    set(env, "DATA_URL", source);
                }
            }
            Need::Data => {
                let mut artifacts = Vec::new();
                for (i, p) in self.state.data.iter().enumerate() {
                    let (name, path) = if i == 0 {
                        ("data".to_owned(), "/tmp/inputs/data.csv".to_owned())
                    } else {
                        (format!("data-{p}"), format!("/tmp/inputs/extra/{p}.csv"))
                    };
                    artifacts.push(json!({"name": name, "from": format!("{{{{steps.{p}.outputs.artifacts.data}}}}"), "path": path}));
                }
                let extra: Vec<String> = artifacts
                    .iter()
                    .skip(1)
                    .map(|a| {
                        format!(
                            "{{{{inputs.artifacts.{}.path}}}}",
                            a["name"].as_str().unwrap_or_default()
                        )
                    })
                    .collect();
                if !extra.is_empty() {
                    set(env, "EXTRA_DATA", json!(extra).to_string());
                }
                wiring.push(format!("reads the data of {}", self.state.data.join(", ")));
                add_inputs(step, artifacts);
            }
            Need::Models if self.state.models.is_empty() => {
                self.param(
                    json!({"name": "model_uri", "description": "where the model to use is stored"}),
                );
                set(env, "MODEL_URI", "{{workflow.parameters.model_uri}}".into());
            }
            Need::Models => {
                let artifacts: Vec<Value> = self
                    .state
                    .models
                    .iter()
                    .map(|m| json!({"name": format!("model-{m}"), "from": format!("{{{{steps.{m}.outputs.artifacts.model}}}}"), "path": format!("/tmp/inputs/models/{m}")}))
                    .collect();
                let paths: serde_json::Map<String, Value> = self
                    .state
                    .models
                    .iter()
                    .map(|m| {
                        (
                            m.clone(),
                            json!(format!("{{{{inputs.artifacts.model-{m}.path}}}}")),
                        )
                    })
                    .collect();
                set(env, "MODELS", Value::Object(paths).to_string());
                wiring.push(format!(
                    "reads the models of {}",
                    self.state.models.join(", ")
                ));
                add_inputs(step, artifacts);
            }
            Need::Scores => {
                let scores = match &self.state.evaluate {
                    Some(e) => format!("{{{{steps.{e}.outputs.parameters.scores}}}}"),
                    None => {
                        let scored: Vec<&String> = self
                            .state
                            .models
                            .iter()
                            .filter(|m| {
                                self.state
                                    .metrics
                                    .iter()
                                    .any(|(s, p, _)| s == *m && p == "score")
                            })
                            .collect();
                        let pairs: Vec<String> = scored
                            .iter()
                            .map(|m| format!("\"{m}\": {{{{steps.{m}.outputs.parameters.score}}}}"))
                            .collect();
                        format!("{{{}}}", pairs.join(", "))
                    }
                };
                set(env, "SCORES", scores);
            }
            Need::Best => {
                let best = match (&self.state.select, self.state.models.as_slice()) {
                    (Some(s), _) => format!("{{{{steps.{s}.outputs.parameters.best}}}}"),
                    (None, [only]) => only.clone(),
                    _ => String::new(),
                };
                set(env, "BEST", best);
            }
            Need::Source => {
                let source = task.target.clone().unwrap_or_else(|| {
                    self.param(json!({"name": "data_url", "description": "URL, bucket path or file of the input data"}));
                    "{{workflow.parameters.data_url}}".into()
                });
                set(env, "SOURCE", source);
            }
            Need::Target => {
                let target = task.target.clone().unwrap_or_else(|| {
                    self.param(json!({"name": "model_store_uri", "description": "where to save the model (s3://bucket/path)"}));
                    "{{workflow.parameters.model_store_uri}}".into()
                });
                set(env, "TARGET", target);
            }
            Need::ModelUri => {
                let mut p = json!({"name": "model_uri", "description": "where the model to deploy is stored"});
                if let Some(store) = &self.state.model_store {
                    p["default"] = json!(store);
                }
                self.param(p);
                set(env, "MODEL_URI", "{{workflow.parameters.model_uri}}".into());
            }
            Need::Webhook => {
                let named = self
                    .d
                    .secrets
                    .iter()
                    .find(|s| task.text.to_ascii_lowercase().contains(s.as_str()));
                match (named, &task.target) {
                    (Some(secret), _) => env.push(
                        json!({"name": "WEBHOOK_URL", "secret": {"name": secret, "key": "url"}}),
                    ),
                    (None, Some(url)) if url.starts_with("http") => {
                        set(env, "WEBHOOK_URL", url.clone())
                    }
                    _ => {
                        self.param(json!({"name": "webhook_url", "description": "where notifications are posted"}));
                        set(
                            env,
                            "WEBHOOK_URL",
                            "{{workflow.parameters.webhook_url}}".into(),
                        );
                    }
                }
            }
            Need::Message => {
                let message = if exit {
                    "workflow {{workflow.name}} finished with status {{workflow.status}}".to_owned()
                } else if let Some(s) = &self.state.select {
                    format!(
                        "workflow {{{{workflow.name}}}}: best model {{{{steps.{s}.outputs.parameters.best}}}}"
                    )
                } else {
                    "workflow {{workflow.name}} reached its notification step".to_owned()
                };
                set(env, "MESSAGE", message);
            }
            Need::Command => match &task.command {
                Some(cmd) => {
                    if let Some(body) = step.get_mut("container") {
                        body["args"] = json!([cmd]);
                    }
                }
                None => self.unknown.push(Unrecognized {
                    text: task.text.clone(),
                    span: task.span,
                    reason: "a command step needs the command in backquotes, e.g. `make test`"
                        .into(),
                }),
            },
            Need::Model => {}
        }
    }

    /// A generic step: it reads the current data (and passes its own on),
    /// and fails with a message saying what to fill in until its image and
    /// command are set.
    fn placeholder(
        &mut self,
        task: &Subtask,
        name: &str,
        step: &mut Value,
        env: &mut Vec<Value>,
        exit: bool,
    ) {
        let passes_data = !exit && !self.state.data.is_empty();
        if passes_data {
            let mut ignored = Vec::new();
            self.need(Need::Data, task, step, env, &mut ignored, exit);
            step["outputs"]["artifacts"] =
                json!([{"name": "data", "path": "/tmp/outputs/data.csv"}]);
        }
        let message = super::fill::todo_message(name, &task.text, passes_data);
        env.push(json!({"name": "TODO", "value": message}));
        self.warnings.push(Warning {
            code: WarningCode::Incomplete,
            message,
            span: task.span,
        });
    }

    fn param(&mut self, p: Value) {
        if !self.params.iter().any(|q| q["name"] == p["name"]) {
            self.params.push(p);
        }
    }

    /// Secrets the description named inside this subtask's words.
    fn secrets(&mut self, task: &Subtask, env: &mut Vec<Value>, wiring: &mut Vec<String>) {
        if task.kind == TaskKind::Notify {
            return;
        }
        let text = task.text.to_ascii_lowercase();
        for secret in self.d.secrets.iter().filter(|s| text.contains(s.as_str())) {
            let vars: Vec<(String, &str)> = match task.kind {
                TaskKind::Load | TaskKind::Register => vec![
                    ("AWS_ACCESS_KEY_ID".into(), "access-key-id"),
                    ("AWS_SECRET_ACCESS_KEY".into(), "secret-access-key"),
                ],
                _ => vec![(
                    secret.to_ascii_uppercase().replace(['-', '.'], "_"),
                    "value",
                )],
            };
            for (name, key) in vars {
                env.push(json!({"name": name, "secret": {"name": secret, "key": key}}));
            }
            wiring.push(format!("reads secret {secret}"));
        }
    }
}

fn body(step: &mut Value) -> Option<&mut Value> {
    let key = ["script", "container", "job"]
        .into_iter()
        .find(|k| step.get(*k).is_some())?;
    step.get_mut(key)
}

/// Adds variables, replacing a template's variable of the same name.
fn merge_env(step: &mut Value, env: Vec<Value>) {
    let Some(body) = body(step) else { return };
    let list = body
        .as_object_mut()
        .expect("a step body is an object")
        .entry("env")
        .or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        return;
    };
    for var in env {
        list.retain(|v| v["name"] != var["name"]);
        list.push(var);
    }
}

fn add_inputs(step: &mut Value, artifacts: Vec<Value>) {
    if artifacts.is_empty() {
        return;
    }
    let inputs = step
        .as_object_mut()
        .expect("a step is an object")
        .entry("inputs")
        .or_insert_with(|| json!({"artifacts": []}));
    if let Some(list) = inputs["artifacts"].as_array_mut() {
        list.extend(artifacts);
    }
}

fn fan_out(step: &mut Value, env: &mut Vec<Value>, f: &FanOut) {
    let items: Vec<Value> = f
        .items()
        .into_iter()
        .map(|v| match v.parse::<i64>() {
            Ok(n) => json!(n),
            Err(_) => match v.parse::<f64>() {
                Ok(x) => json!(x),
                Err(_) => json!(v),
            },
        })
        .collect();
    step["map"] = json!({"items": items});
    let var: String = f
        .parameter
        .to_ascii_uppercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    env.push(json!({"name": var, "value": "{{item}}"}));
}

fn resources(step: &mut Value, task: &Subtask) {
    let r = &task.resources;
    if r.is_empty() {
        return;
    }
    let mut patch = Map::new();
    if let Some(g) = r.gpus {
        patch.insert("gpu".into(), json!(g));
    }
    if let Some(c) = r.cpus {
        patch.insert("cpu".into(), json!(c.to_string()));
    }
    if let Some(m) = r.memory_gib {
        patch.insert("memory".into(), json!(format!("{m}Gi")));
    }
    let apply = |target: &mut Value| {
        if !target.is_object() {
            *target = json!({});
        }
        for (k, v) in &patch {
            target[k] = v.clone();
        }
    };
    if let Some(job) = step.get_mut("job") {
        if let Some(w) = r.workers {
            job["replicas"]["worker"]["count"] = json!(w.saturating_sub(1).max(1));
        }
        if let Some(replicas) = job["replicas"].as_object_mut() {
            for replica in replicas.values_mut() {
                apply(&mut replica["resources"]);
            }
        }
    } else if !patch.is_empty() {
        apply(&mut step["resources"]);
    }
}
