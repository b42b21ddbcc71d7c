//! Tekton's variable substitution (`$(params.x)`, `$(tasks.t.results.r[*])`
//! …), `when` expressions (`in`/`notin` and a small CEL subset), matrix
//! fan-out and Go durations: the pure parts of the controller.

use serde_json::Value;
use std::time::Duration;

/// A parameter or result value: Tekton's string or array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    Str(String),
    Arr(Vec<String>),
}

impl Val {
    /// From a `value` field (a string or a list of strings).
    pub fn from_json(v: &Value) -> Val {
        match v {
            Value::String(s) => Val::Str(s.clone()),
            Value::Array(items) => Val::Arr(items.iter().map(text).collect()),
            other => Val::Str(text(other)),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Val::Str(s) => Value::String(s.clone()),
            Val::Arr(a) => a.clone().into(),
        }
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One `$(…)` reference: the variable's key (`params.x`, with the
/// bracket forms `params["x"]` normalized) and an index, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ref {
    pub key: String,
    pub index: Index,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    None,
    All,
    At(usize),
}

/// The references in `text`, with their byte ranges. Shell constructs
/// such as `$(cat f)` or `$((1 + 2))` are not variables and are skipped.
pub fn references(text: &str) -> Vec<(std::ops::Range<usize>, Ref)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("$(") {
        let start = from + at;
        let body_start = start + 2;
        let Some(len) = text[body_start..].find(')') else {
            break;
        };
        let body = &text[body_start..body_start + len];
        match parse_ref(body) {
            Some(r) => {
                out.push((start..body_start + len + 1, r));
                from = body_start + len + 1;
            }
            None => from = body_start,
        }
    }
    out
}

fn parse_ref(body: &str) -> Option<Ref> {
    let first = body.chars().next()?;
    if !first.is_ascii_alphabetic()
        || !body.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '[' | ']' | '*' | '"' | '\'')
        })
    {
        return None;
    }
    // `params["x"]` / `params['x']` → `params.x`
    let mut key = String::new();
    let mut rest = body;
    while let Some(open) = rest.find("[\"").or_else(|| rest.find("['")) {
        let quote = &rest[open + 1..open + 2];
        let close = rest[open + 2..].find(&format!("{quote}]"))?;
        key.push_str(&rest[..open]);
        key.push('.');
        key.push_str(&rest[open + 2..open + 2 + close]);
        rest = &rest[open + 2 + close + 2..];
    }
    key.push_str(rest);
    let (key, index) = match key.strip_suffix(']').and_then(|k| k.rsplit_once('[')) {
        Some((k, "*")) => (k.to_owned(), Index::All),
        Some((k, n)) => (k.to_owned(), Index::At(n.parse().ok()?)),
        None => (key, Index::None),
    };
    if key.contains(['[', ']', '*', '"', '\'']) || key.ends_with('.') {
        return None;
    }
    Some(Ref { key, index })
}

/// Replaces the variables `lookup` knows in a string field; unknown ones
/// stay as written (Tekton leaves what it does not recognize). An array
/// without an index is written as JSON.
pub fn substitute(text: &str, lookup: &dyn Fn(&str) -> Option<Val>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (range, r) in references(text) {
        let Some(value) = lookup(&r.key) else {
            continue;
        };
        let replacement = match (value, r.index) {
            (Val::Str(s), Index::None) => s,
            (Val::Arr(a), Index::At(i)) => match a.get(i) {
                Some(s) => s.clone(),
                None => continue,
            },
            (Val::Arr(a), _) => serde_json::to_string(&a).unwrap_or_default(),
            (Val::Str(_), _) => continue,
        };
        out.push_str(&text[last..range.start]);
        out.push_str(&replacement);
        last = range.end;
    }
    out.push_str(&text[last..]);
    out
}

/// A whole value: `"$(x[*])"` (or `"$(x)"` naming an array) alone is the
/// array; anything else is a string.
pub fn substitute_value(text: &str, lookup: &dyn Fn(&str) -> Option<Val>) -> Val {
    match lookup_array(text, lookup) {
        Some(a) => Val::Arr(a),
        None => Val::Str(substitute(text, lookup)),
    }
}

