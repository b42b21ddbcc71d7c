//! Loops: `withItems`, `withSequence` and `withParam` fan-outs, template
//! `parallelism`, and the one recursion the IR has a form for, a `while`.

use super::expand::Call;
use super::text;
use super::vars::{Node, Vars};
use super::{Importer, Ptr, entries, items, scalar, str_at};
use couler_ir::refs::{Ref, sole_reference};
use couler_ir::{Condition, MapOver, Step, WhileLoop};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// Argo runs recursion without bound; an imported loop stops here.
const MAX_ITERATIONS: u32 = 1000;
const MAX_ITEMS: usize = 10_000;

impl<'d> Importer<'d> {
    /// `withItems`, `withSequence` or `withParam` as a `map`; `Err` (reported)
    /// when the loop has no IR form.
    pub(super) fn fan_out(
        &mut self,
        task: &Value,
        at: &Ptr,
        vars: &Vars,
    ) -> Result<Option<MapOver>, ()> {
        let items_of = |list: Vec<Value>| MapOver {
            items: Some(list),
            from: None,
            parallelism: None,
        };
        if let Some(list) = task.get("withItems") {
            return match list.as_array() {
                Some(l) if !l.is_empty() && l.len() <= MAX_ITEMS => Ok(Some(items_of(l.clone()))),
                _ => {
                    self.report.push(
                        &at.key("withItems"),
                        "withItems",
                        format!("a loop needs 1 to {MAX_ITEMS} items; left out"),
                    );
                    Err(())
                }
            };
        }
        if let Some(sequence) = task.get("withSequence") {
            let s_at = at.key("withSequence");
            return match self.sequence(sequence, &s_at, vars) {
                Ok(list) => Ok(Some(items_of(list))),
                Err(why) => {
                    self.report
                        .push(&s_at, "withSequence", format!("{why}; left out"));
                    Err(())
                }
            };
        }
        let Some(param) = task.get("withParam").and_then(scalar) else {
            return Ok(None);
        };
        let p_at = at.key("withParam");
        let (text, ok) = self.text(&param, vars, &p_at);
        if !ok {
            return Err(());
        }
        match sole_reference(&text) {
            Some(Ok(Ref::WorkflowParameter(_) | Ref::StepParameter(..) | Ref::StepResult(_))) => {
                Ok(Some(MapOver {
                    items: None,
                    from: Some(text),
                    parallelism: None,
                }))
            }
            // A literal list, e.g. a substituted input parameter.
            None => match serde_json::from_str::<Vec<Value>>(&text) {
                Ok(list) if !list.is_empty() && list.len() <= MAX_ITEMS => Ok(Some(items_of(list))),
                _ => {
                    self.report.push(&p_at, "withParam", format!("{param:?} is neither a JSON list nor one reference to a parameter; left out"));
                    Err(())
                }
            },
            Some(_) => {
                self.report.push(
                    &p_at,
                    "withParam",
                    format!("{param:?} has no IR form; left out"),
                );
                Err(())
            }
        }
    }

    /// The items of a `withSequence`: `count` (from `start`) or `start`..=`end`.
    fn sequence(&mut self, s: &Value, at: &Ptr, vars: &Vars) -> Result<Vec<Value>, String> {
        if s.get("format").is_some() {
            return Err("a formatted sequence has no IR form".into());
        }
        let mut number = |key: &str| -> Result<Option<i64>, String> {
            let Some(v) = s.get(key).and_then(scalar) else {
                return Ok(None);
            };
            let (text, ok) = self.text(&v, vars, &at.key(key));
            match text.trim().parse::<i64>() {
                Ok(n) if ok => Ok(Some(n)),
                _ => Err(format!(
                    "`{key}` is {v:?}, not a number known before the run"
                )),
            }
        };
        let start = number("start")?.unwrap_or(0);
        // (first, last, step), checked for size before any item is made.
        let (first, last, step) = match (number("count")?, number("end")?) {
            (Some(count), _) if count > 0 => (start, start.saturating_add(count - 1), 1),
            (Some(_), _) => return Err(format!("a loop needs 1 to {MAX_ITEMS} items")),
            (None, Some(end)) if end >= start => (start, end, 1),
            (None, Some(end)) => (start, end, -1),
            (None, None) => return Err("a sequence needs `count` or `end`".into()),
        };
        if (i128::from(last) - i128::from(first)).unsigned_abs() >= MAX_ITEMS as u128 {
            return Err(format!("a loop needs 1 to {MAX_ITEMS} items"));
        }
        let range: Vec<i64> = if step > 0 {
            (first..=last).collect()
        } else {
            (last..=first).rev().collect()
        };
        Ok(range
            .into_iter()
            .map(|n| Value::String(n.to_string()))
            .collect())
    }

