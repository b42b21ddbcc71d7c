//! What KFP's launcher does around one container: fills the `{{$.…}}`
//! placeholders of `command` and `args`, lays out the pod's input and
//! output files, and reads the outputs back after the container ends.
//!
//! Pods see only their own `/tmp` (see [`crate::kubelet`]), so local paths
//! live under `/tmp/kfp` instead of the real launcher's `/minio`, `/gcs` ….

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Where, inside the pod, an output parameter is written.
pub fn output_parameter_path(name: &str) -> String {
    format!("/tmp/kfp/outputs/parameters/{name}")
}

/// Where, inside the pod, an output artifact is written.
pub fn output_artifact_path(name: &str) -> String {
    format!("/tmp/kfp/outputs/artifacts/{name}")
}

/// Where, inside the pod, an input artifact is placed.
pub fn input_artifact_path(name: &str) -> String {
    format!("/tmp/kfp/inputs/artifacts/{name}")
}

/// An artifact as a container sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalArtifact {
    pub path: String,
    pub uri: String,
}

/// Everything a placeholder can refer to.
#[derive(Debug, Default)]
pub struct Placeholders {
    pub parameters: Map<String, Value>,
    pub input_artifacts: BTreeMap<String, LocalArtifact>,
    pub output_parameters: BTreeMap<String, String>,
    pub output_artifacts: BTreeMap<String, LocalArtifact>,
    pub job_name: String,
    pub job_uuid: String,
    pub task_name: String,
    pub task_uuid: String,
}

/// A parameter as text on a command line: strings as they are, anything
/// else as JSON (as the launcher renders numbers, lists and structs).
pub fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Placeholders {
    /// Replaces every `{{$.…}}` in `s`; an unknown or unresolvable one is an
    /// error, as it is for the launcher.
    pub fn fill(&self, s: &str) -> Result<String, String> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(start) = rest.find("{{$") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| format!("unterminated placeholder in {s:?}"))?;
            out.push_str(&self.resolve(after[..end].trim())?);
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn resolve(&self, expr: &str) -> Result<String, String> {
        let unknown = || format!("unsupported placeholder {{{{{expr}}}}}");
        let Some(path) = expr.strip_prefix("$.") else {
            return Err(unknown());
        };
        match path {
            "pipeline_job_name" => return Ok(self.job_name.clone()),
            "pipeline_job_uuid" => return Ok(self.job_uuid.clone()),
            "pipeline_task_name" => return Ok(self.task_name.clone()),
            "pipeline_task_uuid" => return Ok(self.task_uuid.clone()),
            _ => {}
        }
        let (section, rest) = path.split_once('[').ok_or_else(unknown)?;
        let (key, field) = rest.split_once(']').ok_or_else(unknown)?;
        let key = key.trim_matches(|c| c == '\'' || c == '"').to_owned();
        let field = field.strip_prefix('.').unwrap_or(field);
        let missing = |what: &str| format!("{what} {key:?} of {{{{{expr}}}}} is not defined");
        match (section, field) {
            ("inputs.parameters", "") => self
                .parameters
                .get(&key)
                .map(text)
                .ok_or_else(|| missing("input parameter")),
            ("inputs.artifacts", "path" | "uri") => {
                let a = self
                    .input_artifacts
                    .get(&key)
                    .ok_or_else(|| missing("input artifact"))?;
                Ok(if field == "path" {
                    a.path.clone()
                } else {
                    a.uri.clone()
                })
            }
            ("outputs.parameters", "output_file") => self
                .output_parameters
                .get(&key)
                .cloned()
                .ok_or_else(|| missing("output parameter")),
            ("outputs.artifacts", "path" | "uri") => {
                let a = self
                    .output_artifacts
                    .get(&key)
                    .ok_or_else(|| missing("output artifact"))?;
                Ok(if field == "path" {
                    a.path.clone()
                } else {
                    a.uri.clone()
                })
            }
            _ => Err(unknown()),
        }
    }
}

