//! `{{…}}` references inside strings: the one grammar shared by validation,
//! dependency inference and (later) parameter resolution.

use std::fmt;

/// One parsed reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ref<'a> {
    /// `{{workflow.parameters.NAME}}`
    WorkflowParameter(&'a str),
    /// `{{workflow.name}}`
    WorkflowName,
    /// `{{workflow.status}}`, in exit handlers only.
    WorkflowStatus,
    /// `{{steps.STEP.outputs.result}}`: the step's standard output.
    StepResult(&'a str),
    /// `{{steps.STEP.outputs.parameters.NAME}}`
    StepParameter(&'a str, &'a str),
    /// `{{steps.STEP.outputs.artifacts.NAME}}`
    StepArtifact(&'a str, &'a str),
    /// `{{item}}` or `{{item.FIELD}}` inside a `map`.
    Item(Option<&'a str>),
    /// `{{trial.parameters.NAME}}` inside a `tune`.
    TrialParameter(&'a str),
    /// `{{trial.budget}}` under successive halving.
    TrialBudget,
    /// `{{inputs.artifacts.NAME.path}}`: where the step finds an input artifact.
    InputArtifactPath(&'a str),
    /// `{{outputs.parameters.NAME.path}}`: where the step writes an output parameter.
    OutputParameterPath(&'a str),
    /// `{{outputs.artifacts.NAME.path}}`: where the step writes an output artifact.
    OutputArtifactPath(&'a str),
}

impl Ref<'_> {
    /// The step this reference reads from, if any.
    pub fn step(&self) -> Option<&str> {
        match self {
            Ref::StepResult(s) | Ref::StepParameter(s, _) | Ref::StepArtifact(s, _) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for Ref<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ref::WorkflowParameter(p) => write!(f, "{{{{workflow.parameters.{p}}}}}"),
            Ref::WorkflowName => f.write_str("{{workflow.name}}"),
            Ref::WorkflowStatus => f.write_str("{{workflow.status}}"),
            Ref::StepResult(s) => write!(f, "{{{{steps.{s}.outputs.result}}}}"),
            Ref::StepParameter(s, p) => write!(f, "{{{{steps.{s}.outputs.parameters.{p}}}}}"),
            Ref::StepArtifact(s, a) => write!(f, "{{{{steps.{s}.outputs.artifacts.{a}}}}}"),
            Ref::Item(None) => f.write_str("{{item}}"),
            Ref::Item(Some(k)) => write!(f, "{{{{item.{k}}}}}"),
            Ref::TrialParameter(p) => write!(f, "{{{{trial.parameters.{p}}}}}"),
            Ref::TrialBudget => f.write_str("{{trial.budget}}"),
            Ref::InputArtifactPath(a) => write!(f, "{{{{inputs.artifacts.{a}.path}}}}"),
            Ref::OutputParameterPath(p) => write!(f, "{{{{outputs.parameters.{p}.path}}}}"),
            Ref::OutputArtifactPath(a) => write!(f, "{{{{outputs.artifacts.{a}.path}}}}"),
        }
    }
}

/// A malformed `{{…}}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    #[error("unterminated \"{{{{\" (missing \"}}}}\")")]
    Unterminated,
    #[error(
        "unknown reference \"{{{{{0}}}}}\"; expected workflow.parameters.NAME, steps.STEP.outputs.(result|parameters.NAME|artifacts.NAME), (inputs|outputs).(parameters|artifacts).NAME.path, item, or trial.parameters.NAME"
    )]
    Unknown(String),
}

/// A piece of a template string: literal text or a reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    Text(&'a str),
    Ref(Ref<'a>),
}

/// Splits `s` into literal text and references, in order.
pub fn segments(s: &str) -> Segments<'_> {
    Segments { rest: s }
}

pub struct Segments<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Segments<'a> {
    type Item = Result<Segment<'a>, RefError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match find_double(self.rest, b'{') {
            Some(0) => {
                let Some(end) = find_double(self.rest, b'}') else {
                    self.rest = "";
                    return Some(Err(RefError::Unterminated));
                };
                let expr = &self.rest[2..end];
                self.rest = &self.rest[end + 2..];
                Some(parse_expr(expr.trim()).map(Segment::Ref))
            }
            Some(start) => {
                let text = &self.rest[..start];
                self.rest = &self.rest[start..];
                Some(Ok(Segment::Text(text)))
            }
            None => {
                let text = self.rest;
                self.rest = "";
                Some(Ok(Segment::Text(text)))
            }
        }
    }
}

/// Where `cc` (`{{` or `}}`) first occurs in `s`. Looks at every other
/// byte: one that is not `c` rules out the pairs starting at it and just
/// before it, so only a `c` makes the scan look at its neighbours.
fn find_double(s: &str, c: u8) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        if bytes[i] != c {
            i += 2;
        } else if bytes[i - 1] == c {
            return Some(i - 1);
        } else {
            i += 1;
        }
    }
    None
}

/// Whether `s` holds a `{{`, that is, may hold references.
pub fn has_references(s: &str) -> bool {
    find_double(s, b'{').is_some()
}

/// Every reference in `s`, with errors for malformed ones.
pub fn references(s: &str) -> impl Iterator<Item = Result<Ref<'_>, RefError>> {
    // Fast path: most strings hold no reference at all.
    let rest = if has_references(s) { s } else { "" };
    segments(rest).filter_map(|seg| match seg {
        Ok(Segment::Ref(r)) => Some(Ok(r)),
        Ok(Segment::Text(_)) => None,
        Err(e) => Some(Err(e)),
    })
}

