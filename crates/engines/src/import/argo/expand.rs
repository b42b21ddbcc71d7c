//! Flattening `dag` and `steps` templates into IR steps: calls of
//! templates, tasks and step groups, their arguments, conditions and
//! outputs. Loops are in `loops`, what a task requires of earlier ones in
//! `depends`.

use super::depends::{self, Argo};
use super::order::topological;
use super::text;
use super::vars::{Node, Vars};
use super::{Importer, Ptr, entries, items, scalar, str_at};
use couler_ir::depends::Expr;
use couler_ir::names::is_identifier;
use couler_ir::refs::{Ref, sole_reference};
use couler_ir::scalar::ParamValue;
use couler_ir::{Condition, MapOver, Parameter};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Template kinds with no IR form.
const OTHER_KINDS: &[&str] = &[
    "resource",
    "suspend",
    "http",
    "plugin",
    "containerSet",
    "data",
];
/// Keys of a task or step that [`Importer::task`] reads.
const TASK_KEYS: &[&str] = &[
    "name",
    "template",
    "templateRef",
    "inline",
    "arguments",
    "dependencies",
    "depends",
    "when",
    "withItems",
    "withParam",
    "withSequence",
];

/// One call of a template: by a task or step, or as the entrypoint.
#[derive(Debug, Clone, Default)]
pub(super) struct Call {
    /// The IR step name (leaf) or the prefix of the names inside
    /// (composite); empty for the entrypoint and the exit handler.
    pub name: String,
    /// What the call requires of earlier steps: IR `depends` entries.
    pub upstream: Vec<Expr<String>>,
    pub when: Vec<Condition>,
    pub map: Option<MapOver>,
    /// Argument parameters as IR text.
    pub parameters: BTreeMap<String, String>,
    /// Argument artifacts as `{{steps.S.outputs.artifacts.A}}`.
    pub artifacts: BTreeMap<String, String>,
    pub exit: bool,
    pub entry: bool,
    /// Where the call stands (the task, or the template for the entrypoint).
    pub at: Ptr,
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}-{name}")
    }
}

impl<'d> Importer<'d> {
    /// Imports the entrypoint (or, with `exit`, the exit handler): its
    /// inputs are the workflow's parameters.
    pub(super) fn run(&mut self, template: &str, exit: bool) {
        let (tpl, at) = self.templates[template].clone();
        let mut parameters = BTreeMap::new();
        let inputs_at = at.key("inputs").key("parameters");
        for (_, p, p_at) in items(
            tpl.get("inputs").and_then(|i| i.get("parameters")),
            &inputs_at,
        ) {
            let Some(name) = str_at(p, "name") else {
                continue;
            };
            if p.get("value").is_some() {
                // A fixed value wins over the workflow's arguments.
                continue;
            }
            if is_identifier(name) && !self.parameters.iter().any(|x| x.name == name) {
                let default = p.get("default").and_then(scalar);
                self.parameters.push(Parameter {
                    name: name.to_owned(),
                    default: default.map(ParamValue),
                    allowed: Vec::new(),
                    description: None,
                });
            }
            if self.workflow_parameter(name, &p_at) {
                parameters.insert(
                    name.to_owned(),
                    format!("{{{{workflow.parameters.{name}}}}}"),
                );
            }
        }
        let call = Call {
            parameters,
            exit,
            entry: true,
            at: at.clone(),
            ..Call::default()
        };
        self.call(template, tpl, &at, call);
    }

