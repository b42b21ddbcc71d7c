//! Checks of a step's `depends` entries: each parses, names steps (or, as
//! a bare name, groups) it may wait for, and resolves to node indexes.

use super::*;
use crate::depends::parse;

impl<'a> Validator<'a> {
    pub(super) fn depends(
        &mut self,
        step: &Step,
        exit: bool,
        index: u32,
        path: &Pointer,
        links: &mut StepLinks<'a>,
    ) {
        for (i, text) in step.depends.iter().enumerate() {
            let at = path.index(i);
            let expr = match parse(text) {
                Ok(e) => e,
                Err(e) => {
                    self.report.push(
                        &at,
                        Code::InvalidValue,
                        format!(
                            "`depends` entry {text:?} does not parse: {} at position {} (grammar: NAME, NAME.succeeded|failed|skipped|any, !, &&, ||, parentheses)",
                            e.message, e.position
                        ),
                    );
                    continue;
                }
            };
            let mut ok = true;
            for (name, outcome) in expr.refs() {
                ok &= self.dependency(name, outcome.is_some(), exit, index, &at);
            }
            if !ok {
                continue;
            }
            let resolved = expr.expand(&mut |name, outcome| match self.names.get(name.as_str()) {
                Some(Target::Step(d) | Target::Exit(d)) => Expr::Ref(*d, outcome),
                Some(Target::Group(_)) => {
                    let mut members = Vec::new();
                    self.expand(name, &mut members);
                    Expr::all(members.into_iter().map(|m| Expr::Ref(m, None)).collect())
                }
                None => unreachable!("checked above"),
            });
            links.upstream.extend(resolved.names().into_iter().copied());
            links.entries.push((i, resolved));
        }
    }

    /// Whether `name` is something this step may wait for; reports why
    /// not otherwise.
    fn dependency(
        &mut self,
        name: &str,
        outcome: bool,
        exit: bool,
        index: u32,
        at: &Pointer,
    ) -> bool {
        let problem = match (self.names.get(name).copied(), exit) {
            (Some(Target::Step(d)), false) | (Some(Target::Exit(d)), true) if d == index => {
                Some((Code::Cycle, format!("dependency cycle: {name} → {name}")))
            }
            (Some(Target::Step(_)), false) | (Some(Target::Exit(_)), true) => None,
            (Some(Target::Group(_)), false) if outcome => Some((
                Code::InvalidValue,
                format!(
                    "{name:?} is a group; a group can only be named bare (all of its steps succeeded): ask for an outcome of its steps instead"
                ),
            )),
            (Some(Target::Group(_)), false) => None,
            (Some(Target::Exit(_)), false) => Some((
                Code::InvalidValue,
                format!("{name:?} is an exit-handler step; main steps cannot depend on it"),
            )),
            (Some(_), true) => Some((
                Code::InvalidValue,
                format!(
                    "exit-handler steps run after the DAG; they can only depend on other exit-handler steps, not {name:?}"
                ),
            )),
            (None, _) => Some((
                Code::UnknownStep,
                format!("no step or group named {name:?}"),
            )),
        };
        match problem {
            Some((code, message)) => {
                self.report.push(at, code, message);
                false
            }
            None => true,
        }
    }
}
