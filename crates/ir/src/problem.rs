//! Validation problems: every problem found in a document, each with a
//! JSON-pointer path, a stable machine code and a human message.

use serde::Serialize;
use std::fmt;

/// Stable machine codes. Clients match on these; never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// The text is not well-formed YAML or JSON.
    Syntax,
    /// The document exceeds the size limit.
    DocumentTooLarge,
    /// A field has the wrong type or shape.
    InvalidType,
    /// A required field is absent.
    MissingField,
    /// A field the IR does not define (often a typo).
    UnknownField,
    /// `apiVersion` is not one this build understands.
    UnsupportedApiVersion,
    /// The target engine cannot express a feature the workflow uses.
    UnsupportedFeature,
    /// A name is used twice where it must be unique.
    DuplicateName,
    /// A name breaks the naming rules (DNS-1123 label and friends).
    InvalidName,
    /// A value is outside its allowed range.
    OutOfRange,
    /// A value is malformed (duration, quantity, cron, operator…).
    InvalidValue,
    /// A step declares none or more than one of `container`, `script`, `job`.
    InvalidStepKind,
    /// Two fields that exclude each other are both set.
    ConflictingFields,
    /// A `{{…}}` expression is malformed or not allowed where it stands.
    InvalidReference,
    /// A reference or dependency names a step that does not exist.
    UnknownStep,
    /// A reference names a workflow parameter that is not declared.
    UnknownParameter,
    /// A reference names an output the step does not declare.
    UnknownOutput,
    /// Dependencies form a cycle.
    Cycle,
    /// A `when` condition reads a step that is not upstream of it.
    WhenNotUpstream,
    /// The workflow has more steps than allowed.
    TooManySteps,
    /// The workflow has no steps.
    EmptyWorkflow,
    /// An environment variable reads a secret the tenant does not have.
    UnknownSecret,
    /// An environment variable reads a key its secret does not hold.
    UnknownSecretKey,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Syntax => "syntax",
            Code::DocumentTooLarge => "document_too_large",
            Code::InvalidType => "invalid_type",
            Code::MissingField => "missing_field",
            Code::UnknownField => "unknown_field",
            Code::UnsupportedApiVersion => "unsupported_api_version",
            Code::UnsupportedFeature => "unsupported_feature",
            Code::DuplicateName => "duplicate_name",
            Code::InvalidName => "invalid_name",
            Code::OutOfRange => "out_of_range",
            Code::InvalidValue => "invalid_value",
            Code::InvalidStepKind => "invalid_step_kind",
            Code::ConflictingFields => "conflicting_fields",
            Code::InvalidReference => "invalid_reference",
            Code::UnknownStep => "unknown_step",
            Code::UnknownParameter => "unknown_parameter",
            Code::UnknownOutput => "unknown_output",
            Code::Cycle => "cycle",
            Code::WhenNotUpstream => "when_not_upstream",
            Code::TooManySteps => "too_many_steps",
            Code::EmptyWorkflow => "empty_workflow",
            Code::UnknownSecret => "unknown_secret",
            Code::UnknownSecretKey => "unknown_secret_key",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem in a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// JSON pointer (RFC 6901) to the offending value; `""` is the document.
    pub path: String,
    pub code: Code,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {} ({})", self.message, self.code)
    }
}

/// Every problem found in one document; never empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(transparent)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    pub fn iter(&self) -> std::slice::Iter<'_, Problem> {
        self.0.iter()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn has(&self, code: Code) -> bool {
        self.0.iter().any(|p| p.code == code)
    }
}

impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} problem(s)", self.0.len())?;
        for p in &self.0 {
            write!(f, "\n  {p}")?;
        }
        Ok(())
    }
}

impl IntoIterator for Problems {
    type Item = Problem;
    type IntoIter = std::vec::IntoIter<Problem>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// A JSON pointer under construction. Cheap to extend for the short paths
/// validation builds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pointer(pub(crate) String);

impl Pointer {
    pub fn root() -> Self {
        Pointer(String::new())
    }
    /// Appends one reference token, escaped per RFC 6901.
    pub fn key(&self, token: &str) -> Self {
        let mut s = String::with_capacity(self.0.len() + token.len() + 1);
        s.push_str(&self.0);
        s.push('/');
        for c in token.chars() {
            match c {
                '~' => s.push_str("~0"),
                '/' => s.push_str("~1"),
                c => s.push(c),
            }
        }
        Pointer(s)
    }
    pub fn index(&self, i: usize) -> Self {
        Pointer(format!("{}/{i}", self.0))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Collects problems while a validator walks a document.
#[derive(Debug, Default)]
pub struct Report(Vec<Problem>);

impl Report {
    pub fn push(&mut self, path: &Pointer, code: Code, message: impl Into<String>) {
        self.0.push(Problem {
            path: path.0.clone(),
            code,
            message: message.into(),
        });
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn extend(&mut self, other: impl IntoIterator<Item = Problem>) {
        self.0.extend(other);
    }
    /// Problems in document order (by path, then code) so output is stable.
    pub fn finish(mut self) -> Result<(), Problems> {
        if self.0.is_empty() {
            return Ok(());
        }
        self.0.sort_by(|a, b| {
            path_order(&a.path)
                .cmp(&path_order(&b.path))
                .then(a.code.cmp(&b.code))
        });
        self.0.dedup();
        Err(Problems(self.0))
    }
}

/// Orders pointers segment by segment, numerically where both are indexes,
/// so `/steps/10` sorts after `/steps/9`.
fn path_order(path: &str) -> Vec<PathKey<'_>> {
    path.split('/')
        .map(|seg| match seg.parse::<u64>() {
            Ok(n) => PathKey::Index(n),
            Err(_) => PathKey::Key(seg),
        })
        .collect()
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum PathKey<'a> {
    Index(u64),
    Key(&'a str),
}