    /// Imports one call of a template.
    fn call(&mut self, name: &str, tpl: &'d Value, tpl_at: &Ptr, call: Call) -> Node {
        let missing = Node::Missing {
            upstream: call.upstream.clone(),
        };
        if tpl.get("daemon").and_then(Value::as_bool) == Some(true) {
            self.report.push(
                &tpl_at.key("daemon"),
                "daemon",
                format!("template {name:?} runs in the background while later steps run, which has no IR form; the tasks calling it are left out"),
            );
            return missing;
        }
        if tpl.get("container").is_some() || tpl.get("script").is_some() {
            let bound = self.bind_inputs(tpl, tpl_at, &call);
            let step = self.names.claim(if call.name.is_empty() {
                name
            } else {
                &call.name
            });
            return self.leaf(tpl, tpl_at, step, &call, &bound, None);
        }
        if tpl.get("dag").is_some() || tpl.get("steps").is_some() {
            if let Some(node) = self.while_loop(name, tpl, tpl_at, &call) {
                return node;
            }
            if self.stack.iter().any(|t| t == name) {
                self.report.push(
                    &call.at,
                    "recursion",
                    format!("template {name:?} calls itself; only a loop over one step has an IR form (`while`), so this call is left out"),
                );
                return missing;
            }
            let bound = self.bind_inputs(tpl, tpl_at, &call);
            self.stack.push(name.to_owned());
            let before = (self.steps.len(), self.on_exit.len());
            let node = self.composite(tpl, tpl_at, &call, &bound);
            self.stack.pop();
            self.template_parallelism(tpl, tpl_at, &call, before);
            return node;
        }
        if let Some(node) = self.training_job(name, tpl, tpl_at, &call) {
            return node;
        }
        match OTHER_KINDS.iter().find(|k| tpl.get(**k).is_some()) {
            Some(kind) => self.report.push(
                &tpl_at.key(kind),
                format!("{kind} template"),
                format!("{kind} templates have no IR equivalent; the tasks calling {name:?} are left out"),
            ),
            None => self.report.push(tpl_at, "template", format!("template {name:?} runs nothing Couler knows; left out")),
        }
        missing
    }

    /// The template's input parameters as IR text: a fixed `value`, the
    /// caller's argument, or the `default`.
    pub(super) fn bind_inputs(
        &mut self,
        tpl: &Value,
        tpl_at: &Ptr,
        call: &Call,
    ) -> BTreeMap<String, String> {
        let mut bound = BTreeMap::new();
        let at = tpl_at.key("inputs").key("parameters");
        let outer = Vars {
            exit: call.exit,
            ..Vars::default()
        };
        for (_, p, p_at) in items(tpl.get("inputs").and_then(|i| i.get("parameters")), &at) {
            let Some(name) = str_at(p, "name") else {
                continue;
            };
            let fixed = p.get("value").and_then(scalar);
            let value = match (fixed, call.parameters.get(name)) {
                (Some(v), _) => self.text(&v, &outer, &p_at.key("value")).0,
                (None, Some(arg)) => arg.clone(),
                (None, None) => match p.get("default").and_then(scalar) {
                    Some(d) => self.text(&d, &outer, &p_at.key("default")).0,
                    None => {
                        let feature = if p.get("valueFrom").is_some() {
                            "inputs.parameters.valueFrom"
                        } else {
                            "inputs.parameters"
                        };
                        self.report.push(
                            &p_at,
                            feature,
                            format!("input parameter {name:?} gets no value Couler can supply; `%inputs.parameters.{name}%` is used"),
                        );
                        format!("%inputs.parameters.{name}%")
                    }
                },
            };
            bound.insert(name.to_owned(), value);
        }
        let declared = |kind: &str, name: &str| {
            items(tpl.get("inputs").and_then(|i| i.get(kind)), &at)
                .iter()
                .any(|(_, x, _)| str_at(x, "name") == Some(name))
        };
        let unused = (call.parameters.keys().map(|n| ("parameters", n)))
            .chain(call.artifacts.keys().map(|n| ("artifacts", n)))
            .filter(|(kind, n)| !declared(kind, n))
            .map(|(kind, n)| (kind, n.clone()))
            .collect::<Vec<_>>();
        for (kind, n) in unused {
            self.report.push(
                &call.at.key("arguments").key(kind),
                "unused argument",
                format!("{n:?} is not an input of the called template; it is not passed"),
            );
        }
        bound
    }

