//! Text to typed IR. The fast path deserializes JSON straight into the
//! types; only when that fails do we re-read the document as a tree and
//! deserialize piece by piece, so that every broken step is reported, not
//! just the first.

use crate::problem::{Code, Pointer, Problem};
use crate::types::{Step, Workflow};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The surface syntax of a document. JSON is also valid YAML, but the JSON
/// reader is faster and gives better messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

impl Format {
    /// JSON when the first non-blank character opens an object.
    pub fn detect(text: &str) -> Format {
        match text.trim_start().as_bytes().first() {
            Some(b'{') => Format::Json,
            _ => Format::Yaml,
        }
    }

    /// From a file name's extension; `None` for anything else.
    pub fn from_path(path: &std::path::Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "json" => Some(Format::Json),
            "yaml" | "yml" => Some(Format::Yaml),
            _ => None,
        }
    }

    /// From an HTTP media type such as `application/yaml; charset=utf-8`.
    pub fn from_media_type(media_type: &str) -> Option<Format> {
        let essence = media_type.split(';').next()?.trim().to_ascii_lowercase();
        match essence.as_str() {
            "application/json" => Some(Format::Json),
            "application/yaml" | "application/x-yaml" | "text/yaml" | "text/x-yaml" => {
                Some(Format::Yaml)
            }
            e if e.ends_with("+json") => Some(Format::Json),
            e if e.ends_with("+yaml") => Some(Format::Yaml),
            _ => None,
        }
    }
}

/// Size bounds that keep a hostile document from exhausting the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_document_bytes: usize,
    pub max_steps: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_document_bytes: 64 << 20,
            max_steps: 100_000,
        }
    }
}

/// Parses a document into the typed IR. Returns the workflow when its
/// structure could be read, plus every structural problem found (unknown
/// fields do not stop parsing; they are reported alongside).
pub(crate) fn parse(
    text: &str,
    format: Format,
    limits: &Limits,
) -> (Option<Workflow>, Vec<Problem>) {
    if text.len() > limits.max_document_bytes {
        let problem = Problem {
            path: String::new(),
            code: Code::DocumentTooLarge,
            message: format!(
                "document is {} bytes; the limit is {} bytes",
                text.len(),
                limits.max_document_bytes
            ),
        };
        return (None, vec![problem]);
    }
    match format {
        // Only a document that may hold a NUL is read as a tree to find it.
        Format::Json if json_may_hold_nul(text.as_bytes()) => {
            match serde_json::from_str::<Value>(text) {
                Ok(value) => from_value(value),
                Err(e) => (None, vec![syntax(&e)]),
            }
        }
        Format::Json => {
            let mut de = serde_json::Deserializer::from_str(text);
            let (workflow, mut problems) = typed::<Workflow, _>(&mut de, &Pointer::root());
            if let Some(workflow) = workflow {
                if let Err(e) = de.end() {
                    problems.push(syntax(&e));
                    return (None, problems);
                }
                return (Some(workflow), problems);
            }
            if problems.iter().any(|p| p.code == Code::Syntax) {
                return (None, problems);
            }
            // A shape error: re-read as a tree to report every broken piece.
            match serde_json::from_str::<Value>(text) {
                Ok(value) => (None, piecewise(value)),
                Err(e) => (None, vec![syntax(&e)]),
            }
        }
        Format::Yaml => match serde_saphyr::from_str_with_options::<Value>(text, yaml_options()) {
            Ok(value) => from_value(value),
            Err(e) => {
                let problem = Problem {
                    path: String::new(),
                    code: Code::Syntax,
                    message: format!("invalid YAML: {e}"),
                };
                (None, vec![problem])
            }
        },
    }
}

/// YAML 1.2 scalars: `no`, `on` and `n` stay strings (a step named `n`
/// must not turn into `false`), and `007` keeps its zeros.
fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options
}

