//! References in Argo's terms: what a `{{…}}` becomes where a task is
//! called, how a step's text reaches its template through input parameters,
//! and `when` conditions as govaluate expressions.

use super::analysis::{Analysis, StepInfo};
use super::model::{Artifact, BucketKey, Http, Raw};
use super::names::{MAX_NAME, Names};
use super::unsupported;
use crate::EngineError;
use couler_ir::refs::{Ref, Segment, references, segments};
use couler_ir::{Condition, Operator, Step};
use couler_optimizer::Action;

/// The annotation Couler's cancel sets on a Workflow it stops (no dots:
/// Argo splits tag names on them).
pub(crate) const CANCEL_ANNOTATION: &str = "couler-cancelled";

/// `{{workflow.status}}` in Couler's spelling. Argo's exit handlers see
/// `Succeeded`, `Failed` or `Error`, and a stopped workflow reports
/// `Failed`; Couler's cancel also sets [`CANCEL_ANNOTATION`], which makes
/// it `cancelled`.
pub(super) const WORKFLOW_STATUS: &str = "{{=workflow.status == 'Succeeded' ? 'succeeded' : (workflow.annotations['couler-cancelled'] == 'true' ? 'cancelled' : 'failed')}}";

/// A value where a task is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Operand {
    /// An Argo template tag, substituted by Argo at run time.
    Tag(String),
    /// Known now: a reused step's recorded output, a declared path, a
    /// resolved parameter.
    Literal(String),
}

impl Operand {
    pub fn into_text(self) -> String {
        match self {
            Operand::Tag(t) | Operand::Literal(t) => t,
        }
    }
}

/// The inputs a step's own template declares.
pub(super) struct Body<'a> {
    /// Input parameters, in order of first use, with what each carries.
    pub params: Vec<(String, Ref<'a>)>,
    /// Input artifacts: the declared ones, then those standing for
    /// `{{steps.S.outputs.artifacts.A}}` written into text.
    pub artifacts: Vec<InputArtifact<'a>>,
    names: Names,
    /// Names given to references so far (a handful per step).
    by_ref: Vec<(Ref<'a>, String)>,
    artifact_names: Names,
}

pub(super) struct InputArtifact<'a> {
    pub name: String,
    pub path: String,
    pub step: &'a str,
    pub artifact: &'a str,
}

impl<'a> Body<'a> {
    pub fn new(ir: &'a Step) -> Result<Body<'a>, EngineError> {
        let mut body = Body {
            params: Vec::new(),
            artifacts: Vec::new(),
            names: Names::parameters(),
            by_ref: Vec::new(),
            artifact_names: Names::parameters(),
        };
        for a in ir.inputs.iter().flat_map(|i| &i.artifacts) {
            let (step, artifact) = super::analysis::artifact_source(&ir.name, &a.from)?;
            body.artifact_names.reserve(&a.name);
            body.artifacts.push(InputArtifact {
                name: a.name.clone(),
                path: a.path.clone(),
                step,
                artifact,
            });
        }
        Ok(body)
    }

    /// The parameter name standing for `r` in this step's templates.
    pub fn name_for(&mut self, r: Ref<'a>) -> String {
        if let Some((_, n)) = self.by_ref.iter().find(|(known, _)| *known == r) {
            return n.clone();
        }
        let wanted = match r {
            Ref::StepResult(s) => format!("{s}-result"),
            Ref::StepParameter(s, p) | Ref::StepArtifact(s, p) => format!("{s}-{p}"),
            Ref::Item(None) => "item".into(),
            Ref::Item(Some(k)) => format!("item-{k}"),
            Ref::WorkflowStatus => "workflow-status".into(),
            other => other.to_string(),
        };
        let name = self.names.take(&wanted, MAX_NAME);
        self.by_ref.push((r, name.clone()));
        name
    }

    /// A name for something other than a reference (a loop counter).
    pub fn fresh(&mut self, wanted: &str) -> String {
        self.names.take(wanted, MAX_NAME)
    }

    fn param(&mut self, r: Ref<'a>) -> String {
        let name = self.name_for(r);
        if !self.params.iter().any(|(n, _)| *n == name) {
            self.params.push((name.clone(), r));
        }
        name
    }

    fn implicit_artifact(&mut self, step: &'a str, artifact: &'a str) -> String {
        let path = format!("/tmp/couler/artifacts/{step}/{artifact}");
        if !self.artifacts.iter().any(|a| a.path == path) {
            let name = self
                .artifact_names
                .take(&format!("{step}-{artifact}"), MAX_NAME);
            self.artifacts.push(InputArtifact {
                name,
                path: path.clone(),
                step,
                artifact,
            });
        }
        path
    }
}

impl<'a> Analysis<'a> {
    /// `text` as the step's template holds it: paths and known values
    /// written in, everything Argo resolves at run time passed in as an
    /// input parameter.
    pub fn rewrite(
        &self,
        s: &StepInfo<'a>,
        text: &'a str,
        body: &mut Body<'a>,
    ) -> Result<String, EngineError> {
        if !couler_ir::refs::has_references(text) {
            return Ok(text.to_owned());
        }
        let mut out = String::with_capacity(text.len());
        for segment in segments(text) {
            let r = match segment
                .map_err(|e| EngineError::Other(format!("step {:?}: {e}", s.ir.name)))?
            {
                Segment::Text(t) => {
                    out.push_str(t);
                    continue;
                }
                Segment::Ref(r) => r,
            };
            if let Ref::StepArtifact(t, a) = r
                && self.step(t).is_some_and(|t| t.runs())
            {
                out.push_str(&body.implicit_artifact(t, a));
                continue;
            }
            match self.operand(s, r)? {
                Operand::Literal(v) => out.push_str(&v),
                Operand::Tag(_) => {
                    let name = body.param(r);
                    out.push_str("{{inputs.parameters.");
                    out.push_str(&name);
                    out.push_str("}}");
                }
            }
        }
        Ok(out)
    }

