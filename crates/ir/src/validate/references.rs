//! Checks of `{{…}}` references: what each may name where it stands, and
//! the dependencies data references imply.

use super::*;

impl<'a> Validator<'a> {
    /// Checks every reference in a string that may hold data references.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn references(
        &mut self,
        s: &'a str,
        step: &'a Step,
        exit: bool,
        index: u32,
        site: Site,
        path: &dyn Fn() -> Pointer,
        links: &mut StepLinks<'a>,
    ) {
        for r in references(s) {
            match r {
                Ok(r) => self.reference(r, step, exit, index, site, &path(), links),
                Err(e @ (RefError::Unterminated | RefError::Unknown(_))) => {
                    self.report
                        .push(&path(), Code::InvalidReference, e.to_string())
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn reference(
        &mut self,
        r: Ref<'a>,
        step: &'a Step,
        exit: bool,
        index: u32,
        site: Site,
        path: &Pointer,
        links: &mut StepLinks<'a>,
    ) {
        let misplaced = |v: &mut Self, why: &str| {
            v.report
                .push(path, Code::InvalidReference, format!("{r} {why}"))
        };
        match r {
            Ref::WorkflowParameter(p) => {
                if !self.parameters.contains(p) {
                    self.report.push(
                        path,
                        Code::UnknownParameter,
                        format!("workflow parameter {p:?} is not declared"),
                    );
                }
            }
            Ref::WorkflowName => {}
            Ref::WorkflowStatus if exit => {}
            Ref::WorkflowStatus => misplaced(self, "is only available in exit-handler steps"),
            Ref::Item(_) if step.map.is_some() => {}
            Ref::Item(_) => misplaced(self, "is only available in a step with `map`"),
            Ref::TrialParameter(p) => match &step.tune {
                Some(t) if t.space.contains_key(p) => {}
                Some(_) => self.report.push(
                    path,
                    Code::UnknownParameter,
                    format!("the search space has no hyperparameter {p:?}"),
                ),
                None => misplaced(self, "is only available in a step with `tune`"),
            },
            Ref::TrialBudget => {
                if step.tune.as_ref().map(|t| t.strategy) != Some(Strategy::Halving) {
                    misplaced(self, "is only available under the halving strategy");
                }
            }
            Ref::InputArtifactPath(a) => {
                let declared = step
                    .inputs
                    .as_ref()
                    .is_some_and(|i| i.artifacts.iter().any(|x| x.name == a));
                if !declared {
                    self.report.push(
                        path,
                        Code::UnknownOutput,
                        format!("{r}: the step declares no input artifact {a:?}"),
                    );
                }
            }
            Ref::OutputParameterPath(p) if step.output_parameter(p).is_none() => {
                self.report.push(
                    path,
                    Code::UnknownOutput,
                    format!("{r}: the step declares no output parameter {p:?}"),
                );
            }
            Ref::OutputArtifactPath(a) if step.output_artifact(a).is_none() => {
                self.report.push(
                    path,
                    Code::UnknownOutput,
                    format!("{r}: the step declares no output artifact {a:?}"),
                );
            }
            Ref::OutputParameterPath(_) | Ref::OutputArtifactPath(_) => {}
            Ref::StepArtifact(..) if site != Site::Data => misplaced(
                self,
                "cannot be compared; artifacts are passed through `inputs.artifacts`",
            ),
            Ref::StepResult(name) | Ref::StepParameter(name, _) | Ref::StepArtifact(name, _) => {
                self.step_reference(r, name, exit, index, site, path, links)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn step_reference(
        &mut self,
        r: Ref<'a>,
        name: &'a str,
        exit: bool,
        index: u32,
        site: Site,
        path: &Pointer,
        links: &mut StepLinks<'a>,
    ) {
        let target = match self.names.get(name).copied() {
            None => {
                self.report.push(
                    path,
                    Code::UnknownStep,
                    format!("{r} reads a step that does not exist"),
                );
                return;
            }
            Some(Target::Group(_)) => {
                self.report.push(
                    path,
                    Code::InvalidReference,
                    format!("{r}: {name:?} is a group, not a step"),
                );
                return;
            }
            Some(t) => t,
        };
        let is_self = match target {
            Target::Step(i) => !exit && i == index,
            Target::Exit(i) => exit && i == index,
            Target::Group(_) => false,
        };
        let source = match target {
            Target::Step(i) => &self.wf.steps[i as usize],
            Target::Exit(i) => &self.wf.on_exit[i as usize],
            Target::Group(_) => unreachable!("groups are rejected above"),
        };
        match r {
            Ref::StepParameter(_, p) if source.output_parameter(p).is_none() => {
                self.report.push(
                    path,
                    Code::UnknownOutput,
                    format!("step {name:?} declares no output parameter {p:?}"),
                );
            }
            Ref::StepArtifact(_, a) if source.output_artifact(a).is_none() => {
                self.report.push(
                    path,
                    Code::UnknownOutput,
                    format!("step {name:?} declares no output artifact {a:?}"),
                );
            }
            _ => {}
        }
        match site {
            Site::While if is_self => return,
            Site::While => {
                self.report.push(
                    path,
                    Code::InvalidReference,
                    format!("{r}: a `while` condition reads only the step's own outputs"),
                );
                return;
            }
            _ if is_self => {
                self.report.push(
                    path,
                    Code::InvalidReference,
                    format!("{r}: a step cannot read its own outputs (except in `while`)"),
                );
                return;
            }
            _ => {}
        }
        match (target, exit) {
            (Target::Exit(_), false) => self.report.push(
                path,
                Code::InvalidReference,
                format!("{r}: main steps cannot read exit-handler steps"),
            ),
            // Exit handlers run after the whole DAG: reading main steps adds no edge.
            (Target::Step(_), true) => {}
            (Target::Step(i), false) | (Target::Exit(i), true) => match site {
                Site::When => links.when_reads.push((i, path.clone(), name)),
                _ => links.upstream.push(i),
            },
            (Target::Group(_), _) => {}
        }
    }
}
