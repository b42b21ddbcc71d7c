//! The DAG templates: one task per running step, with its dependencies,
//! `when`, fan-out and arguments; one-task DAG templates around steps that
//! need one (fan-out parallelism, outputs handed to exit handlers); and
//! recursive `steps` templates for `while` loops.

use super::analysis::{Analysis, Shape, StepInfo, reused_outcome};
use super::model::{
    Arguments, Artifact, DagTask, DagTemplate, Inputs, Outputs, Parameter, Suspend, Template,
    ValueFrom, WorkflowStep,
};
use super::names::{MAX_NAME, Names};
use super::values::{Body, Operand, reads_item, when_expression};
use crate::EngineError;
use couler_ir::Condition;
use couler_ir::depends::{Expr, Outcome};
use couler_ir::refs::{Ref, references, sole_reference};

/// Templates in the order they are written: each step's outer template
/// before the template that runs it.
type Templates = Vec<Template>;

impl<'a> Analysis<'a> {
    /// The DAG template of the main steps (`exit == false`) or of the exit
    /// handlers, and the templates its tasks call; `None` for exit handlers
    /// when none runs.
    pub fn dag_template(&self, exit: bool) -> Result<Option<(Template, Templates)>, EngineError> {
        let running = self.phase(exit).filter(|s| s.runs()).count();
        let mut tasks = Vec::with_capacity(running);
        let mut templates = Vec::with_capacity(running * 2);
        for s in self.phase(exit).filter(|s| s.runs()) {
            tasks.push(self.step_task(s, &mut templates)?);
        }
        if tasks.is_empty() {
            if exit {
                return Ok(None);
            }
            // Every step was reused: a task that does nothing, as Argo
            // wants at least one.
            tasks.push(DagTask {
                name: self.noop_template.clone(),
                template: self.noop_template.clone(),
                ..DagTask::default()
            });
            templates.push(Template {
                name: self.noop_template.clone(),
                suspend: Some(Suspend {
                    duration: "0".into(),
                }),
                ..Template::default()
            });
        }
        let name = if exit {
            &self.exit_template
        } else {
            &self.main_template
        };
        let dag = Template {
            name: name.clone(),
            dag: Some(DagTemplate { tasks }),
            ..Template::default()
        };
        Ok(Some((dag, templates)))
    }

    fn step_task(
        &self,
        s: &StepInfo<'a>,
        templates: &mut Templates,
    ) -> Result<DagTask, EngineError> {
        let (body_template, body) = self.body_template(s)?;
        let task = match (s.shape, s.wrapped) {
            (Shape::Loop, _) => self.loop_task(s, body, templates)?,
            (_, true) => self.wrapped_task(s, body, templates)?,
            (_, false) => self.plain_task(s, &body)?,
        };
        templates.push(body_template);
        Ok(task)
    }

    /// Waits for every running upstream step to succeed: a skipped or
    /// failed upstream step leaves the task omitted, as Couler skips a
    /// step behind a skipped one. A step whose `depends` ask for outcomes
    /// gets them as Argo results (see [`argo_depends`]), with the known
    /// outcomes of reused steps written in.
    fn depends(&self, s: &StepInfo<'a>) -> Option<String> {
        let offset = if s.exit {
            self.plan.workflow.steps.len()
        } else {
            0
        };
        let step = |u: u32| &self.steps[offset + u as usize];
        let requirements = self.dag.requirements(s.exit);
        let parts: Vec<String> = if requirements.is_plain(s.node) {
            self.dag
                .graph(s.exit)
                .upstream(s.node)
                .iter()
                .map(|&u| step(u))
                .filter(|u| u.runs())
                .map(|u| format!("{}.Succeeded", u.task))
                .collect()
        } else {
            let known = |u: &u32| reused_outcome(step(*u).action);
            let left: Vec<Expr<u32>> = (requirements.of(s.node).iter())
                .filter_map(|r| r.expr.fold(&known).ok())
                .collect();
            let nested = left.len() > 1;
            (left.iter())
                .map(|e| argo_depends(e, &|u| step(u).task.as_str(), nested))
                .collect()
        };
        (!parts.is_empty()).then(|| parts.join(" && "))
    }