fn lookup_array(text: &str, lookup: &dyn Fn(&str) -> Option<Val>) -> Option<Vec<String>> {
    let refs = references(text);
    let [(range, r)] = refs.as_slice() else {
        return None;
    };
    if *range != (0..text.len()) || matches!(r.index, Index::At(_)) {
        return None;
    }
    match lookup(&r.key)? {
        Val::Arr(a) => Some(a),
        Val::Str(_) => None,
    }
}

/// A list field (`args`, `command`, `when.values`): an item that is a
/// whole array reference expands into the array's items.
pub fn substitute_list(items: &[String], lookup: &dyn Fn(&str) -> Option<Val>) -> Vec<String> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match lookup_array(item, lookup) {
            Some(a) => out.extend(a),
            None => out.push(substitute(item, lookup)),
        }
    }
    out
}

/// Substitutes every string in a JSON document (an embedded `taskSpec`),
/// expanding whole-array references inside lists and in `value` fields.
pub fn substitute_json(v: &mut Value, lookup: &dyn Fn(&str) -> Option<Val>) {
    match v {
        Value::String(s) => *s = substitute(s, lookup),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for mut item in std::mem::take(items) {
                match item.as_str().and_then(|s| lookup_array(s, lookup)) {
                    Some(a) => out.extend(a.into_iter().map(Value::String)),
                    None => {
                        substitute_json(&mut item, lookup);
                        out.push(item);
                    }
                }
            }
            *items = out;
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match (k.as_str(), v.as_str()) {
                    // A parameter's `value` may be a whole array.
                    ("value", Some(s)) => *v = substitute_value(s, lookup).to_json(),
                    _ => substitute_json(v, lookup),
                }
            }
        }
        _ => {}
    }
}

/// Evaluates one `when` expression whose variables are already
/// substituted. `Err` for an expression that cannot be evaluated.
pub fn when_holds(expr: &Value) -> Result<bool, String> {
    if let Some(cel) = expr.get("cel").and_then(Value::as_str) {
        return crate::cel::condition(cel, &serde_json::Map::new());
    }
    let input = expr
        .get("input")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let values: Vec<&str> = expr
        .get("values")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let member = values.contains(&input);
    match expr.get("operator").and_then(Value::as_str) {
        Some("in") => Ok(member),
        Some("notin") => Ok(!member),
        other => Err(format!("unknown when operator {other:?}")),
    }
}

/// Matrix combinations, in Tekton's order: the first parameter varies
/// slowest; `include` entries add to matching combinations or become
/// combinations of their own.
pub fn combinations(
    params: &[(String, Val)],
    include: &[Vec<(String, String)>],
) -> Vec<Vec<(String, String)>> {
    let mut combos: Vec<Vec<(String, String)>> = Vec::new();
    for (name, value) in params {
        let values = match value {
            Val::Arr(a) => a.clone(),
            Val::Str(s) => vec![s.clone()],
        };
        if combos.is_empty() {
            combos = values
                .iter()
                .map(|v| vec![(name.clone(), v.clone())])
                .collect();
        } else {
            combos = combos
                .iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((name.clone(), v.clone()));
                        c
                    })
                })
                .collect();
        }
    }
    let base = combos.len();
    for extra in include {
        let mut matched = false;
        for combo in combos.iter_mut().take(base) {
            let fits = extra.iter().all(|(k, v)| {
                combo
                    .iter()
                    .find(|(n, _)| n == k)
                    .is_none_or(|(_, x)| x == v)
            });
            let adds = extra
                .iter()
                .any(|(k, _)| !combo.iter().any(|(n, _)| n == k));
            if fits && adds {
                for (k, v) in extra {
                    if !combo.iter().any(|(n, _)| n == k) {
                        combo.push((k.clone(), v.clone()));
                    }
                }
                matched = true;
            }
        }
        if !matched {
            combos.push(extra.clone());
        }
    }
    combos
}

