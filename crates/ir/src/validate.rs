//! Semantic validation: names, references, dependencies, ranges. Reports
//! every problem in one pass and builds the dependency graphs on the way.

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

/// The dependency graphs of a valid workflow: one over `steps`, one over
/// `onExit` (indexes into those lists).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dag {
    pub steps: Graph,
    pub on_exit: Graph,
}

const MAX_MAP_ITEMS: usize = 10_000;
const MAX_ITERATIONS: u32 = 1_000;
const MAX_RETRIES: u32 = 100;
const MAX_TRIALS: u32 = 10_000;
const MAX_GPUS: u32 = 64;
const MAX_CPU_MILLIS: u64 = 1024 * 1000;
const MAX_MEMORY: u64 = 64 << 40;
const MAX_REPLICAS: u32 = 10_000;
const MAX_PARALLELISM: u32 = 100_000;
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
        let on_exit = self.graph(
            &wf.on_exit,
            &mut exit_links.into_iter().collect(),
            &exit_path,
        );
        Some(Dag {
            steps: steps?,
            on_exit: on_exit?,
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
                    self.report.push(
                        &base.index(cycle[0] as usize).key("depends"),
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
            for (d, dep) in step.depends.iter().enumerate() {
                let same_group = match self.names.get(dep.as_str()) {
                    Some(Target::Step(other)) => member_of.get(other) == Some(&g),
                    Some(Target::Group(other)) => *other == g,
                    _ => false,
                };
                if same_group {
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
    fn expand(&self, name: &str, upstream: &mut Vec<u32>) {
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

    fn step(&mut self, step: &'a Step, index: u32, exit: bool, path: &Pointer) -> StepLinks<'a> {
        let mut links = StepLinks::default();
        self.dns_name(&step.name, &path.key("name"), "step name");
        self.step_kind(step, path, exit, index, &mut links);
        if let Some(r) = &step.resources {
            self.resources(r, &path.key("resources"));
        }
        if let Some(h) = &step.hints {
            self.labels(&h.node_selector, &path.key("hints").key("nodeSelector"));
            for (i, t) in h.tolerations.iter().enumerate() {
                if !t.is_object() {
                    self.report.push(
                        &path.key("hints").key("tolerations").index(i),
                        Code::InvalidType,
                        "a toleration must be a mapping",
                    );
                }
            }
        }
        self.inputs(step, exit, index, path, &mut links);
        self.outputs(step, &path.key("outputs"));
        self.depends(step, exit, index, &path.key("depends"), &mut links);
        for (i, c) in step.when.iter().enumerate() {
            self.condition(
                c,
                step,
                exit,
                index,
                Site::When,
                &path.key("when").index(i),
                &mut links,
            );
        }
        self.control(step, exit, index, path, &mut links);
        if let Some(retry) = &step.retry {
            self.retry(retry, &path.key("retry"));
        }
        if let Some(t) = step.timeout {
            self.duration(t, MAX_TIMEOUT, &path.key("timeout"));
        }
        if let Some(c) = &step.cache {
            self.cache(c, &path.key("cache"));
        }
        if let Some(t) = &step.tune {
            if exit {
                self.report.push(
                    &path.key("tune"),
                    Code::ConflictingFields,
                    "exit-handler steps cannot be tuned",
                );
            }
            self.tune(t, step, &path.key("tune"));
        }
        links
    }

    fn step_kind(
        &mut self,
        step: &'a Step,
        path: &Pointer,
        exit: bool,
        index: u32,
        links: &mut StepLinks<'a>,
    ) {
        let set = [
            step.container.is_some(),
            step.script.is_some(),
            step.job.is_some(),
        ];
        match set.iter().filter(|s| **s).count() {
            0 => self.report.push(
                path,
                Code::InvalidStepKind,
                "a step needs one of `container`, `script` or `job`",
            ),
            1 => {}
            _ => self.report.push(
                path,
                Code::InvalidStepKind,
                "a step takes only one of `container`, `script` or `job`",
            ),
        }
        let mut data = |v: &mut Self, s: &'a str, at: &dyn Fn() -> Pointer| {
            v.references(s, step, exit, index, Site::Data, at, links)
        };
        if let Some(c) = &step.container {
            let p = path.key("container");
            self.image(&c.image, &p.key("image"));
            self.strings(&c.command, &p.key("command"), &mut data);
            self.strings(&c.args, &p.key("args"), &mut data);
            self.env(&c.env, &p.key("env"), &mut data);
            self.working_dir(c.working_dir.as_deref(), &p.key("workingDir"), &mut data);
        }
        if let Some(s) = &step.script {
            let p = path.key("script");
            self.image(&s.image, &p.key("image"));
            if s.command.is_empty() {
                self.report.push(
                    &p.key("command"),
                    Code::MissingField,
                    "a script needs an interpreter command, e.g. [\"python3\"]",
                );
            }
            self.strings(&s.command, &p.key("command"), &mut data);
            if s.source.trim().is_empty() {
                self.report.push(
                    &p.key("source"),
                    Code::MissingField,
                    "a script needs source",
                );
            }
            data(self, &s.source, &|| p.key("source"));
            self.env(&s.env, &p.key("env"), &mut data);
            self.working_dir(s.working_dir.as_deref(), &p.key("workingDir"), &mut data);
        }
        if let Some(j) = &step.job {
            let p = path.key("job");
            self.image(&j.image, &p.key("image"));
            self.strings(&j.command, &p.key("command"), &mut data);
            self.strings(&j.args, &p.key("args"), &mut data);
            self.env(&j.env, &p.key("env"), &mut data);
            self.working_dir(j.working_dir.as_deref(), &p.key("workingDir"), &mut data);
            self.replicas(j, &p.key("replicas"));
        }
    }

    fn replicas(&mut self, job: &TrainingJob, path: &Pointer) {
        if job.replicas.is_empty() {
            self.report.push(
                path,
                Code::MissingField,
                "a job needs at least one replica role",
            );
        }
        let roles = job.framework.roles();
        for (role, replica) in &job.replicas {
            let at = path.key(role);
            if !roles.contains(&role.as_str()) {
                self.report.push(
                    &at,
                    Code::InvalidValue,
                    format!(
                        "{:?} is not a role of {:?} jobs; roles are {}",
                        role,
                        job.framework,
                        roles.join(", ")
                    ),
                );
            }
            self.range(
                replica.count as u64,
                1,
                MAX_REPLICAS as u64,
                &at.key("count"),
            );
            if let Some(r) = &replica.resources {
                self.resources(r, &at.key("resources"));
            }
        }
        let single = match job.framework {
            Framework::Pytorch => Some("master"),
            Framework::Tensorflow => Some("chief"),
            Framework::Mpi => Some("launcher"),
        };
        if let Some(role) = single
            && let Some(r) = job.replicas.get(role)
            && r.count > 1
        {
            self.report.push(
                &path.key(role).key("count"),
                Code::OutOfRange,
                format!("a {:?} job has at most one {role}", job.framework),
            );
        }
        if job.framework == Framework::Mpi && !job.replicas.contains_key("worker") {
            self.report.push(
                path,
                Code::MissingField,
                "an MPI job needs `worker` replicas",
            );
        }
    }

    fn strings(
        &mut self,
        list: &'a [String],
        path: &Pointer,
        data: &mut impl FnMut(&mut Self, &'a str, &dyn Fn() -> Pointer),
    ) {
        for (i, s) in list.iter().enumerate() {
            data(self, s, &|| path.index(i));
        }
    }

    fn env(
        &mut self,
        env: &'a [EnvVar],
        path: &Pointer,
        data: &mut impl FnMut(&mut Self, &'a str, &dyn Fn() -> Pointer),
    ) {
        let mut seen = HashSet::new();
        for (i, var) in env.iter().enumerate() {
            let at = path.index(i);
            if !is_env_name(&var.name) {
                self.report.push(
                    &at.key("name"),
                    Code::InvalidName,
                    format!("{:?} is not a valid environment variable name", var.name),
                );
            }
            if !seen.insert(var.name.as_str()) {
                self.report.push(
                    &at.key("name"),
                    Code::DuplicateName,
                    format!("{:?} is set twice", var.name),
                );
            }
            match (&var.value, &var.secret) {
                (Some(v), None) => data(self, v, &|| at.key("value")),
                (None, Some(secret)) => {
                    if !is_dns_subdomain(&secret.name) {
                        self.report.push(
                            &at.key("secret").key("name"),
                            Code::InvalidName,
                            format!("{:?} is not a valid secret name", secret.name),
                        );
                    }
                    if !is_secret_key(&secret.key) {
                        self.report.push(
                            &at.key("secret").key("key"),
                            Code::InvalidName,
                            format!("{:?} is not a valid secret key", secret.key),
                        );
                    }
                }
                (Some(_), Some(_)) => self.report.push(
                    &at,
                    Code::ConflictingFields,
                    "set `value` or `secret`, not both",
                ),
                (None, None) => self.report.push(
                    &at,
                    Code::MissingField,
                    "an environment variable needs `value` or `secret`",
                ),
            }
        }
    }

    fn working_dir(
        &mut self,
        dir: Option<&'a str>,
        path: &Pointer,
        data: &mut impl FnMut(&mut Self, &'a str, &dyn Fn() -> Pointer),
    ) {
        if let Some(dir) = dir {
            if !dir.starts_with('/') && !dir.starts_with("{{") {
                self.report.push(
                    path,
                    Code::InvalidValue,
                    "the working directory must be an absolute path",
                );
            }
            data(self, dir, &|| path.clone());
        }
    }

    fn image(&mut self, image: &str, path: &Pointer) {
        if image.trim().is_empty() || image.chars().any(char::is_whitespace) {
            self.report.push(
                path,
                Code::InvalidValue,
                format!("{image:?} is not a valid image reference"),
            );
        }
    }

    fn inputs(
        &mut self,
        step: &'a Step,
        exit: bool,
        index: u32,
        path: &Pointer,
        links: &mut StepLinks<'a>,
    ) {
        let Some(inputs) = &step.inputs else { return };
        let base = path.key("inputs").key("artifacts");
        let mut seen = HashSet::new();
        for (i, a) in inputs.artifacts.iter().enumerate() {
            let at = base.index(i);
            self.identifier(&a.name, &at.key("name"), "artifact name");
            if !seen.insert(a.name.as_str()) {
                self.report.push(
                    &at.key("name"),
                    Code::DuplicateName,
                    format!("input artifact {:?} is declared twice", a.name),
                );
            }
            self.absolute(&a.path, &at.key("path"));
            match sole_reference(&a.from) {
                Some(Ok(r @ Ref::StepArtifact(..))) => {
                    self.reference(r, step, exit, index, Site::Data, &at.key("from"), links)
                }
                Some(Err(e)) => {
                    self.report
                        .push(&at.key("from"), Code::InvalidReference, e.to_string())
                }
                _ => self.report.push(
                    &at.key("from"),
                    Code::InvalidReference,
                    "`from` must be exactly one {{steps.STEP.outputs.artifacts.NAME}}",
                ),
            }
        }
    }

    fn outputs(&mut self, step: &Step, path: &Pointer) {
        let Some(outputs) = &step.outputs else { return };
        let mut seen = HashSet::new();
        let params = outputs
            .parameters
            .iter()
            .map(|p| (&p.name, &p.path, "parameters"));
        let artifacts = outputs
            .artifacts
            .iter()
            .map(|a| (&a.name, &a.path, "artifacts"));
        let mut counters = HashMap::new();
        for (name, file, list) in params.chain(artifacts) {
            let i = counters.entry(list).or_insert(0usize);
            let at = path.key(list).index(*i);
            *i += 1;
            self.identifier(name, &at.key("name"), "output name");
            if !seen.insert(name.as_str()) {
                self.report.push(
                    &at.key("name"),
                    Code::DuplicateName,
                    format!("output {name:?} is declared twice"),
                );
            }
            self.absolute(file, &at.key("path"));
        }
    }

    fn depends(
        &mut self,
        step: &Step,
        exit: bool,
        index: u32,
        path: &Pointer,
        links: &mut StepLinks<'a>,
    ) {
        for (i, dep) in step.depends.iter().enumerate() {
            let at = path.index(i);
            match (self.names.get(dep.as_str()).copied(), exit) {
                (Some(Target::Step(d)), false) if d == index => {
                    self.report.push(&at, Code::Cycle, format!("dependency cycle: {dep} → {dep}"))
                }
                (Some(Target::Exit(d)), true) if d == index => {
                    self.report.push(&at, Code::Cycle, format!("dependency cycle: {dep} → {dep}"))
                }
                (Some(Target::Step(_)) | Some(Target::Group(_)), false) => self.expand(dep, &mut links.upstream),
                (Some(Target::Exit(d)), true) => links.upstream.push(d),
                (Some(Target::Exit(_)), false) => self.report.push(
                    &at,
                    Code::InvalidValue,
                    format!("{dep:?} is an exit-handler step; main steps cannot depend on it"),
                ),
                (Some(_), true) => self.report.push(
                    &at,
                    Code::InvalidValue,
                    format!("exit-handler steps run after the DAG; they can only depend on other exit-handler steps, not {dep:?}"),
                ),
                (None, _) => self.report.push(&at, Code::UnknownStep, format!("no step or group named {dep:?}")),
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn condition(
        &mut self,
        c: &'a Condition,
        step: &'a Step,
        exit: bool,
        index: u32,
        site: Site,
        path: &Pointer,
        links: &mut StepLinks<'a>,
    ) {
        self.references(
            &c.input,
            step,
            exit,
            index,
            site,
            &|| path.key("input"),
            links,
        );
        if c.operator.takes_list() {
            if c.values.is_empty() {
                self.report.push(
                    &path.key("values"),
                    Code::MissingField,
                    format!("operator `{}` needs `values`", c.operator),
                );
            }
            if c.value.is_some() {
                self.report.push(
                    &path.key("value"),
                    Code::ConflictingFields,
                    "use `values` (a list) with in/notin",
                );
            }
        } else {
            match &c.value {
                None => self.report.push(
                    &path.key("value"),
                    Code::MissingField,
                    format!("operator `{}` needs `value`", c.operator),
                ),
                Some(v) if c.operator.is_numeric() && v.as_str().trim().parse::<f64>().is_err() => {
                    self.report.push(
                        &path.key("value"),
                        Code::InvalidValue,
                        format!(
                            "operator `{}` compares numbers; {:?} is not a number",
                            c.operator,
                            v.as_str()
                        ),
                    )
                }
                Some(_) => {}
            }
            if !c.values.is_empty() {
                self.report.push(
                    &path.key("values"),
                    Code::ConflictingFields,
                    "`values` is only for in/notin",
                );
            }
        }
    }

    fn control(
        &mut self,
        step: &'a Step,
        exit: bool,
        index: u32,
        path: &Pointer,
        links: &mut StepLinks<'a>,
    ) {
        let shapes = [
            ("map", step.map.is_some()),
            ("while", step.repeat.is_some()),
            ("tune", step.tune.is_some()),
        ];
        let set: Vec<&str> = shapes
            .iter()
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect();
        if set.len() > 1 {
            self.report.push(
                &path.key(set[1]),
                Code::ConflictingFields,
                format!(
                    "a step takes only one of `map`, `while` and `tune` (found {})",
                    set.join(", ")
                ),
            );
        }
        if let Some(map) = &step.map {
            let p = path.key("map");
            match (&map.items, &map.from) {
                (Some(items), None) => {
                    if items.is_empty() || items.len() > MAX_MAP_ITEMS {
                        self.report.push(
                            &p.key("items"),
                            Code::OutOfRange,
                            format!("`items` needs 1 to {MAX_MAP_ITEMS} entries"),
                        );
                    }
                }
                (None, Some(from)) => match sole_reference(from) {
                    Some(Ok(
                        r @ (Ref::WorkflowParameter(_)
                        | Ref::StepParameter(..)
                        | Ref::StepResult(_)),
                    )) => self.reference(r, step, exit, index, Site::Data, &p.key("from"), links),
                    Some(Err(e)) => {
                        self.report
                            .push(&p.key("from"), Code::InvalidReference, e.to_string())
                    }
                    _ => self.report.push(
                        &p.key("from"),
                        Code::InvalidReference,
                        "`from` must be exactly one reference to a parameter holding a JSON list",
                    ),
                },
                (Some(_), Some(_)) => self.report.push(
                    &p,
                    Code::ConflictingFields,
                    "set `items` or `from`, not both",
                ),
                (None, None) => {
                    self.report
                        .push(&p, Code::MissingField, "`map` needs `items` or `from`")
                }
            }
            if let Some(par) = map.parallelism {
                self.range(par as u64, 1, MAX_PARALLELISM as u64, &p.key("parallelism"));
            }
        }
        if let Some(repeat) = &step.repeat {
            let p = path.key("while");
            self.range(
                repeat.max_iterations as u64,
                1,
                MAX_ITERATIONS as u64,
                &p.key("maxIterations"),
            );
            if repeat.condition.is_empty() {
                self.report.push(
                    &p.key("condition"),
                    Code::MissingField,
                    "`while` needs at least one condition",
                );
            }
            for (i, c) in repeat.condition.iter().enumerate() {
                self.condition(
                    c,
                    step,
                    exit,
                    index,
                    Site::While,
                    &p.key("condition").index(i),
                    links,
                );
            }
        }
    }

    fn retry(&mut self, retry: &Retry, path: &Pointer) {
        self.range(
            retry.limit as u64,
            0,
            MAX_RETRIES as u64,
            &path.key("limit"),
        );
        if let Some(b) = &retry.backoff {
            let p = path.key("backoff");
            self.duration(b.duration, MAX_TIMEOUT, &p.key("duration"));
            if let Some(f) = b.factor {
                self.range(f as u64, 1, 10, &p.key("factor"));
            }
            if let Some(max) = b.max_duration
                && max < b.duration
            {
                self.report.push(
                    &p.key("maxDuration"),
                    Code::OutOfRange,
                    "`maxDuration` is shorter than `duration`",
                );
            }
        }
    }

    fn cache(&mut self, cache: &Cache, path: &Pointer) {
        if let Some(ttl) = cache.ttl {
            self.duration(ttl, MAX_TTL, &path.key("ttl"));
        }
        if let Some(v) = &cache.version
            && (v.is_empty() || v.len() > 128)
        {
            self.report.push(
                &path.key("version"),
                Code::OutOfRange,
                "`version` must be 1 to 128 characters",
            );
        }
    }

    fn tune(&mut self, tune: &Tune, step: &Step, path: &Pointer) {
        if tune.space.is_empty() {
            self.report.push(
                &path.key("space"),
                Code::MissingField,
                "the search space is empty",
            );
        }
        let mut grid_size: u128 = 1;
        for (name, param) in &tune.space {
            let at = path.key("space").key(name);
            self.identifier(name, &at, "hyperparameter name");
            let values = self.search_param(param, tune.strategy, &at);
            grid_size = grid_size.saturating_mul(values.unwrap_or(1) as u128);
        }
        if tune.strategy == Strategy::Grid && grid_size > MAX_TRIALS as u128 {
            self.report.push(
                &path.key("space"),
                Code::OutOfRange,
                format!("the grid has {grid_size} points; at most {MAX_TRIALS} trials are allowed"),
            );
        }
        self.range(
            tune.max_trials as u64,
            1,
            MAX_TRIALS as u64,
            &path.key("maxTrials"),
        );
        if let Some(p) = tune.parallelism {
            self.range(
                p as u64,
                1,
                MAX_PARALLELISM as u64,
                &path.key("parallelism"),
            );
        }
        if step.output_parameter(&tune.objective.metric).is_none() {
            self.report.push(
                &path.key("objective").key("metric"),
                Code::UnknownOutput,
                format!(
                    "the step declares no output parameter {:?} to read the objective from",
                    tune.objective.metric
                ),
            );
        }
        match (&tune.halving, tune.strategy) {
            (Some(h), Strategy::Halving) => {
                let p = path.key("halving");
                if h.min_budget == 0 || h.min_budget >= h.max_budget {
                    self.report.push(
                        &p.key("minBudget"),
                        Code::OutOfRange,
                        "`minBudget` must be at least 1 and below `maxBudget`",
                    );
                }
                if let Some(eta) = h.eta {
                    self.range(eta as u64, 2, 100, &p.key("eta"));
                }
            }
            (None, Strategy::Halving) => self.report.push(
                &path.key("halving"),
                Code::MissingField,
                "the halving strategy needs `halving` budgets",
            ),
            (Some(_), _) => self.report.push(
                &path.key("halving"),
                Code::ConflictingFields,
                "`halving` is only used by the halving strategy",
            ),
            (None, _) => {}
        }
    }

    /// Validates one dimension; returns its number of grid points when discrete.
    fn search_param(&mut self, p: &SearchParam, strategy: Strategy, path: &Pointer) -> Option<u64> {
        match p.kind {
            ParamKind::Categorical => {
                if p.values.is_empty() {
                    self.report.push(
                        &path.key("values"),
                        Code::MissingField,
                        "a categorical hyperparameter needs `values`",
                    );
                }
                if p.min.is_some() || p.max.is_some() || p.step.is_some() {
                    self.report.push(
                        path,
                        Code::ConflictingFields,
                        "categorical hyperparameters take `values`, not `min`/`max`/`step`",
                    );
                }
                Some(p.values.len() as u64)
            }
            ParamKind::Int | ParamKind::Double => {
                if !p.values.is_empty() {
                    self.report.push(
                        &path.key("values"),
                        Code::ConflictingFields,
                        "`values` is only for categorical hyperparameters",
                    );
                }
                let (Some(min), Some(max)) = (p.min, p.max) else {
                    self.report.push(
                        path,
                        Code::MissingField,
                        "numeric hyperparameters need `min` and `max`",
                    );
                    return None;
                };
                if !(min.is_finite() && max.is_finite()) || min > max {
                    self.report.push(
                        &path.key("max"),
                        Code::OutOfRange,
                        "`max` must be at least `min`",
                    );
                    return None;
                }
                if p.kind == ParamKind::Int && (min.fract() != 0.0 || max.fract() != 0.0) {
                    self.report
                        .push(path, Code::InvalidValue, "int bounds must be whole numbers");
                }
                if p.log && (p.kind == ParamKind::Int || min <= 0.0) {
                    self.report.push(
                        &path.key("log"),
                        Code::InvalidValue,
                        "log scale needs a double with `min` > 0",
                    );
                }
                let step = match (p.step, p.kind) {
                    (Some(s), _) if !(s.is_finite() && s > 0.0) => {
                        self.report.push(
                            &path.key("step"),
                            Code::OutOfRange,
                            "`step` must be positive",
                        );
                        return None;
                    }
                    (Some(s), _) => s,
                    (None, ParamKind::Int) => 1.0,
                    (None, _) => {
                        if strategy == Strategy::Grid {
                            self.report.push(
                                &path.key("step"),
                                Code::MissingField,
                                "a double needs `step` for the grid strategy",
                            );
                        }
                        return None;
                    }
                };
                Some(((max - min) / step).floor().min(u64::MAX as f64 / 2.0) as u64 + 1)
            }
        }
    }

    /// Checks every reference in a string that may hold data references.
    #[allow(clippy::too_many_arguments)]
    fn references(
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
    fn reference(
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
    fn step_reference(
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

    fn resources(&mut self, r: &Resources, path: &Pointer) {
        if let Some(cpu) = r.cpu
            && (cpu.millis() == 0 || cpu.millis() > MAX_CPU_MILLIS)
        {
            self.report.push(
                &path.key("cpu"),
                Code::OutOfRange,
                format!("CPU {cpu} is outside 1m..={}", MAX_CPU_MILLIS / 1000),
            );
        }
        if let Some(mem) = r.memory
            && (mem.bytes() == 0 || mem.bytes() > MAX_MEMORY)
        {
            self.report.push(
                &path.key("memory"),
                Code::OutOfRange,
                format!(
                    "memory {mem} is outside 1..={}",
                    crate::scalar::Memory(MAX_MEMORY)
                ),
            );
        }
        if let Some(gpu) = r.gpu {
            self.range(gpu as u64, 0, MAX_GPUS as u64, &path.key("gpu"));
        }
    }

    fn schedule(&mut self, schedule: &Schedule, path: &Pointer) {
        if let Err(e) = schedule.cron.parse::<croner::Cron>() {
            self.report.push(
                &path.key("cron"),
                Code::InvalidValue,
                format!("invalid cron expression {:?}: {e}", schedule.cron),
            );
        }
        if let Some(tz) = &schedule.timezone
            && !is_timezone_name(tz)
        {
            self.report.push(
                &path.key("timezone"),
                Code::InvalidValue,
                format!("{tz:?} is not an IANA time zone name"),
            );
        }
    }

    fn labels(&mut self, labels: &std::collections::BTreeMap<String, String>, path: &Pointer) {
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

    fn dns_name(&mut self, name: &str, path: &Pointer, what: &str) {
        if !is_dns_label(name) {
            self.report.push(
                path,
                Code::InvalidName,
                format!("{what} {name:?} must be 1-63 lowercase letters, digits or '-', starting and ending with a letter or digit"),
            );
        }
    }

    fn identifier(&mut self, name: &str, path: &Pointer, what: &str) {
        if !is_identifier(name) {
            self.report.push(
                path,
                Code::InvalidName,
                format!("{what} {name:?} must start with a letter or '_' and hold only letters, digits, '_' or '-' (at most 63)"),
            );
        }
    }

    fn absolute(&mut self, file: &str, path: &Pointer) {
        if !file.starts_with('/') {
            self.report.push(
                path,
                Code::InvalidValue,
                format!("{file:?} must be an absolute path"),
            );
        }
    }

    fn range(&mut self, value: u64, min: u64, max: u64, path: &Pointer) {
        if value < min || value > max {
            self.report.push(
                path,
                Code::OutOfRange,
                format!("{value} is outside {min}..={max}"),
            );
        }
    }

    fn duration(&mut self, d: Duration, max: std::time::Duration, path: &Pointer) {
        if d.as_std().is_zero() || d.as_std() > max {
            self.report.push(
                path,
                Code::OutOfRange,
                format!("{d} is outside (0, {}]", humantime::format_duration(max)),
            );
        }
    }
}

fn is_timezone_name(tz: &str) -> bool {
    tz == "UTC"
        || (tz.contains('/')
            && tz.split('/').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'+'))
            }))
}