    /// The `when` of conditions judged where the task is called.
    fn outer_when(
        &self,
        s: &StepInfo<'a>,
        conditions: &[&'a Condition],
    ) -> Result<Option<String>, EngineError> {
        if s.skipped {
            return Ok(Some("false".into()));
        }
        when_expression(conditions, &mut |r| self.operand(s, r))
    }

    fn plain_task(&self, s: &StepInfo<'a>, body: &Body<'a>) -> Result<DagTask, EngineError> {
        let mut task = DagTask {
            name: s.task.clone(),
            template: s.body.clone(),
            depends: self.depends(s),
            ..DagTask::default()
        };
        for (name, r) in &body.params {
            let value = self.operand(s, *r)?.into_text();
            task.arguments
                .parameters
                .push(Parameter::value(name, value));
        }
        for a in &body.artifacts {
            task.arguments.artifacts.push(self.artifact_argument(s, a)?);
        }
        let conditions: Vec<&Condition> = s.ir.when.iter().collect();
        task.when = self.outer_when(s, &conditions)?;
        self.fan_out(s, &mut task, &mut |r| self.operand(s, r))?;
        Ok(task)
    }

    /// `withItems` or `withParam` for a `map` step.
    fn fan_out(
        &self,
        s: &StepInfo<'a>,
        task: &mut DagTask,
        operand: &mut dyn FnMut(Ref<'a>) -> Result<Operand, EngineError>,
    ) -> Result<(), EngineError> {
        let Some(map) = &s.ir.map else { return Ok(()) };
        if let Some(items) = &map.items {
            task.with_items = Some(items.clone());
        } else if let Some(from) = &map.from {
            task.with_param = Some(match sole_reference(from) {
                Some(Ok(r)) => operand(r)?.into_text(),
                // A parameter already written in: the JSON list itself.
                _ if references(from).next().is_none() => from.clone(),
                _ => {
                    return Err(EngineError::Other(format!(
                        "step {:?}: map.from {from:?} is not one reference",
                        s.ir.name
                    )));
                }
            });
        }
        Ok(())
    }

    /// A one-task DAG template around the step: `parallelism` bounds its
    /// fan-out, and its outputs carry the step's result (and what exit
    /// handlers read) out to the caller.
    fn wrapped_task(
        &self,
        s: &StepInfo<'a>,
        mut body: Body<'a>,
        templates: &mut Templates,
    ) -> Result<DagTask, EngineError> {
        let outer = s.outer.clone().unwrap_or_default();
        let mut router = Router::default();
        let mut inner = DagTask {
            name: s.task.clone(),
            template: s.body.clone(),
            ..DagTask::default()
        };
        let params = body.params.clone();
        for (name, r) in params {
            let value = router.route(self, s, &mut body, r)?.into_text();
            inner
                .arguments
                .parameters
                .push(Parameter::value(name, value));
        }
        for a in &body.artifacts {
            let arg = self.artifact_argument(s, a)?;
            match &arg.from {
                Some(_) => {
                    router.inputs.artifacts.push(Artifact::named(&a.name));
                    router.args.artifacts.push(arg);
                    inner.arguments.artifacts.push(Artifact {
                        from: Some(format!("{{{{inputs.artifacts.{}}}}}", a.name)),
                        ..Artifact::named(&a.name)
                    });
                }
                None => inner.arguments.artifacts.push(arg),
            }
        }
        // Conditions over `{{item}}` are judged per instance, inside.
        let (per_item, whole): (Vec<&Condition>, Vec<&Condition>) =
            s.ir.when.iter().partition(|c| reads_item(c));
        inner.when = when_expression(&per_item, &mut |r| router.route(self, s, &mut body, r))?;
        self.fan_out(s, &mut inner, &mut |r| router.route(self, s, &mut body, r))?;

        let task = &s.task;
        let mut outputs = Outputs::default();
        if s.read.result {
            outputs.parameters.push(Parameter {
                value_from: Some(ValueFrom {
                    parameter: Some(format!("{{{{tasks.{task}.outputs.result}}}}")),
                    ..ValueFrom::default()
                }),
                global_name: s.globals.result.clone(),
                ..Parameter::named(&s.result_param)
            });
        }
        for p in &s.read.parameters {
            outputs.parameters.push(Parameter {
                value_from: Some(ValueFrom {
                    parameter: Some(format!("{{{{tasks.{task}.outputs.parameters.{p}}}}}")),
                    ..ValueFrom::default()
                }),
                global_name: s.globals.parameters.get(p).cloned(),
                ..Parameter::named(*p)
            });
        }
        for a in &s.read.artifacts {
            outputs.artifacts.push(Artifact {
                from: Some(format!("{{{{tasks.{task}.outputs.artifacts.{a}}}}}")),
                global_name: s.globals.artifacts.get(a).cloned(),
                ..Artifact::named(*a)
            });
        }
        templates.push(Template {
            name: outer.clone(),
            inputs: router.inputs,
            outputs,
            parallelism: s.ir.map.as_ref().and_then(|m| m.parallelism),
            dag: Some(DagTemplate { tasks: vec![inner] }),
            ..Template::default()
        });
        Ok(DagTask {
            name: s.task.clone(),
            template: outer,
            depends: self.depends(s),
            when: self.outer_when(s, &whole)?,
            arguments: router.args,
            ..DagTask::default()
        })
    }

    /// A `while` step: a `steps` template that runs the step, then calls
    /// itself while the condition holds and fewer than `maxIterations`
    /// iterations ran; its outputs are the last iteration's.
    fn loop_task(
        &self,
        s: &StepInfo<'a>,
        mut body: Body<'a>,
        templates: &mut Templates,
    ) -> Result<DagTask, EngineError> {
        let outer = s.outer.clone().unwrap_or_default();
        let Some(repeat) = &s.ir.repeat else {
            return Err(EngineError::Other("a loop without `while`".into()));
        };
        let iteration = body.fresh("iteration");
        let mut step_names = Names::objects();
        step_names.reserve(&s.task);
        let run = s.task.clone();
        let next = step_names.take(&format!("{run}-next"), MAX_NAME);

        let mut inputs = Inputs::default();
        let mut args = Arguments::default();
        let mut pass = Arguments::default();
        for (name, r) in &body.params {
            inputs.parameters.push(Parameter::named(name));
            args.parameters
                .push(Parameter::value(name, self.operand(s, *r)?.into_text()));
            pass.parameters.push(Parameter::value(
                name,
                format!("{{{{inputs.parameters.{name}}}}}"),
            ));
        }
        for a in &body.artifacts {
            inputs.artifacts.push(Artifact::named(&a.name));
            args.artifacts.push(self.artifact_argument(s, a)?);
            pass.artifacts.push(Artifact {
                from: Some(format!("{{{{inputs.artifacts.{}}}}}", a.name)),
                ..Artifact::named(&a.name)
            });
        }
        inputs.parameters.push(Parameter::named(&iteration));
        args.parameters.push(Parameter::value(&iteration, "1"));
        let mut again = pass.clone();
        again.parameters.push(Parameter::value(
            &iteration,
            format!("{{{{=asInt(inputs.parameters['{iteration}']) + 1}}}}"),
        ));

        let own = s.ir.name.as_str();
        let conditions: Vec<&Condition> = repeat.condition.iter().collect();
        let holds = when_expression(&conditions, &mut |r| match r {
            Ref::StepResult(t) if t == own => {
                Ok(Operand::Tag(format!("{{{{steps.{run}.outputs.result}}}}")))
            }
            Ref::StepParameter(t, p) if t == own => Ok(Operand::Tag(format!(
                "{{{{steps.{run}.outputs.parameters.{p}}}}}"
            ))),
            other => self.operand(s, other),
        })?;
        let bound = format!(
            "{{{{inputs.parameters.{iteration}}}}} < {}",
            repeat.max_iterations
        );
        let when = match holds {
            Some(h) => format!("{h} && {bound}"),
            None => bound,
        };

        // The last iteration's outputs: the nested call's when it ran.
        let pick = |field: &str| {
            format!(
                "steps['{next}'].status == 'Skipped' ? steps['{run}'].outputs.{field} : steps['{next}'].outputs.{field}"
            )
        };
        let mut outputs = Outputs::default();
        if s.read.result {
            let rp = &s.result_param;
            outputs.parameters.push(Parameter {
                value_from: Some(ValueFrom {
                    expression: Some(format!(
                        "steps['{next}'].status == 'Skipped' ? steps['{run}'].outputs.result : steps['{next}'].outputs.parameters['{rp}']"
                    )),
                    ..ValueFrom::default()
                }),
                global_name: s.globals.result.clone(),
                ..Parameter::named(rp)
            });
        }
        for p in &s.read.parameters {
            outputs.parameters.push(Parameter {
                value_from: Some(ValueFrom {
                    expression: Some(pick(&format!("parameters['{p}']"))),
                    ..ValueFrom::default()
                }),
                global_name: s.globals.parameters.get(p).cloned(),
                ..Parameter::named(*p)
            });
        }
        for a in &s.read.artifacts {
            outputs.artifacts.push(Artifact {
                from_expression: Some(pick(&format!("artifacts['{a}']"))),
                global_name: s.globals.artifacts.get(a).cloned(),
                ..Artifact::named(*a)
            });
        }
        templates.push(Template {
            name: outer.clone(),
            inputs,
            outputs,
            steps: Some(vec![
                vec![WorkflowStep {
                    name: run,
                    template: s.body.clone(),
                    when: None,
                    arguments: pass,
                }],
                vec![WorkflowStep {
                    name: next,
                    template: outer.clone(),
                    when: Some(when),
                    arguments: again,
                }],
            ]),
            ..Template::default()
        });
        let conditions: Vec<&Condition> = s.ir.when.iter().collect();
        Ok(DagTask {
            name: s.task.clone(),
            template: outer,
            depends: self.depends(s),
            when: self.outer_when(s, &conditions)?,
            arguments: args,
            ..DagTask::default()
        })
    }
}

/// Values a wrapper's inner task needs from outside: run-time tags become
/// input parameters of the wrapper, passed in by the task that calls it.
#[derive(Default)]
struct Router {
    inputs: Inputs,
    args: Arguments,
}

impl Router {
    fn route<'a>(
        &mut self,
        a: &Analysis<'a>,
        s: &StepInfo<'a>,
        body: &mut Body<'a>,
        r: Ref<'a>,
    ) -> Result<Operand, EngineError> {
        match a.operand(s, r)? {
            Operand::Tag(tag) if !matches!(r, Ref::Item(_)) => {
                let name = body.name_for(r);
                if !self.inputs.parameters.iter().any(|p| p.name == name) {
                    self.inputs.parameters.push(Parameter::named(&name));
                    self.args.parameters.push(Parameter::value(&name, tag));
                }
                Ok(Operand::Tag(format!("{{{{inputs.parameters.{name}}}}}")))
            }
            other => Ok(other),
        }
    }
}

/// An IR `depends` expression as an Argo enhanced `depends` expression of
/// the same meaning. Argo's bare name also accepts a skipped task, so a
/// bare IR name is `.Succeeded`; IR's `skipped` is Argo's `Skipped`
/// (`when`) or `Omitted` (`depends`), its `failed` Argo's `Failed` or
/// `Errored`. `nested` asks for parentheses around `||`.
fn argo_depends<'t>(e: &Expr<u32>, task: &dyn Fn(u32) -> &'t str, nested: bool) -> String {
    let results: &[&str] = match e {
        Expr::Ref(_, None | Some(Outcome::Succeeded)) => &["Succeeded"],
        Expr::Ref(_, Some(Outcome::Failed)) => &["Failed", "Errored"],
        Expr::Ref(_, Some(Outcome::Skipped)) => &["Skipped", "Omitted"],
        Expr::Ref(_, Some(Outcome::Any)) => {
            &["Succeeded", "Failed", "Errored", "Skipped", "Omitted"]
        }
        Expr::Not(inner) => return format!("!{}", argo_depends(inner, task, true)),
        Expr::And(es) => {
            let parts: Vec<String> = es.iter().map(|e| argo_depends(e, task, true)).collect();
            let joined = parts.join(" && ");
            return if nested {
                format!("({joined})")
            } else {
                joined
            };
        }
        Expr::Or(es) => {
            let parts: Vec<String> = es.iter().map(|e| argo_depends(e, task, true)).collect();
            let joined = parts.join(" || ");
            return if nested {
                format!("({joined})")
            } else {
                joined
            };
        }
    };
    let Expr::Ref(u, _) = e else {
        unreachable!("operators returned above")
    };
    let name = task(*u);
    let alternatives: Vec<String> = results.iter().map(|r| format!("{name}.{r}")).collect();
    match alternatives.as_slice() {
        [one] => one.clone(),
        many if nested => format!("({})", many.join(" || ")),
        many => many.join(" || "),
    }
}