/// Typed IR from an already-parsed tree (YAML documents, API bodies).
pub(crate) fn from_value(value: Value) -> (Option<Workflow>, Vec<Problem>) {
    if let Some(path) = nul_in(&value) {
        let problem = Problem {
            path: path.to_string(),
            code: Code::InvalidValue,
            message: NUL_MESSAGE.into(),
        };
        return (None, vec![problem]);
    }
    // Try whole first: cheap when the document is well-formed.
    let (workflow, problems) = typed::<Workflow, _>(&value, &Pointer::root());
    match workflow {
        Some(w) => (Some(w), problems),
        None => (None, piecewise(value)),
    }
}

/// Why text holding a NUL character is refused: no name or value can
/// hold one (Postgres cannot store it, and engines cut strings there).
pub const NUL_MESSAGE: &str = "text may not contain the NUL character (\\u0000)";

/// Whether JSON text may hold a NUL character: only as the escape
/// `\u0000` (a raw one is a syntax error); an escaped backslash before
/// `u0000` also matches, and the tree then shows there is none.
pub fn json_may_hold_nul(text: &[u8]) -> bool {
    memchr::memmem::find(text, br"\u0000").is_some()
}

/// Where in `value` the first string or key holding a NUL character is.
pub fn nul_in(value: &Value) -> Option<Pointer> {
    fn walk(value: &Value, at: &mut Vec<String>) -> bool {
        match value {
            Value::String(s) => s.contains('\0'),
            Value::Array(items) => items.iter().enumerate().any(|(i, item)| {
                at.push(i.to_string());
                let found = walk(item, at);
                if !found {
                    at.pop();
                }
                found
            }),
            Value::Object(fields) => fields.iter().any(|(key, item)| {
                at.push(key.clone());
                let found = key.contains('\0') || walk(item, at);
                if !found {
                    at.pop();
                }
                found
            }),
            _ => false,
        }
    }
    let mut at = Vec::new();
    walk(value, &mut at).then(|| at.iter().fold(Pointer::root(), |p, token| p.key(token)))
}

/// Deserializes the header and each step on its own so that one broken step
/// does not hide the others.
fn piecewise(value: Value) -> Vec<Problem> {
    let Value::Object(mut object) = value else {
        return vec![Problem {
            path: String::new(),
            code: Code::InvalidType,
            message: format!("a workflow must be a mapping, found {}", kind_of(&value)),
        }];
    };
    let mut problems = Vec::new();
    for field in ["steps", "onExit"] {
        let Some(list) = object.remove(field) else {
            continue;
        };
        let base = Pointer::root().key(field);
        match list {
            Value::Array(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    problems.extend(every_problem::<Step>(item, &base.index(i)));
                }
            }
            other => problems.push(Problem {
                path: base.to_string(),
                code: Code::InvalidType,
                message: format!("expected a list of steps, found {}", kind_of(&other)),
            }),
        }
        object.insert(field.to_owned(), Value::Array(Vec::new()));
    }
    problems.extend(every_problem::<Workflow>(
        Value::Object(object),
        &Pointer::root(),
    ));
    problems
}

/// The most shape problems reported for one step (or the header).
const SHAPE_PROBLEMS_PER_VALUE: usize = 20;

/// Every shape problem of `value` (at `base`) read as a `T`, where serde
/// stops at the first: after each, the member at fault is set aside and
/// the rest read again.
fn every_problem<T: DeserializeOwned>(mut value: Value, base: &Pointer) -> Vec<Problem> {
    let mut problems: Vec<Problem> = Vec::new();
    let mut set_aside: Vec<String> = Vec::new();
    for _ in 0..SHAPE_PROBLEMS_PER_VALUE {
        let (_, found) = typed::<T, _>(&value, base);
        let mut shape = None;
        for problem in found {
            if problem.code != Code::UnknownField {
                shape = Some(problem);
            } else if !problems.contains(&problem) {
                problems.push(problem);
            }
        }
        let Some(shape) = shape else {
            break; // read
        };
        // A required member set aside is missing now: not the author's.
        if shape.code == Code::MissingField && set_aside.contains(&shape.path) {
            break;
        }
        let removed = shape
            .path
            .strip_prefix(base.as_str())
            .and_then(|at| set_member_aside(&mut value, at));
        problems.push(shape);
        match removed {
            Some(removed) => set_aside.push(format!("{base}{removed}")),
            None => break,
        }
    }
    problems
}

