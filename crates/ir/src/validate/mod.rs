//! Semantic validation: names, references, dependencies, ranges. Reports
//! every problem in one pass and builds the dependency graphs on the way.

use crate::depends::{Expr, Requirement, Requirements};
use crate::graph::Graph;
use crate::names::{
    is_dns_label, is_dns_subdomain, is_env_name, is_identifier, is_label_key, is_label_value,
    is_secret_key,
};
use crate::parse::Limits;
use crate::problem::{Code, Pointer, Report};
use crate::refs::{Ref, RefError, references, sole_reference};
use crate::scalar::Duration;
use crate::types::*;
use std::collections::{HashMap, HashSet};

mod depends;
mod references;
mod step;

/// The dependency graphs of a valid workflow: one over `steps`, one over
/// `onExit` (indexes into those lists), and what each step requires of
/// its upstream steps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dag {
    pub steps: Graph,
    pub on_exit: Graph,
    pub step_requirements: Requirements,
    pub exit_requirements: Requirements,
}

impl Dag {
    /// The graph of the main steps, or of the exit handlers.
    pub fn graph(&self, exit: bool) -> &Graph {
        if exit { &self.on_exit } else { &self.steps }
    }

    /// The requirements of the main steps, or of the exit handlers.
    pub fn requirements(&self, exit: bool) -> &Requirements {
        if exit {
            &self.exit_requirements
        } else {
            &self.step_requirements
        }
    }
}

const MAX_MAP_ITEMS: usize = 10_000;
const MAX_ITERATIONS: u32 = 1_000;
const MAX_RETRIES: u32 = 100;
const MAX_TRIALS: u32 = 10_000;
const MAX_GPUS: u32 = 64;
const MAX_CPU_MILLIS: u64 = 1024 * 1000;
const MAX_MEMORY: u64 = 64 << 40;
const MAX_REPLICAS: u32 = 10_000;
pub(crate) const MAX_PARALLELISM: u32 = 100_000;
const MAX_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);
const MAX_TTL: std::time::Duration = std::time::Duration::from_secs(366 * 24 * 3600);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Step(u32),
    Exit(u32),
    Group(u32),
}

/// Where a string sits decides which references it may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Site {
    /// Command, args, env, source: data flows in, dependencies are implied.
    Data,
    /// A `when` input: reads upstream steps but implies no dependency.
    When,
    /// A `while` condition: reads the step's own outputs.
    While,
}

struct Validator<'a> {
    wf: &'a Workflow,
    report: Report,
    names: HashMap<&'a str, Target>,
    parameters: HashSet<&'a str>,
}

/// What one step contributes to its graph.
#[derive(Default)]
struct StepLinks<'a> {
    upstream: Vec<u32>,
    /// Steps read by `when`, with where they were read.
    when_reads: Vec<(u32, Pointer, &'a str)>,
    /// The step's `depends` entries that parsed and resolved, by index.
    entries: Vec<(usize, Expr<u32>)>,
}

pub(crate) fn validate(wf: &Workflow, limits: &Limits, report: Report) -> (Option<Dag>, Report) {
    let mut v = Validator {
        wf,
        report,
        names: HashMap::with_capacity(wf.steps.len() + wf.on_exit.len() + wf.groups.len()),
        parameters: HashSet::new(),
    };
    let dag = v.run(limits);
    (dag, v.report)
}