/// A Go `time.Duration` (`1h0m0s`, `1.5s`, `500ms`); `None` when invalid.
pub fn go_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s == "0" {
        return Some(Duration::ZERO);
    }
    let mut total = 0f64;
    let mut rest = s;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_len..];
    }
    Some(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(key: &str) -> Option<Val> {
        match key {
            "params.x" => Some(Val::Str("X".into())),
            "params.list" => Some(Val::Arr(vec!["a".into(), "b c".into()])),
            "tasks.flip.results.result" => Some(Val::Str("heads".into())),
            "context.pipelineRun.name" => Some(Val::Str("pr-1".into())),
            _ => None,
        }
    }

    #[test]
    fn strings_substitute_known_variables_and_keep_shell() {
        let s = "echo $(params.x) $(params[\"x\"]) $(params.nope) $(cat \"$f\") $((1 + 2)) $(context.pipelineRun.name)";
        assert_eq!(
            substitute(s, &vars),
            "echo X X $(params.nope) $(cat \"$f\") $((1 + 2)) pr-1"
        );
        assert_eq!(substitute("$(params.list[1])!", &vars), "b c!");
        assert_eq!(substitute("$(params.list[*])", &vars), r#"["a","b c"]"#);
    }

    #[test]
    fn whole_array_references_expand() {
        assert_eq!(
            substitute_value("$(params.list[*])", &vars),
            Val::Arr(vec!["a".into(), "b c".into()])
        );
        assert_eq!(substitute_value("$(params.x)", &vars), Val::Str("X".into()));
        let args = vec!["-v".to_owned(), "$(params.list[*])".to_owned()];
        assert_eq!(substitute_list(&args, &vars), ["-v", "a", "b c"]);
        let mut doc = json!({
            "steps": [{"args": ["$(params.list[*])"], "script": "$(params.x)"}],
            "params": [{"name": "l", "value": "$(params.list[*])"}],
        });
        substitute_json(&mut doc, &vars);
        assert_eq!(
            doc,
            json!({
                "steps": [{"args": ["a", "b c"], "script": "X"}],
                "params": [{"name": "l", "value": ["a", "b c"]}],
            })
        );
    }

    #[test]
    fn references_are_found() {
        let refs = references("$(tasks.a.results.r[*]) and $(tasks.b.results.s)");
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[0].1.key, "tasks.a.results.r");
        assert_eq!(refs[0].1.index, Index::All);
        assert_eq!(refs[1].1.index, Index::None);
    }

    #[test]
    fn when_expressions() {
        let input = substitute("$(tasks.flip.results.result)", &vars);
        assert!(
            when_holds(&json!({"input": input, "operator": "in", "values": ["heads"]})).unwrap()
        );
        assert!(
            !when_holds(&json!({"input": "tails", "operator": "in", "values": ["heads"]})).unwrap()
        );
        assert!(
            when_holds(&json!({"input": "tails", "operator": "notin", "values": ["heads"]}))
                .unwrap()
        );
        assert!(when_holds(&json!({"input": "x", "operator": "eq", "values": ["x"]})).is_err());
        assert!(when_holds(&json!({"cel": "double('0.93') > 0.9"})).unwrap());
        assert!(!when_holds(&json!({"cel": "double('2') <= 1.5 || 'a' == 'b'"})).unwrap());
        assert!(when_holds(&json!({"cel": "!('x' in ['a', 'b']) && int('3') == 3"})).unwrap());
        assert!(when_holds(&json!({"cel": "double('abc') > 1.0"})).is_err());
    }

    #[test]
    fn matrix_combinations_follow_tekton() {
        let params = vec![
            ("a".to_owned(), Val::Arr(vec!["1".into(), "2".into()])),
            ("b".to_owned(), Val::Arr(vec!["x".into(), "y".into()])),
        ];
        let combos = combinations(&params, &[]);
        let flat: Vec<String> = combos
            .iter()
            .map(|c| {
                c.iter()
                    .map(|(_, v)| v.as_str())
                    .collect::<Vec<_>>()
                    .join("")
            })
            .collect();
        assert_eq!(flat, ["1x", "1y", "2x", "2y"]);
        let include = vec![
            vec![("item".to_owned(), "1".to_owned())],
            vec![
                ("item".to_owned(), "2".to_owned()),
                ("item_f".to_owned(), "z".to_owned()),
            ],
        ];
        assert_eq!(combinations(&[], &include), include);
        let extra = vec![vec![
            ("a".to_owned(), "1".to_owned()),
            ("c".to_owned(), "k".to_owned()),
        ]];
        let with = combinations(&params, &extra);
        assert_eq!(with.len(), 4);
        assert_eq!(with[0].len(), 3);
        assert_eq!(with[2].len(), 2);
    }

    #[test]
    fn go_durations() {
        assert_eq!(go_duration("1h0m0s"), Some(Duration::from_secs(3600)));
        assert_eq!(go_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(go_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(go_duration("0s"), Some(Duration::ZERO));
        assert_eq!(go_duration("10x"), None);
    }
}