    /// A dag or steps template, flattened; its outputs resolved.
    fn composite(
        &mut self,
        tpl: &'d Value,
        tpl_at: &Ptr,
        call: &Call,
        inputs: &BTreeMap<String, String>,
    ) -> Node {
        for (key, _, at) in entries(Some(tpl), tpl_at) {
            if !matches!(
                key,
                "name" | "inputs" | "outputs" | "dag" | "steps" | "parallelism"
            ) {
                self.report.push(
                    &at,
                    key,
                    format!("{key:?} on a dag or steps template has no IR equivalent"),
                );
            }
        }
        let mut call = call.clone();
        for (_, a, a_at) in items(
            tpl.get("inputs").and_then(|i| i.get("artifacts")),
            &tpl_at.key("inputs").key("artifacts"),
        ) {
            let name = str_at(a, "name").unwrap_or_default();
            if !call.artifacts.contains_key(name) {
                self.report.push(
                    &a_at,
                    "inputs.artifacts",
                    format!("input artifact {name:?} is not passed from an imported step"),
                );
            }
        }
        // `{{inputs.artifacts.A}}` passes the caller's artifact on.
        let passed: BTreeMap<String, String> = std::mem::take(&mut call.artifacts)
            .into_iter()
            .map(|(k, v)| (format!("inputs.artifacts.{k}"), v))
            .collect();
        let mut siblings = HashMap::new();
        let (after, handles) = if tpl.get("dag").is_some() {
            self.dag(tpl, tpl_at, &call, inputs, &passed, &mut siblings)
        } else {
            self.groups(tpl, tpl_at, &call, inputs, &passed, &mut siblings)
        };
        let vars = Vars {
            inputs: Some(inputs),
            paths: passed,
            siblings: Some(&siblings),
            exit: call.exit,
            ..Vars::default()
        };
        let mut parameters = BTreeMap::new();
        let mut artifacts = BTreeMap::new();
        let at = tpl_at.key("outputs");
        for (_, p, p_at) in items(
            tpl.get("outputs").and_then(|o| o.get("parameters")),
            &at.key("parameters"),
        ) {
            let name = str_at(p, "name").unwrap_or_default();
            let extra = entries(Some(p), &p_at)
                .into_iter()
                .chain(entries(p.get("valueFrom"), &p_at.key("valueFrom")))
                .filter(|(k, _, _)| {
                    !matches!(*k, "name" | "valueFrom" | "description" | "parameter")
                });
            for (key, _, k_at) in extra.collect::<Vec<_>>() {
                self.report.push(
                    &k_at,
                    format!("outputs.parameters.{key}"),
                    format!("output {name:?}: {key:?} has no IR form"),
                );
            }
            match p.get("valueFrom").and_then(|v| str_at(v, "parameter")) {
                Some(from) => {
                    let (text, ok) = self.text(from, &vars, &p_at.key("valueFrom").key("parameter"));
                    if ok {
                        parameters.insert(name.to_owned(), text);
                    }
                }
                None => self.report.push(&p_at, "outputs.parameters", format!("output {name:?} of a dag or steps template: only `valueFrom.parameter` has an IR form")),
            }
        }
        for (_, a, a_at) in items(
            tpl.get("outputs").and_then(|o| o.get("artifacts")),
            &at.key("artifacts"),
        ) {
            let name = str_at(a, "name").unwrap_or_default();
            if let Some(from) = self.artifact_from(a, &a_at, &vars) {
                artifacts.insert(name.to_owned(), from);
            }
        }
        Node::Composite {
            after,
            handles,
            parameters,
            artifacts,
        }
    }

    /// `from` of an artifact, as an IR step-artifact reference.
    fn artifact_from(&mut self, a: &Value, at: &Ptr, vars: &Vars) -> Option<String> {
        let name = str_at(a, "name").unwrap_or_default();
        let Some(from) = str_at(a, "from") else {
            let source = entries(Some(a), at)
                .into_iter()
                .map(|(k, _, _)| k)
                .find(|k| !matches!(*k, "name" | "path"));
            self.report.push(
                at,
                format!("artifact {}", source.unwrap_or("source")),
                format!("artifact {name:?}: only `from` another step has an IR form"),
            );
            return None;
        };
        for (key, _, k_at) in entries(Some(a), at) {
            if !matches!(key, "name" | "from") {
                self.report.push(
                    &k_at,
                    format!("artifact {key}"),
                    format!("artifact {name:?}: {key:?} has no IR form"),
                );
            }
        }
        let (text, ok) = self.text(from, vars, &at.key("from"));
        if !ok {
            return None;
        }
        match sole_reference(&text) {
            Some(Ok(Ref::StepArtifact(..))) => Some(text),
            _ => {
                self.report.push(
                    &at.key("from"),
                    "artifact from",
                    format!("artifact {name:?}: {from:?} is not another step's output artifact"),
                );
                None
            }
        }
    }