    /// What `r` is where `reader`'s task is called.
    pub fn operand(&self, reader: &StepInfo<'a>, r: Ref<'a>) -> Result<Operand, EngineError> {
        let ir = reader.ir;
        let undeclared =
            || EngineError::Other(format!("step {:?}: {r} names nothing it declares", ir.name));
        Ok(match r {
            Ref::WorkflowParameter(p) => match self.plan.parameters.get(p) {
                Some(v) => Operand::Literal(v.clone()),
                None => Operand::Tag(r.to_string()),
            },
            Ref::WorkflowName => Operand::Literal(self.plan.workflow.name.clone()),
            Ref::WorkflowStatus => Operand::Tag(WORKFLOW_STATUS.into()),
            Ref::Item(_) => Operand::Tag(r.to_string()),
            Ref::TrialParameter(_) | Ref::TrialBudget => {
                return Err(unsupported(
                    &ir.name,
                    format!("{r} (hyperparameter trials are expanded by the scheduler)"),
                ));
            }
            Ref::InputArtifactPath(a) => Operand::Literal(
                ir.inputs
                    .iter()
                    .flat_map(|i| &i.artifacts)
                    .find(|x| x.name == a)
                    .ok_or_else(undeclared)?
                    .path
                    .clone(),
            ),
            Ref::OutputParameterPath(p) => {
                Operand::Literal(ir.output_parameter(p).ok_or_else(undeclared)?.path.clone())
            }
            Ref::OutputArtifactPath(a) => {
                Operand::Literal(ir.output_artifact(a).ok_or_else(undeclared)?.path.clone())
            }
            Ref::StepResult(t) | Ref::StepParameter(t, _) | Ref::StepArtifact(t, _) => {
                self.step_operand(reader, r, t)?
            }
        })
    }

    fn step_operand(
        &self,
        reader: &StepInfo<'a>,
        r: Ref<'a>,
        name: &str,
    ) -> Result<Operand, EngineError> {
        let target = self.step(name).ok_or_else(|| {
            EngineError::Other(format!(
                "step {:?} reads unknown step {name:?}",
                reader.ir.name
            ))
        })?;
        if let Action::Reuse { outputs, .. } = target.action {
            // A reused step contributes its recorded outputs; one it did not
            // record reads as empty.
            let value = match r {
                Ref::StepResult(_) => outputs.result.clone(),
                Ref::StepParameter(_, p) => outputs.parameters.get(p).cloned(),
                Ref::StepArtifact(_, a) => outputs.artifacts.get(a).map(|x| x.location.clone()),
                _ => None,
            };
            return Ok(Operand::Literal(value.unwrap_or_default()));
        }
        let tag = if reader.exit && !target.exit {
            let g = &target.globals;
            let global = match r {
                Ref::StepResult(_) => g.result.as_ref(),
                Ref::StepParameter(_, p) => g.parameters.get(p),
                Ref::StepArtifact(_, a) => g.artifacts.get(a),
                _ => None,
            }
            .ok_or_else(|| EngineError::Other(format!("{r} has no global name")))?;
            match r {
                Ref::StepArtifact(..) => format!("{{{{workflow.outputs.artifacts.{global}}}}}"),
                _ => format!("{{{{workflow.outputs.parameters.{global}}}}}"),
            }
        } else {
            let task = &target.task;
            match r {
                Ref::StepResult(_) if target.exports() => format!(
                    "{{{{tasks.{task}.outputs.parameters.{}}}}}",
                    target.result_param
                ),
                Ref::StepResult(_) => format!("{{{{tasks.{task}.outputs.result}}}}"),
                Ref::StepParameter(_, p) => format!("{{{{tasks.{task}.outputs.parameters.{p}}}}}"),
                Ref::StepArtifact(_, a) => format!("{{{{tasks.{task}.outputs.artifacts.{a}}}}}"),
                _ => unreachable!("a step reference"),
            }
        };
        Ok(Operand::Tag(tag))
    }