/// An output parameter's file content as the value of its declared type.
pub fn parse_parameter(text: &str, parameter_type: &str) -> Result<Value, String> {
    match parameter_type {
        "" | "STRING" => Ok(Value::String(text.to_owned())),
        "NUMBER_INTEGER" | "NUMBER_DOUBLE" => text
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("{text:?} is not a number")),
        "BOOLEAN" => match text.trim() {
            "true" | "True" => Ok(Value::Bool(true)),
            "false" | "False" => Ok(Value::Bool(false)),
            other => Err(format!("{other:?} is not a boolean")),
        },
        _ => serde_json::from_str(text).map_err(|e| format!("{text:?} is not JSON: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> Placeholders {
        let mut p = Placeholders {
            job_name: "job".into(),
            task_name: "t".into(),
            ..Default::default()
        };
        p.parameters
            .insert("pipelinechannel--a-result".into(), json!("A"));
        p.parameters.insert("n".into(), json!(3));
        p.parameters.insert("l".into(), json!(["x", 1]));
        p.output_parameters
            .insert("result".into(), output_parameter_path("result"));
        p.input_artifacts.insert(
            "data".into(),
            LocalArtifact {
                path: input_artifact_path("data"),
                uri: "minio://b/k".into(),
            },
        );
        p.output_artifacts.insert(
            "out".into(),
            LocalArtifact {
                path: output_artifact_path("out"),
                uri: "minio://b/o".into(),
            },
        );
        p
    }

    #[test]
    fn fills_what_the_compiler_emits() {
        let p = ctx();
        assert_eq!(
            p.fill("echo B got {{$.inputs.parameters['pipelinechannel--a-result']}}!")
                .unwrap(),
            "echo B got A!"
        );
        assert_eq!(
            p.fill("{{$.inputs.parameters['n']}} {{$.inputs.parameters['l']}}")
                .unwrap(),
            r#"3 ["x",1]"#
        );
        assert_eq!(
            p.fill("f=\"{{$.outputs.parameters['result'].output_file}}\"")
                .unwrap(),
            "f=\"/tmp/kfp/outputs/parameters/result\""
        );
        assert_eq!(
            p.fill("cat {{$.inputs.artifacts['data'].path}} {{$.inputs.artifacts['data'].uri}}")
                .unwrap(),
            "cat /tmp/kfp/inputs/artifacts/data minio://b/k"
        );
        assert_eq!(
            p.fill("> {{$.outputs.artifacts['out'].path}}").unwrap(),
            "> /tmp/kfp/outputs/artifacts/out"
        );
        assert_eq!(
            p.fill("{{$.pipeline_job_name}}/{{$.pipeline_task_name}}")
                .unwrap(),
            "job/t"
        );
        // Shell `{{` that is not a placeholder stays.
        assert_eq!(p.fill("echo {{x}} ${a}").unwrap(), "echo {{x}} ${a}");
    }

    #[test]
    fn unknown_placeholders_fail() {
        let p = ctx();
        assert!(p.fill("{{$.inputs.parameters['nope']}}").is_err());
        assert!(p.fill("{{$.outputs.parameters['result'].path}}").is_err());
        assert!(p.fill("{{$}}").is_err());
        assert!(p.fill("{{$.inputs.parameters['n']").is_err());
    }

    #[test]
    fn parameters_parse_by_type() {
        assert_eq!(parse_parameter("10\n", "STRING").unwrap(), json!("10\n"));
        assert_eq!(
            parse_parameter("10\n", "NUMBER_INTEGER").unwrap(),
            json!(10.0)
        );
        assert_eq!(
            parse_parameter("[1, \"a\"]", "LIST").unwrap(),
            json!([1, "a"])
        );
        assert!(parse_parameter("x", "BOOLEAN").is_err());
    }
}