    /// The tasks of a dag template; what a later step requires of the
    /// dag (its last tasks), and whether a task inside depends on
    /// another's result.
    fn dag(
        &mut self,
        tpl: &'d Value,
        tpl_at: &Ptr,
        call: &Call,
        inputs: &BTreeMap<String, String>,
        passed: &BTreeMap<String, String>,
        siblings: &mut HashMap<String, Node>,
    ) -> (Vec<Expr<String>>, bool) {
        let dag = &tpl["dag"];
        let dag_at = tpl_at.key("dag");
        for (key, value, at) in entries(Some(dag), &dag_at) {
            match (key, value) {
                ("tasks", _) | ("failFast", Value::Bool(true)) => {}
                _ => self
                    .report
                    .push(&at, format!("dag.{key}"), "has no IR equivalent"),
            }
        }
        let tasks = items(dag.get("tasks"), &dag_at.key("tasks"));
        let index: HashMap<&str, usize> = tasks
            .iter()
            .enumerate()
            .filter_map(|(i, (_, t, _))| Some((str_at(t, "name")?, i)))
            .collect();
        // Each task's entries in Argo terms; `None` when they have no IR
        // form (reported, the task is left out).
        let mut deps: Vec<Option<Vec<Argo>>> = Vec::with_capacity(tasks.len());
        let mut reads: Vec<Vec<usize>> = Vec::with_capacity(tasks.len());
        let mut handles = false;
        for (i, (_, task, at)) in tasks.iter().enumerate() {
            let d = self.task_dependencies(task, at, &index);
            handles |= d.iter().flatten().any(|e| !e.is_bare());
            let mut r: Vec<usize> = Vec::new();
            for s in strings_of(task, &["when", "arguments", "withParam"]) {
                r.extend(
                    text::sibling_reads(s)
                        .into_iter()
                        .filter_map(|n| index.get(n).copied()),
                );
            }
            let named = d.iter().flatten().flat_map(Argo::names);
            r.extend(named.filter_map(|n| index.get(n).copied()));
            r.retain(|&j| j != i);
            r.sort_unstable();
            r.dedup();
            deps.push(d);
            reads.push(r);
        }
        let order = topological(&reads);
        if order.len() < tasks.len() {
            self.report.push(
                &dag_at.key("tasks"),
                "cycle",
                "the tasks depend on each other in a cycle; the tasks in it are left out",
            );
        }
        for &i in &order {
            let (_, task, at) = &tasks[i];
            let name = str_at(task, "name").unwrap_or_default().to_owned();
            let upstream = match &deps[i] {
                Some(d) if d.is_empty() => Ok(call.upstream.clone()),
                Some(d) => self.entries(d, siblings, &at.key("depends")),
                None => Err(String::new()),
            };
            let node = match upstream {
                Ok(upstream) => self.task(task, at, upstream, call, inputs, passed, siblings),
                Err(why) => {
                    if !why.is_empty() {
                        self.report.push(
                            &at.key("depends"),
                            "depends",
                            format!("{why}, which has no IR form; task {name:?} is left out"),
                        );
                    }
                    // Later tasks require what the tasks it names give.
                    let mut upstream = Vec::new();
                    for j in &reads[i] {
                        let named = str_at(tasks[*j].1, "name").unwrap_or_default();
                        for e in siblings
                            .get(named)
                            .map(|n| self.after(n, at))
                            .unwrap_or_default()
                        {
                            if !upstream.contains(&e) {
                                upstream.push(e);
                            }
                        }
                    }
                    Node::Missing { upstream }
                }
            };
            handles |= matches!(node, Node::Composite { handles: true, .. });
            siblings.insert(name, node);
        }
        // The last tasks: those no other task waits for.
        let waited: HashSet<usize> = reads.iter().flatten().copied().collect();
        let mut after = Vec::new();
        for &i in order.iter().filter(|i| !waited.contains(i)) {
            let (_, task, at) = &tasks[i];
            let name = str_at(task, "name").unwrap_or_default();
            for e in siblings
                .get(name)
                .map(|n| self.after(n, at))
                .unwrap_or_default()
            {
                if !after.contains(&e) {
                    after.push(e);
                }
            }
        }
        (after, handles)
    }