impl<'a> Validator<'a> {
    fn run(&mut self, limits: &Limits) -> Option<Dag> {
        let wf = self.wf;
        let root = Pointer::root();
        if wf.api_version != API_VERSION {
            self.report.push(
                &root.key("apiVersion"),
                Code::UnsupportedApiVersion,
                format!(
                    "apiVersion {:?} is not supported; use {API_VERSION:?}",
                    wf.api_version
                ),
            );
        }
        self.dns_name(&wf.name, &root.key("name"), "workflow name");
        self.labels(&wf.labels, &root.key("labels"));
        self.workflow_parameters();
        if let Some(p) = wf.parallelism {
            self.range(
                p as u64,
                1,
                MAX_PARALLELISM as u64,
                &root.key("parallelism"),
            );
        }
        if let Some(schedule) = &wf.schedule {
            self.schedule(schedule, &root.key("schedule"));
        }
        if let Some(t) = wf.timeout {
            self.duration(t, MAX_TIMEOUT, &root.key("timeout"));
        }

        let total = wf.steps.len() + wf.on_exit.len();
        if wf.steps.is_empty() {
            self.report.push(
                &root.key("steps"),
                Code::EmptyWorkflow,
                "a workflow needs at least one step",
            );
        }
        if total > limits.max_steps {
            self.report.push(
                &root.key("steps"),
                Code::TooManySteps,
                format!("{total} steps; the limit is {}", limits.max_steps),
            );
            return None;
        }

        self.index_names();
        let group_members = self.groups();

        let steps_path = root.key("steps");
        let mut links: Vec<StepLinks<'a>> = Vec::with_capacity(wf.steps.len());
        for (i, step) in wf.steps.iter().enumerate() {
            let mut l = self.step(step, i as u32, false, &steps_path.index(i));
            if let Some(group) = group_members.get(&(i as u32)) {
                self.group_dependencies(*group, &mut l.upstream);
            }
            links.push(l);
        }
        let exit_path = root.key("onExit");
        let exit_links: Vec<StepLinks<'a>> = wf
            .on_exit
            .iter()
            .enumerate()
            .map(|(i, step)| self.step(step, i as u32, true, &exit_path.index(i)))
            .collect();

        let steps = self.graph(&wf.steps, &mut links, &steps_path);
        let mut exit_links: Vec<StepLinks<'a>> = exit_links;
        let on_exit = self.graph(&wf.on_exit, &mut exit_links, &exit_path);
        let (steps, on_exit) = (steps?, on_exit?);
        Some(Dag {
            step_requirements: requirements(&steps, links),
            exit_requirements: requirements(&on_exit, exit_links),
            steps,
            on_exit,
        })
    }

    fn graph(
        &mut self,
        steps: &[Step],
        links: &mut Vec<StepLinks<'a>>,
        base: &Pointer,
    ) -> Option<Graph> {
        let upstream = links
            .iter_mut()
            .map(|l| std::mem::take(&mut l.upstream))
            .collect();
        match Graph::new(upstream) {
            Ok(graph) => {
                for (i, l) in links.iter().enumerate() {
                    for (read, path, name) in &l.when_reads {
                        if !graph.is_ancestor(*read, i as u32) {
                            self.report.push(
                                path,
                                Code::WhenNotUpstream,
                                format!(
                                    "`when` reads step {name:?}, which is not upstream of {:?}; add it to `depends`",
                                    steps[i].name
                                ),
                            );
                        }
                    }
                }
                Some(graph)
            }
            Err(cycles) => {
                for cycle in cycles {
                    let names: Vec<&str> = cycle
                        .iter()
                        .map(|&i| steps[i as usize].name.as_str())
                        .collect();
                    // At a step's `depends` entry naming another step of
                    // the cycle when there is one; else (references, groups)
                    // at the cycle's first step.
                    let at = cycle
                        .iter()
                        .find_map(|&i| {
                            let (entry, _) = links[i as usize].entries.iter().find(|(_, e)| {
                                e.names().iter().any(|&&u| u != i && cycle.contains(&u))
                            })?;
                            Some(base.index(i as usize).key("depends").index(*entry))
                        })
                        .unwrap_or_else(|| base.index(cycle[0] as usize));
                    self.report.push(
                        &at,
                        Code::Cycle,
                        format!("dependency cycle: {}", names.join(" → ")),
                    );
                }
                None
            }
        }
    }

