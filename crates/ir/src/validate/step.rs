//! Checks of one step: what it runs, its inputs and outputs, dependencies,
//! conditions, control flow, retries, caching, resources and searches.

use super::*;

impl<'a> Validator<'a> {
    pub(super) fn step(
        &mut self,
        step: &'a Step,
        index: u32,
        exit: bool,
        path: &Pointer,
    ) -> StepLinks<'a> {
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

    pub(super) fn step_kind(
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
            for (role, r) in &j.replicas {
                let at = p.key("replicas").key(role);
                if let Some(image) = &r.image {
                    self.image(image, &at.key("image"));
                }
                self.strings(&r.command, &at.key("command"), &mut data);
                self.strings(&r.args, &at.key("args"), &mut data);
            }
        }
    }

    pub(super) fn replicas(&mut self, job: &TrainingJob, path: &Pointer) {
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

    pub(super) fn strings(
        &mut self,
        list: &'a [String],
        path: &Pointer,
        data: &mut impl FnMut(&mut Self, &'a str, &dyn Fn() -> Pointer),
    ) {
        for (i, s) in list.iter().enumerate() {
            data(self, s, &|| path.index(i));
        }
    }

    pub(super) fn env(
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

    pub(super) fn working_dir(
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

    pub(super) fn image(&mut self, image: &str, path: &Pointer) {
        if image.trim().is_empty() || image.chars().any(char::is_whitespace) {
            self.report.push(
                path,
                Code::InvalidValue,
                format!("{image:?} is not a valid image reference"),
            );
        }
    }

    pub(super) fn inputs(
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

    pub(super) fn outputs(&mut self, step: &Step, path: &Pointer) {
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

    #[allow(clippy::too_many_arguments)]
    pub(super) fn condition(
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

    pub(super) fn control(
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

    pub(super) fn retry(&mut self, retry: &Retry, path: &Pointer) {
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

    pub(super) fn cache(&mut self, cache: &Cache, path: &Pointer) {
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

    pub(super) fn resources(&mut self, r: &Resources, path: &Pointer) {
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

    pub(super) fn tune(&mut self, tune: &Tune, step: &Step, path: &Pointer) {
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
    pub(super) fn search_param(
        &mut self,
        p: &SearchParam,
        strategy: Strategy,
        path: &Pointer,
    ) -> Option<u64> {
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
}