/// Removes the innermost mapping member on the way to `at` (a pointer into
/// `value`); the pointer of what was removed.
fn set_member_aside(value: &mut Value, at: &str) -> Option<String> {
    let tokens: Vec<String> = at
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    // The deepest depth whose container is a mapping holding the token.
    let mut member = None;
    let mut node = &*value;
    for (depth, token) in tokens.iter().enumerate() {
        let next = match node {
            Value::Object(fields) => {
                let next = fields.get(token);
                if next.is_some() {
                    member = Some(depth);
                }
                next
            }
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None => break,
        }
    }
    let depth = member?;
    let parent = tokens[..depth]
        .iter()
        .fold(Pointer::root(), |p, t| p.key(t));
    value
        .pointer_mut(parent.as_str())?
        .as_object_mut()?
        .remove(&tokens[depth])?;
    Some(parent.key(&tokens[depth]).to_string())
}

/// Deserializes one value, collecting unknown fields and the first shape
/// error, each at its JSON pointer under `base`.
fn typed<'de, T, D>(de: D, base: &Pointer) -> (Option<T>, Vec<Problem>)
where
    T: DeserializeOwned,
    D: serde::Deserializer<'de, Error = serde_json::Error>,
{
    let mut problems = Vec::new();
    let result = {
        let mut unknown = |path: serde_ignored::Path<'_>| {
            problems.push(Problem {
                path: ignored_pointer(base, &path),
                code: Code::UnknownField,
                message: format!("unknown field `{}`", last_key(&path)),
            });
        };
        serde_path_to_error::deserialize::<_, T>(serde_ignored::Deserializer::new(de, &mut unknown))
    };
    match result {
        Ok(value) => (Some(value), problems),
        Err(e) => {
            let mut path = base.clone();
            for segment in e.path().iter() {
                path = match segment {
                    serde_path_to_error::Segment::Seq { index } => path.index(*index),
                    serde_path_to_error::Segment::Map { key } => path.key(key),
                    serde_path_to_error::Segment::Enum { variant } => path.key(variant),
                    serde_path_to_error::Segment::Unknown => path,
                };
            }
            let inner = e.into_inner();
            if inner.is_syntax() || inner.is_eof() {
                problems.push(syntax(&inner));
            } else {
                problems.push(shape(path, &inner));
            }
            (None, problems)
        }
    }
}

fn syntax(e: &serde_json::Error) -> Problem {
    Problem {
        path: String::new(),
        code: Code::Syntax,
        message: format!("invalid JSON: {e}"),
    }
}

/// Classifies serde's data errors by their (stable) wording.
fn shape(path: Pointer, e: &serde_json::Error) -> Problem {
    // serde_json appends " at line L column C" for in-text errors.
    let full = e.to_string();
    let message = match full.rfind(" at line ") {
        Some(i) if e.line() > 0 => full[..i].to_owned(),
        _ => full,
    };
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        return Problem {
            path: path.key(field).to_string(),
            code: Code::MissingField,
            message: format!("required field `{field}` is missing"),
        };
    }
    let code = if message.starts_with("invalid type") || message.starts_with("invalid length") {
        Code::InvalidType
    } else {
        Code::InvalidValue
    };
    Problem {
        path: path.to_string(),
        code,
        message,
    }
}

fn ignored_pointer(base: &Pointer, path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => base.to_string(),
        Path::Seq { parent, index } => format!("{}/{index}", ignored_pointer(base, parent)),
        Path::Map { parent, key } => Pointer(ignored_pointer(base, parent)).key(key).to_string(),
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => ignored_pointer(base, parent),
    }
}

fn last_key(path: &serde_ignored::Path<'_>) -> String {
    match path {
        serde_ignored::Path::Map { key, .. } => key.clone(),
        other => other.to_string(),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}