    fn index_names(&mut self) {
        let wf = self.wf;
        let root = Pointer::root();
        let entries = wf
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (&s.name, Target::Step(i as u32), root.key("steps"), i))
            .chain(
                wf.on_exit
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (&s.name, Target::Exit(i as u32), root.key("onExit"), i)),
            )
            .chain(
                wf.groups
                    .iter()
                    .enumerate()
                    .map(|(i, g)| (&g.name, Target::Group(i as u32), root.key("groups"), i)),
            );
        for (name, target, list, i) in entries {
            // The first declaration keeps the name; later ones are reported.
            if let std::collections::hash_map::Entry::Vacant(slot) = self.names.entry(name.as_str())
            {
                slot.insert(target);
            } else {
                self.report.push(
                    &list.index(i).key("name"),
                    Code::DuplicateName,
                    format!("name {name:?} is already used by another step or group"),
                );
            }
        }
    }

    fn workflow_parameters(&mut self) {
        let base = Pointer::root().key("parameters");
        for (i, p) in self.wf.parameters.iter().enumerate() {
            let path = base.index(i);
            self.identifier(&p.name, &path.key("name"), "parameter name");
            if !self.parameters.insert(p.name.as_str()) {
                self.report.push(
                    &path.key("name"),
                    Code::DuplicateName,
                    format!("parameter {:?} is declared twice", p.name),
                );
            }
            if let Some(default) = &p.default
                && !p.allowed.is_empty()
                && !p.allowed.contains(default)
            {
                self.report.push(
                    &path.key("default"),
                    Code::InvalidValue,
                    format!(
                        "default {:?} is not one of the allowed values",
                        default.as_str()
                    ),
                );
            }
        }
    }

    /// Validates groups; returns each member's group.
    fn groups(&mut self) -> HashMap<u32, u32> {
        let mut member_of = HashMap::new();
        let base = Pointer::root().key("groups");
        for (g, group) in self.wf.groups.iter().enumerate() {
            let path = base.index(g);
            self.dns_name(&group.name, &path.key("name"), "group name");
            if group.steps.is_empty() {
                self.report.push(
                    &path.key("steps"),
                    Code::OutOfRange,
                    "a group needs at least one step",
                );
            }
            for (m, member) in group.steps.iter().enumerate() {
                let at = path.key("steps").index(m);
                match self.names.get(member.as_str()) {
                    Some(Target::Step(i)) => {
                        if member_of.insert(*i, g as u32).is_some() {
                            self.report.push(
                                &at,
                                Code::DuplicateName,
                                format!("step {member:?} is already a member of a group"),
                            );
                        }
                    }
                    Some(_) => self.report.push(
                        &at,
                        Code::InvalidValue,
                        format!("{member:?} is not a step of the main DAG"),
                    ),
                    None => self.report.push(
                        &at,
                        Code::UnknownStep,
                        format!("no step named {member:?}"),
                    ),
                }
            }
            for (d, dep) in group.depends.iter().enumerate() {
                let at = path.key("depends").index(d);
                match self.names.get(dep.as_str()) {
                    Some(Target::Group(_)) if dep == &group.name => {
                        self.report
                            .push(&at, Code::Cycle, "a group cannot depend on itself")
                    }
                    Some(Target::Step(_)) | Some(Target::Group(_)) => {}
                    Some(Target::Exit(_)) => self.report.push(
                        &at,
                        Code::InvalidValue,
                        format!("{dep:?} is an exit-handler step"),
                    ),
                    None if crate::depends::parse(dep).is_ok_and(|e| e.as_bare().is_none()) => {
                        self.report.push(
                            &at,
                            Code::InvalidValue,
                            format!("a group's `depends` takes step or group names only, not the expression {dep:?}; put it on the member steps"),
                        )
                    }
                    None => self.report.push(
                        &at,
                        Code::UnknownStep,
                        format!("no step or group named {dep:?}"),
                    ),
                }
            }
        }
        // Members run side by side: none may wait for another.
        for (&member, &g) in &member_of {
            let step = &self.wf.steps[member as usize];
            for (d, entry) in step.depends.iter().enumerate() {
                let Ok(expr) = crate::depends::parse(entry) else {
                    continue; // reported with the step
                };
                let same_group =
                    expr.names()
                        .into_iter()
                        .find(|dep| match self.names.get(dep.as_str()) {
                            Some(Target::Step(other)) => member_of.get(other) == Some(&g),
                            Some(Target::Group(other)) => *other == g,
                            _ => false,
                        });
                if let Some(dep) = same_group {
                    self.report.push(
                        &Pointer::root().key("steps").index(member as usize).key("depends").index(d),
                        Code::ConflictingFields,
                        format!(
                            "{:?} and {dep:?} are in the concurrent group {:?} and cannot depend on each other",
                            step.name, self.wf.groups[g as usize].name
                        ),
                    );
                }
            }
        }
        member_of
    }

    /// Adds a group's own dependencies to a member's upstream.
    fn group_dependencies(&self, group: u32, upstream: &mut Vec<u32>) {
        for dep in &self.wf.groups[group as usize].depends {
            self.expand(dep, upstream);
        }
    }

    /// Resolves a dependency name (step or group) to main-DAG steps.
    pub(super) fn expand(&self, name: &str, upstream: &mut Vec<u32>) {
        match self.names.get(name) {
            Some(Target::Step(i)) => upstream.push(*i),
            Some(Target::Group(g)) => {
                for member in &self.wf.groups[*g as usize].steps {
                    if let Some(Target::Step(i)) = self.names.get(member.as_str()) {
                        upstream.push(*i);
                    }
                }
            }
            _ => {}
        }
    }

    fn schedule(&mut self, schedule: &Schedule, path: &Pointer) {
        let zone = schedule.timezone.as_deref().unwrap_or(couler_schedule::UTC);
        if let Err(problems) = couler_schedule::Calendar::new(&[&schedule.cron], zone) {
            for p in problems {
                let at = match p.field {
                    couler_schedule::Field::Timezone => path.key("timezone"),
                    _ => path.key("cron"),
                };
                self.report.push(&at, Code::InvalidValue, p.message);
            }
        }
    }

    pub(super) fn labels(
        &mut self,
        labels: &std::collections::BTreeMap<String, String>,
        path: &Pointer,
    ) {
        for (k, v) in labels {
            if !is_label_key(k) {
                self.report.push(
                    &path.key(k),
                    Code::InvalidName,
                    format!("{k:?} is not a valid label key"),
                );
            }
            if !is_label_value(v) {
                self.report.push(
                    &path.key(k),
                    Code::InvalidValue,
                    format!("{v:?} is not a valid label value (at most 63 of A-Z a-z 0-9 . _ -)"),
                );
            }
        }
    }

    pub(super) fn dns_name(&mut self, name: &str, path: &Pointer, what: &str) {
        if !is_dns_label(name) {
            self.report.push(
                path,
                Code::InvalidName,
                format!("{what} {name:?} must be 1-63 lowercase letters, digits or '-', starting and ending with a letter or digit"),
            );
        }
    }

    pub(super) fn identifier(&mut self, name: &str, path: &Pointer, what: &str) {
        if !is_identifier(name) {
            self.report.push(
                path,
                Code::InvalidName,
                format!("{what} {name:?} must start with a letter or '_' and hold only letters, digits, '_' or '-' (at most 63)"),
            );
        }
    }

    pub(super) fn absolute(&mut self, file: &str, path: &Pointer) {
        if !file.starts_with('/') {
            self.report.push(
                path,
                Code::InvalidValue,
                format!("{file:?} must be an absolute path"),
            );
        }
    }

    pub(super) fn range(&mut self, value: u64, min: u64, max: u64, path: &Pointer) {
        if value < min || value > max {
            self.report.push(
                path,
                Code::OutOfRange,
                format!("{value} is outside {min}..={max}"),
            );
        }
    }

    pub(super) fn duration(&mut self, d: Duration, max: std::time::Duration, path: &Pointer) {
        if d.as_std().is_zero() || d.as_std() > max {
            self.report.push(
                path,
                Code::OutOfRange,
                format!("{d} is outside (0, {}]", humantime::format_duration(max)),
            );
        }
    }
}

/// Each node's requirements: its resolved entries, then a bare one for
/// every upstream node no entry names.
fn requirements(graph: &Graph, links: Vec<StepLinks<'_>>) -> Requirements {
    let nodes = links
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let named: HashSet<u32> = l
                .entries
                .iter()
                .flat_map(|(_, e)| e.names())
                .copied()
                .collect();
            let mut out: Vec<Requirement> = l
                .entries
                .into_iter()
                .map(|(entry, expr)| Requirement {
                    expr,
                    entry: Some(entry),
                })
                .collect();
            out.extend(
                graph
                    .upstream(i as u32)
                    .iter()
                    .filter(|u| !named.contains(u))
                    .map(|&u| Requirement {
                        expr: Expr::Ref(u, None),
                        entry: None,
                    }),
            );
            out
        })
        .collect();
    Requirements::new(nodes)
}
