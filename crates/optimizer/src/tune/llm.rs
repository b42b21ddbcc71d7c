//! The `llm` strategy: the request, and the answer's usable configurations.

use super::space::*;
use super::*;
use couler_ir::{Goal, ParamKind, SearchParam, Tune};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The chat request for the `llm` strategy.
pub fn llm_request(tune: &Tune) -> LlmRequest {
    let system = "You are an expert in hyperparameter tuning of machine-learning models. \
        Given a data set, a model and a search space, propose configurations that are likely \
        to do well and that together cover the most promising region. \
        Answer with JSON only, no prose."
        .to_owned();
    let mut lines = Vec::new();
    if let Some(d) = &tune.data_card {
        let mut line = format!("Data set: {}", d.name);
        let details = [("type", &d.kind), ("size", &d.size), ("metric", &d.metric)];
        for (what, value) in details {
            if let Some(v) = value {
                line += &format!("; {what}: {v}");
            }
        }
        if !d.labels.is_empty() {
            line += &format!("; labels: {}", d.labels.join(", "));
        }
        lines.push(line);
    }
    if let Some(m) = &tune.model_card {
        let structure = m.structure.as_deref().map(|s| format!("; structure: {s}"));
        lines.push(format!(
            "Model: {}{}",
            m.name,
            structure.unwrap_or_default()
        ));
    }
    lines.push("Search space:".into());
    for (name, p) in &tune.space {
        lines.push(format!("- {name}: {}", describe(p)));
    }
    let o = &tune.objective;
    let target = o.target.map(|t| format!(" (target {})", double_text(t)));
    let goal = match o.goal {
        Goal::Minimize => "minimize",
        Goal::Maximize => "maximize",
    };
    lines.push(format!(
        "Objective: {goal} `{}`{}.",
        o.metric,
        target.unwrap_or_default()
    ));
    let example: Vec<String> = tune.space.keys().map(|n| format!("\"{n}\": …")).collect();
    lines.push(format!(
        "Propose {} distinct configurations as {{\"configurations\": [{{{}}}]}}.",
        tune.max_trials,
        example.join(", ")
    ));
    let properties: Map<String, Value> = tune
        .space
        .iter()
        .map(|(name, p)| (name.clone(), param_schema(p)))
        .collect();
    let schema = json!({
        "type": "object",
        "properties": {
            "configurations": {
                "type": "array",
                "minItems": 1,
                "maxItems": tune.max_trials,
                "items": {
                    "type": "object",
                    "properties": properties,
                    "required": tune.space.keys().collect::<Vec<_>>(),
                    "additionalProperties": false,
                },
            },
        },
        "required": ["configurations"],
        "additionalProperties": false,
    });
    LlmRequest {
        system,
        user: lines.join("\n"),
        schema,
    }
}

pub(super) fn describe(p: &SearchParam) -> String {
    let (min, max) = (p.min.unwrap_or(0.0), p.max.unwrap_or(0.0));
    let step = p.step.map(|s| format!(", step {}", double_text(s)));
    let log = if p.log { ", log scale" } else { "" };
    let range = format!(
        "[{}, {}]{}{log}",
        double_text(min),
        double_text(max),
        step.unwrap_or_default()
    );
    match p.kind {
        ParamKind::Int => format!("integer in {range}"),
        ParamKind::Double => format!("number in {range}"),
        ParamKind::Categorical => {
            let values: Vec<String> = p.values.iter().map(|v| format!("{:?}", v.0)).collect();
            format!("one of {}", values.join(", "))
        }
    }
}

pub(super) fn param_schema(p: &SearchParam) -> Value {
    let (min, max) = (p.min.unwrap_or(0.0), p.max.unwrap_or(0.0));
    match p.kind {
        ParamKind::Categorical => json!({"type": "string", "enum": p.values}),
        ParamKind::Int => json!({"type": "integer", "minimum": min as i64, "maximum": max as i64}),
        ParamKind::Double => json!({"type": "number", "minimum": min, "maximum": max}),
    }
}

/// The LLM's usable configurations (at most `max`), with a warning for each problem.
pub(super) fn proposed(
    dims: &BTreeMap<&str, Dim>,
    max: usize,
    answer: Option<&str>,
    warnings: &mut Vec<String>,
) -> Vec<Config> {
    let unusable =
        |why: &str| format!("the LLM's answer was not usable: {why}; using random search");
    let list = match answer.map(parse_answer) {
        None => {
            warnings.push("no LLM configured; using random search".into());
            return Vec::new();
        }
        Some(Err(why)) => {
            warnings.push(unusable(&why));
            return Vec::new();
        }
        Some(Ok(list)) => list,
    };
    let mut configs: Vec<Config> = Vec::new();
    for (i, value) in list.iter().enumerate() {
        match check(dims, value) {
            Ok(c) if configs.contains(&c) => warnings.push(format!(
                "LLM configuration {} repeats an earlier one; dropped",
                i + 1
            )),
            Ok(c) => configs.push(c),
            Err(why) => warnings.push(format!("LLM configuration {} dropped: {why}", i + 1)),
        }
    }
    if configs.len() > max {
        warnings.push(format!(
            "the LLM proposed {} usable configurations; only the first {max} (maxTrials) run",
            configs.len()
        ));
        configs.truncate(max);
    }
    if configs.is_empty() {
        let why = match list.len() {
            0 => "it proposed no configurations".to_owned(),
            n => format!("none of its {n} configurations fits the search space"),
        };
        warnings.push(unusable(&why));
    }
    configs
}

/// The proposed configurations in an answer: the JSON may stand alone, sit in
/// a fenced block or be surrounded by prose.
pub(super) fn parse_answer(answer: &str) -> Result<Vec<Value>, String> {
    let fenced = answer
        .split("```")
        .nth(1)
        .map(|block| block.split_once('\n').map_or(block, |(_, body)| body));
    let braces = match (answer.find('{'), answer.rfind('}')) {
        (Some(a), Some(b)) if a < b => Some(&answer[a..=b]),
        _ => None,
    };
    let json = [Some(answer), fenced, braces]
        .into_iter()
        .flatten()
        .find_map(|text| serde_json::from_str::<Value>(text.trim()).ok());
    match json {
        Some(Value::Object(mut fields)) => match fields.remove("configurations") {
            Some(Value::Array(list)) => Ok(list),
            _ => Err("the JSON has no `configurations` list".into()),
        },
        Some(Value::Array(list)) => Ok(list),
        Some(_) => Err("the JSON is not an object with `configurations`".into()),
        None => Err("it contains no JSON".into()),
    }
}

/// A proposed configuration as text, or every way it misses the space.
pub(super) fn check(dims: &BTreeMap<&str, Dim>, value: &Value) -> Result<Config, String> {
    let Value::Object(fields) = value else {
        return Err("it is not a JSON object".into());
    };
    let mut config = Config::new();
    let mut problems = Vec::new();
    for (name, dim) in dims {
        match fields.get(*name).map(|v| dim.check(v)) {
            Some(Ok(text)) => {
                config.insert(name.to_string(), text);
            }
            Some(Err(why)) => problems.push(format!("{name} {why}")),
            None => problems.push(format!("{name} is missing")),
        }
    }
    for name in fields.keys().filter(|n| !dims.contains_key(n.as_str())) {
        problems.push(format!("{name} is not in the search space"));
    }
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(problems.join("; "))
    }
}