    /// The argument that hands input artifact `a` to `reader`'s task.
    pub fn artifact_argument(
        &self,
        reader: &StepInfo<'a>,
        a: &InputArtifact<'a>,
    ) -> Result<Artifact, EngineError> {
        let mut arg = Artifact::named(&a.name);
        match self.operand(reader, Ref::StepArtifact(a.step, a.artifact))? {
            Operand::Tag(from) => arg.from = Some(from),
            Operand::Literal(location) if location.is_empty() => {
                if !reader.skipped {
                    return Err(EngineError::Other(format!(
                        "step {:?} reads artifact {:?} of reused step {:?}, which recorded none",
                        reader.ir.name, a.artifact, a.step
                    )));
                }
                // The task is skipped; Argo still wants a source.
                arg.raw = Some(Raw {
                    data: String::new(),
                });
            }
            Operand::Literal(location) => locate(&mut arg, &location).ok_or_else(|| {
                unsupported(
                    &reader.ir.name,
                    format!(
                        "artifact {:?} of reused step {:?} is stored at {location:?}, which Argo pods cannot fetch (s3://, gs:// and http(s):// locations can be)",
                        a.artifact, a.step
                    ),
                )
            })?,
        }
        Ok(arg)
    }
}

/// Points an artifact argument at a stored location.
fn locate(arg: &mut Artifact, location: &str) -> Option<()> {
    let bucket_key = |rest: &str| {
        let (bucket, key) = rest.split_once('/')?;
        (!bucket.is_empty() && !key.is_empty()).then(|| BucketKey {
            bucket: bucket.to_owned(),
            key: key.to_owned(),
        })
    };
    if let Some(rest) = location.strip_prefix("s3://") {
        arg.s3 = Some(bucket_key(rest)?);
    } else if let Some(rest) = location.strip_prefix("gs://") {
        arg.gcs = Some(bucket_key(rest)?);
    } else if location.starts_with("http://") || location.starts_with("https://") {
        arg.http = Some(Http {
            url: location.to_owned(),
        });
    } else {
        return None;
    }
    Some(())
}

/// Whether any condition reads `{{item}}` (it is then judged per instance).
pub(super) fn reads_item(c: &Condition) -> bool {
    references(&c.input).any(|r| matches!(r, Ok(Ref::Item(_))))
}

/// Conditions joined with `&&` as an Argo `when` (govaluate syntax):
/// text comparisons between quoted strings, `lt`/`le`/`gt`/`ge` between
/// numbers, `in` as `==` joined with `||`, `notin` as `!=` joined with `&&`.
pub(super) fn when_expression<'a>(
    conditions: &[&'a Condition],
    operand: &mut dyn FnMut(Ref<'a>) -> Result<Operand, EngineError>,
) -> Result<Option<String>, EngineError> {
    let mut parts = Vec::with_capacity(conditions.len());
    for c in conditions {
        let mut pieces = Vec::new();
        for segment in segments(&c.input) {
            match segment.map_err(|e| EngineError::Other(e.to_string()))? {
                Segment::Text(t) => pieces.push(Operand::Literal(t.to_owned())),
                Segment::Ref(r) => pieces.push(operand(r)?),
            }
        }
        let value = c.value.as_ref().map(|v| v.as_str()).unwrap_or_default();
        let compare = |op: &str, v: &str| format!("{} {op} {}", quoted(&pieces), quote(v));
        let expr = match c.operator {
            Operator::Eq => compare("==", value),
            Operator::Ne => compare("!=", value),
            Operator::In | Operator::Notin => {
                let (op, join) = if c.operator == Operator::In {
                    ("==", " || ")
                } else {
                    ("!=", " && ")
                };
                let each: Vec<String> = c.values.iter().map(|v| compare(op, v.as_str())).collect();
                if each.len() == 1 {
                    each.into_iter().next().unwrap_or_default()
                } else {
                    format!("({})", each.join(join))
                }
            }
            op => {
                let symbol = match op {
                    Operator::Lt => "<",
                    Operator::Le => "<=",
                    Operator::Gt => ">",
                    _ => ">=",
                };
                format!("{} {symbol} {}", numeric(&pieces), number(value))
            }
        };
        parts.push(expr);
    }
    Ok((!parts.is_empty()).then(|| parts.join(" && ")))
}

/// A govaluate string literal of the pieces: literal text escaped, tags
/// left for Argo to substitute first.
fn quoted(pieces: &[Operand]) -> String {
    let mut out = String::from("'");
    for p in pieces {
        match p {
            Operand::Literal(t) => escape_into(&mut out, t),
            Operand::Tag(t) => out.push_str(t),
        }
    }
    out.push('\'');
    out
}

fn quote(text: &str) -> String {
    let mut out = String::from("'");
    escape_into(&mut out, text);
    out.push('\'');
    out
}

/// govaluate ends a string at either quote and reads `\` as an escape.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        if matches!(c, '\\' | '\'' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
}

/// The pieces as a number: a known number written out, substituted tags
/// left bare for govaluate to read as numbers.
fn numeric(pieces: &[Operand]) -> String {
    if pieces.iter().all(|p| matches!(p, Operand::Literal(_))) {
        let text: String = pieces.iter().map(|p| p.clone().into_text()).collect();
        return number(&text);
    }
    pieces.iter().map(|p| p.clone().into_text()).collect()
}

/// A number in a form govaluate reads (`1e3` becomes `1000`); text that is
/// not a number stays a string and fails the comparison at run time, as
/// it does on the local engine.
fn number(text: &str) -> String {
    match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() => format!("{n}"),
        _ => quote(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use couler_ir::scalar::ParamValue;

    #[test]
    fn every_store_argo_says_it_reads_is_one_pods_fetch_from() {
        for prefix in super::super::READS {
            let mut arg = Artifact::named("m");
            assert!(
                locate(&mut arg, &format!("{prefix}bucket/key")).is_some(),
                "{prefix}"
            );
        }
        assert!(locate(&mut Artifact::named("m"), "file:///data/m").is_none());
    }

    fn condition(input: &str, op: Operator, values: &[&str]) -> Condition {
        Condition {
            input: input.into(),
            operator: op,
            value: (!op.takes_list()).then(|| ParamValue(values[0].into())),
            values: if op.takes_list() {
                values.iter().map(|v| ParamValue((*v).into())).collect()
            } else {
                vec![]
            },
        }
    }

    fn expr(conditions: &[Condition]) -> String {
        let refs: Vec<&Condition> = conditions.iter().collect();
        when_expression(&refs, &mut |r| {
            Ok(match r {
                Ref::StepResult(s) => Operand::Tag(format!("{{{{tasks.{s}.outputs.result}}}}")),
                _ => Operand::Literal("it's".into()),
            })
        })
        .unwrap()
        .unwrap()
    }

    #[test]
    fn every_operator() {
        let flip = "{{steps.flip.outputs.result}}";
        assert_eq!(
            expr(&[condition(flip, Operator::Eq, &["heads"])]),
            "'{{tasks.flip.outputs.result}}' == 'heads'"
        );
        assert_eq!(
            expr(&[
                condition(flip, Operator::In, &["tails", "edge"]),
                condition(flip, Operator::Notin, &["x"]),
            ]),
            "('{{tasks.flip.outputs.result}}' == 'tails' || '{{tasks.flip.outputs.result}}' == 'edge') && '{{tasks.flip.outputs.result}}' != 'x'"
        );
        assert_eq!(
            expr(&[
                condition(flip, Operator::Lt, &["1e3"]),
                condition(flip, Operator::Ge, &["-0.5"])
            ]),
            "{{tasks.flip.outputs.result}} < 1000 && {{tasks.flip.outputs.result}} >= -0.5"
        );
        assert_eq!(
            expr(&[condition(
                "n={{workflow.name}}",
                Operator::Ne,
                &["a'b\"c\\"]
            )]),
            r#"'n=it\'s' != 'a\'b\"c\\'"#
        );
        assert_eq!(
            expr(&[condition("{{workflow.name}}", Operator::Gt, &["2"])]),
            r"'it\'s' > 2"
        );
    }
}