    /// A task's `dependencies` (each a bare entry) and `depends`, parsed;
    /// `None` (reported) when they do not parse or name no sibling.
    fn task_dependencies(
        &mut self,
        task: &Value,
        at: &Ptr,
        index: &HashMap<&str, usize>,
    ) -> Option<Vec<Argo>> {
        let mut d: Vec<Argo> = items(task.get("dependencies"), &at.key("dependencies"))
            .into_iter()
            .filter_map(|(_, n, _)| n.as_str())
            .map(|n| Argo::Ref(n.to_owned(), None))
            .collect();
        if let Some(expression) = str_at(task, "depends") {
            match depends::parse(expression) {
                Ok(e) => d.push(e),
                Err(why) => {
                    self.report.push(
                        &at.key("depends"),
                        "depends",
                        format!("{expression:?} does not parse ({why}); the task is left out"),
                    );
                    return None;
                }
            }
        }
        let unknown: Vec<&str> = (d.iter().flat_map(Argo::names))
            .filter(|n| !index.contains_key(n))
            .collect();
        if let Some(n) = unknown.first() {
            self.report.push(
                &at.key("depends"),
                "depends",
                format!("no task named {n:?}; the task is left out"),
            );
            return None;
        }
        Some(d)
    }

    /// The groups of a steps template: each step of a group runs after
    /// every step of the group before ended, succeeded or skipped by its
    /// `when` (a failure ends the template). What a later step requires
    /// of the template is that of its last group.
    fn groups(
        &mut self,
        tpl: &'d Value,
        tpl_at: &Ptr,
        call: &Call,
        inputs: &BTreeMap<String, String>,
        passed: &BTreeMap<String, String>,
        siblings: &mut HashMap<String, Node>,
    ) -> (Vec<Expr<String>>, bool) {
        let mut previous = call.upstream.clone();
        let mut handles = false;
        for (_, group, group_at) in items(tpl.get("steps"), &tpl_at.key("steps")) {
            let mut after = Vec::new();
            let mut done = Vec::new();
            for (_, step, at) in items(Some(group), &group_at) {
                let node = self.task(step, &at, previous.clone(), call, inputs, passed, siblings);
                for e in self.after(&node, &at) {
                    if !after.contains(&e) {
                        after.push(e);
                    }
                }
                handles |= matches!(node, Node::Composite { handles: true, .. });
                done.push((str_at(step, "name").unwrap_or_default().to_owned(), node));
            }
            siblings.extend(done);
            if group.as_array().is_some_and(|g| !g.is_empty()) {
                previous = after;
            }
        }
        (previous, handles)
    }