/// The reference when `s` is exactly one `{{…}}` and nothing else.
pub fn sole_reference(s: &str) -> Option<Result<Ref<'_>, RefError>> {
    let mut segs = segments(s.trim());
    match (segs.next(), segs.next()) {
        (Some(Ok(Segment::Ref(r))), None) => Some(Ok(r)),
        (Some(Err(e)), _) => Some(Err(e)),
        _ => None,
    }
}

fn parse_expr(expr: &str) -> Result<Ref<'_>, RefError> {
    let unknown = || RefError::Unknown(expr.to_owned());
    // No reference has more than five parts: split into an array, not a
    // Vec, by a byte scan (cheaper than a `char` search on parts this short).
    let mut parts = [""; 5];
    let mut n = 0;
    let mut rest = Some(expr);
    while let Some(r) = rest {
        let (part, next) = match r.bytes().position(|b| b == b'.') {
            Some(dot) => (&r[..dot], Some(&r[dot + 1..])),
            None => (r, None),
        };
        let Some(slot) = parts.get_mut(n) else {
            return Err(unknown());
        };
        *slot = part;
        n += 1;
        rest = next;
    }
    let parts = &parts[..n];
    let r = match parts {
        ["workflow", "parameters", p] => Ref::WorkflowParameter(p),
        ["workflow", "name"] => Ref::WorkflowName,
        ["workflow", "status"] => Ref::WorkflowStatus,
        ["steps", s, "outputs", "result"] => Ref::StepResult(s),
        ["steps", s, "outputs", "parameters", p] => Ref::StepParameter(s, p),
        ["steps", s, "outputs", "artifacts", a] => Ref::StepArtifact(s, a),
        ["item"] => Ref::Item(None),
        ["item", k] => Ref::Item(Some(k)),
        ["trial", "parameters", p] => Ref::TrialParameter(p),
        ["trial", "budget"] => Ref::TrialBudget,
        ["inputs", "artifacts", a, "path"] => Ref::InputArtifactPath(a),
        ["outputs", "parameters", p, "path"] => Ref::OutputParameterPath(p),
        ["outputs", "artifacts", a, "path"] => Ref::OutputArtifactPath(a),
        _ => return Err(unknown()),
    };
    if parts.iter().any(|p| p.is_empty()) {
        return Err(unknown());
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_references_between_text() {
        let refs: Vec<_> =
            references("--lr={{ workflow.parameters.lr }} --in {{steps.prep.outputs.result}}")
                .collect::<Result<_, _>>()
                .unwrap();
        assert_eq!(
            refs,
            vec![Ref::WorkflowParameter("lr"), Ref::StepResult("prep")]
        );
    }

    #[test]
    fn single_braces_are_text() {
        let segs: Vec<_> = segments("a {b} {{workflow.name}}{ c}")
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            segs,
            vec![
                Segment::Text("a {b} "),
                Segment::Ref(Ref::WorkflowName),
                Segment::Text("{ c}")
            ]
        );
        assert!(!has_references("{a} {b}"));
        assert!(has_references("x{{"));
        assert!(matches!(
            references("{{steps.a.outputs.parameters.p.q}}").next(),
            Some(Err(RefError::Unknown(_)))
        ));
    }

    #[test]
    fn doubles_are_found_wherever_they_start() {
        for (s, at) in [
            ("{{", Some(0)),
            ("x{{", Some(1)),
            ("xy{{", Some(2)),
            ("{x{{", Some(2)),
            ("{{{", Some(0)),
            ("x{{{", Some(1)),
            ("{x{y{", None),
            ("{", None),
            ("", None),
        ] {
            assert_eq!(find_double(s, b'{'), at, "{s:?}");
        }
        assert_eq!(find_double("a}b}}", b'}'), Some(3));
        // Every string of up to eight `{` and `x`: the first pair, as a
        // plain scan finds it.
        for len in 0..=8 {
            for bits in 0..1u32 << len {
                let s: String = (0..len)
                    .map(|i| if bits >> i & 1 == 1 { '{' } else { 'x' })
                    .collect();
                let plain = s.as_bytes().windows(2).position(|w| w == b"{{");
                assert_eq!(find_double(&s, b'{'), plain, "{s:?}");
            }
        }
    }

    #[test]
    fn reports_malformed_references() {
        assert_eq!(
            references("x {{steps.a").collect::<Vec<_>>(),
            vec![Err(RefError::Unterminated)]
        );
        assert!(matches!(
            references("{{steps..outputs.result}}").next(),
            Some(Err(RefError::Unknown(_)))
        ));
        assert!(matches!(
            references("{{inputs.parameters.x}}").next(),
            Some(Err(RefError::Unknown(_)))
        ));
    }

    #[test]
    fn sole_reference_requires_the_whole_string() {
        assert_eq!(
            sole_reference(" {{steps.a.outputs.artifacts.model}} "),
            Some(Ok(Ref::StepArtifact("a", "model")))
        );
        assert_eq!(sole_reference("x{{item}}"), None);
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "{{workflow.parameters.lr}}",
            "{{steps.a.outputs.parameters.acc}}",
            "{{item.size}}",
            "{{trial.budget}}",
            "{{inputs.artifacts.data.path}}",
            "{{outputs.parameters.accuracy.path}}",
        ] {
            assert_eq!(sole_reference(s).unwrap().unwrap().to_string(), s);
        }
    }
}