    /// A steps template whose last step calls the template again `when` a
    /// condition on its one other step holds: that step as a `while` loop.
    pub(super) fn while_loop(
        &mut self,
        name: &str,
        tpl: &'d Value,
        tpl_at: &Ptr,
        call: &Call,
    ) -> Option<Node> {
        let groups = tpl.get("steps")?.as_array()?;
        let [body @ .., last] = groups.as_slice() else {
            return None;
        };
        let [again] = last.as_array()?.as_slice() else {
            return None;
        };
        let mut body_steps = body.iter().filter_map(Value::as_array).flatten();
        let (Some(step), None) = (body_steps.next(), body_steps.next()) else {
            return None;
        };
        let plain = |s: &Value| {
            entries(Some(s), &Ptr::root())
                .iter()
                .all(|(k, _, _)| matches!(*k, "name" | "template" | "arguments"))
        };
        if str_at(again, "template") != Some(name)
            || again.get("when").is_none()
            || call.map.is_some()
            || !plain(step)
        {
            return None;
        }
        // The loop must call itself with the same inputs.
        let same = items(
            again.get("arguments").and_then(|a| a.get("parameters")),
            &Ptr::root(),
        )
        .iter()
        .all(|(_, p, _)| {
            let n = str_at(p, "name").unwrap_or_default();
            str_at(p, "value").map(str::trim) == Some(&format!("{{{{inputs.parameters.{n}}}}}"))
        });
        let (body_tpl, body_at) = self.templates.get(str_at(step, "template")?)?.clone();
        let leaf = body_tpl.get("container").is_some() || body_tpl.get("script").is_some();
        if !same
            || !leaf
            || again
                .get("arguments")
                .and_then(|a| a.get("artifacts"))
                .is_some()
        {
            return None;
        }
        let (step_index, again_index) = find_positions(groups, step, again)?;
        let step_at = tpl_at.key("steps").index(step_index.0).index(step_index.1);
        let again_at = tpl_at.key("steps").index(again_index).index(0);

        let bound = self.bind_inputs(tpl, tpl_at, call);
        let vars = Vars {
            inputs: Some(&bound),
            exit: call.exit,
            ..Vars::default()
        };
        let mut parameters = BTreeMap::new();
        for (_, p, p_at) in items(
            step.get("arguments").and_then(|a| a.get("parameters")),
            &step_at.key("arguments").key("parameters"),
        ) {
            if let (Some(n), Some(v)) = (str_at(p, "name"), p.get("value").and_then(scalar)) {
                let text = self.text(&v, &vars, &p_at.key("value")).0;
                parameters.insert(n.to_owned(), text);
            }
        }
        let ir_name = self.names.claim(if call.name.is_empty() {
            name
        } else {
            &call.name
        });
        let (outputs, artifacts) = Self::declared_outputs(body_tpl);
        let siblings = HashMap::from([(
            str_at(step, "name").unwrap_or_default().to_owned(),
            Node::Leaf {
                step: ir_name.clone(),
                parameters: outputs,
                artifacts,
            },
        )]);
        let w_at = again_at.key("when");
        let when_vars = Vars {
            inputs: Some(&bound),
            siblings: Some(&siblings),
            exit: call.exit,
            ..Vars::default()
        };
        let expression = again.get("when").and_then(scalar).unwrap_or_default();
        let (text, ok) = self.text(&expression, &when_vars, &w_at);
        let condition = match ok.then(|| text::when(&text)) {
            Some(Ok(c)) if reads_only(&c, &ir_name) => c,
            _ => {
                self.report.push(&w_at, "recursion", "the loop condition has no IR form; the looping call is left out (the step runs once)");
                Vec::new()
            }
        };
        let repeat = (!condition.is_empty()).then(|| {
            self.report.push(
                &again_at,
                "while bound",
                format!("template {name:?} calls itself while the condition holds: imported as a `while` loop of at most {MAX_ITERATIONS} iterations (Argo sets no bound)"),
            );
            WhileLoop {
                condition,
                max_iterations: MAX_ITERATIONS,
            }
        });
        let body_call = Call {
            name: ir_name.clone(),
            parameters,
            artifacts: BTreeMap::new(),
            at: step_at,
            ..call.clone()
        };
        let body_bound = self.bind_inputs(body_tpl, &body_at, &body_call);
        Some(self.leaf(body_tpl, &body_at, ir_name, &body_call, &body_bound, repeat))
    }

    /// A template's `parallelism`: the `map.parallelism` of its one loop,
    /// or for the entrypoint the workflow's.
    pub(super) fn template_parallelism(
        &mut self,
        tpl: &Value,
        tpl_at: &Ptr,
        call: &Call,
        before: (usize, usize),
    ) {
        let Some(p) = tpl.get("parallelism") else {
            return;
        };
        let at = tpl_at.key("parallelism");
        let Some(p) = p
            .as_u64()
            .and_then(|p| u32::try_from(p).ok())
            .filter(|p| *p > 0)
        else {
            self.report
                .push(&at, "parallelism", "not a positive whole number");
            return;
        };
        let created: &mut [Step] = if call.exit {
            &mut self.on_exit[before.1..]
        } else {
            &mut self.steps[before.0..]
        };
        match created {
            [one] if call.map.is_none() && one.map.is_some() => {
                if let Some(map) = &mut one.map {
                    map.parallelism = Some(p);
                }
            }
            _ if call.entry && !call.exit && self.parallelism.is_none() => {
                self.parallelism = Some(p)
            }
            _ => self.report.push(
                &at,
                "parallelism",
                "a template's parallelism over several steps has no IR form",
            ),
        }
    }
}

/// Positions of the loop's body step (group, index) and of its last group.
fn find_positions(
    groups: &[Value],
    step: &Value,
    again: &Value,
) -> Option<((usize, usize), usize)> {
    let mut body = None;
    let mut last = None;
    for (g, group) in groups.iter().enumerate() {
        for (j, s) in group.as_array()?.iter().enumerate() {
            if std::ptr::eq(s, step) {
                body = Some((g, j));
            }
            if std::ptr::eq(s, again) {
                last = Some(g);
            }
        }
    }
    Some((body?, last?))
}

/// Whether conditions read no step but `step` (a `while` reads its own outputs).
fn reads_only(conditions: &[Condition], step: &str) -> bool {
    conditions.iter().all(|c| {
        couler_ir::refs::references(&c.input)
            .all(|r| matches!(r, Ok(r) if r.step().is_none_or(|s| s == step)))
    })
}