    /// One task of a dag or step of a steps template.
    #[allow(clippy::too_many_arguments)]
    fn task(
        &mut self,
        task: &'d Value,
        at: &Ptr,
        upstream: Vec<Expr<String>>,
        parent: &Call,
        inputs: &BTreeMap<String, String>,
        passed: &BTreeMap<String, String>,
        siblings: &HashMap<String, Node>,
    ) -> Node {
        let name = str_at(task, "name").unwrap_or("task");
        let missing = Node::Missing {
            upstream: upstream.clone(),
        };
        for (key, _, k_at) in entries(Some(task), at) {
            if !TASK_KEYS.contains(&key) {
                self.report.push(
                    &k_at,
                    key,
                    format!("the task setting {key:?} has no IR equivalent"),
                );
            }
        }
        if task.get("templateRef").is_some() {
            self.report.push(
                &at.key("templateRef"),
                "templateRef",
                format!("task {name:?} runs a template of another WorkflowTemplate, which is not in this document; left out"),
            );
            return missing;
        }
        let (template, tpl, tpl_at) = match (task.get("inline"), str_at(task, "template")) {
            (Some(inline), _) => (name, inline, at.key("inline")),
            (None, Some(t)) => match self.templates.get(t) {
                Some((tpl, tpl_at)) => (t, *tpl, tpl_at.clone()),
                None => {
                    self.report.push(
                        &at.key("template"),
                        "template",
                        format!("no template named {t:?}; task {name:?} is left out"),
                    );
                    return missing;
                }
            },
            (None, None) => {
                self.report.push(
                    at,
                    "template",
                    format!("task {name:?} names no template; left out"),
                );
                return missing;
            }
        };
        let looping = ["withItems", "withParam", "withSequence"]
            .iter()
            .any(|k| task.get(*k).is_some());
        let vars = Vars {
            inputs: Some(inputs),
            paths: passed.clone(),
            siblings: Some(siblings),
            item: looping || parent.map.is_some(),
            exit: parent.exit,
        };
        let Ok(own_map) = self.fan_out(task, at, &vars) else {
            return missing;
        };
        let map = match (&parent.map, own_map) {
            (Some(_), Some(_)) => {
                self.report.push(
                    at,
                    "nested loop",
                    format!("task {name:?} loops inside a loop; left out"),
                );
                return missing;
            }
            (outer, own) => own.or_else(|| outer.clone()),
        };
        let mut when = parent.when.clone();
        if let Some(expression) = task.get("when").and_then(scalar) {
            let w_at = at.key("when");
            let (text, ok) = self.text(&expression, &vars, &w_at);
            // Without its condition the step could run where Argo would
            // not: it is left out instead.
            match ok.then(|| text::when(&text)) {
                Some(Ok(conditions)) => when.extend(conditions),
                Some(Err(why)) => {
                    self.report
                        .push(&w_at, "when", format!("{why}; task {name:?} is left out"));
                    return missing;
                }
                None => {
                    self.report.push(
                        &w_at,
                        "when",
                        format!(
                            "the condition reads values Couler cannot; task {name:?} is left out"
                        ),
                    );
                    return missing;
                }
            }
        }
        let args = task.get("arguments");
        let args_at = at.key("arguments");
        let mut parameters = BTreeMap::new();
        let mut artifacts = BTreeMap::new();
        for (key, value, k_at) in entries(args, &args_at) {
            match key {
                "parameters" => {
                    for (_, p, p_at) in items(Some(value), &k_at) {
                        let Some(p_name) = str_at(p, "name") else {
                            continue;
                        };
                        match p.get("value").and_then(scalar) {
                            Some(v) => {
                                let text = self.text(&v, &vars, &p_at.key("value")).0;
                                parameters.insert(p_name.to_owned(), text);
                            }
                            None => self.report.push(
                                &p_at,
                                "arguments.parameters",
                                format!("argument {p_name:?}: only a `value` has an IR form"),
                            ),
                        }
                    }
                }
                "artifacts" => {
                    for (_, a, a_at) in items(Some(value), &k_at) {
                        let a_name = str_at(a, "name").unwrap_or_default();
                        if let Some(from) = self.artifact_from(a, &a_at, &vars) {
                            artifacts.insert(a_name.to_owned(), from);
                        }
                    }
                }
                other => {
                    self.report
                        .push(&k_at, format!("arguments.{other}"), "has no IR equivalent")
                }
            }
        }
        let call = Call {
            name: join(&parent.name, name),
            upstream,
            when,
            map,
            parameters,
            artifacts,
            exit: parent.exit,
            entry: false,
            at: at.clone(),
        };
        self.call(template, tpl, &tpl_at, call)
    }
}

/// Every string under the given keys of `v`.
fn strings_of<'v>(v: &'v Value, keys: &[&str]) -> Vec<&'v str> {
    fn walk<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
        match v {
            Value::String(s) => out.push(s),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for k in keys {
        if let Some(x) = v.get(*k) {
            walk(x, &mut out);
        }
    }
    out
}
