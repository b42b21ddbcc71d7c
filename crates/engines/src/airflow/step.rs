//! One IR step as Airflow tasks: an optional `when` gate, an optional map
//! builder, and the operator that runs it.

use super::text::{base64, jinja_literal, jinja_text, py_list, py_str, secret_file, sh_word};
use super::{Ctx, Emitted, Operator, unsupported};
use crate::EngineError;
use crate::k8s::secrets::{Namespace, secret_object};
use couler_ir::refs::{Ref, Segment, segments, sole_reference};
use couler_ir::{EnvVar, Step};
use std::fmt::Write;

/// Marks `{{item}}` in templates; `couler_expand` fills it in per instance.
const ITEM: &str = "\u{0}couler:item";
const INDEX: &str = "\u{0}couler:index\u{0}";

/// How references render inside one step's templated fields.
struct Scope<'c, 'a> {
    ctx: &'c Ctx<'a>,
    step: &'c Step,
    exit: bool,
    mapped: bool,
}

impl Scope<'_, '_> {
    /// `text` as a Jinja template for a templated field.
    fn render(&self, text: &str) -> Result<String, EngineError> {
        if !text.contains('{') {
            return Ok(text.to_owned());
        }
        let mut out = String::with_capacity(text.len() + 16);
        for segment in segments(text) {
            match segment {
                Ok(Segment::Text(t)) => jinja_text(t, &mut out),
                Ok(Segment::Ref(r)) => self.reference(r, &mut out)?,
                Err(e) => {
                    return Err(EngineError::Other(format!(
                        "step `{}`: {e}",
                        self.step.name
                    )));
                }
            }
        }
        Ok(out)
    }

    fn reference(&self, r: Ref<'_>, out: &mut String) -> Result<(), EngineError> {
        let name = &self.step.name;
        let pods = self.ctx.operator == Operator::KubernetesPod;
        let no_artifacts = || {
            unsupported(format!(
                "step `{name}` refers to an artifact ({r}): Airflow has no artifact store and KubernetesPodOperator pods share no volume"
            ))
        };
        match r {
            Ref::WorkflowParameter(p) => {
                let value = self.ctx.plan.parameters.get(p).ok_or_else(|| {
                    EngineError::Other(format!("step `{name}`: parameter `{p}` has no value"))
                })?;
                jinja_text(value, out);
            }
            Ref::WorkflowName => jinja_text(&self.ctx.plan.workflow.name, out),
            Ref::WorkflowStatus => {
                if !self.exit {
                    return Err(EngineError::Other(format!(
                        "step `{name}`: {{{{workflow.status}}}} is only known to exit handlers"
                    )));
                }
                out.push_str("{{ ti.xcom_pull(task_ids='couler__status') }}");
            }
            Ref::StepResult(s) | Ref::StepParameter(s, _) => {
                let param = match r {
                    Ref::StepParameter(_, p) => Some(p),
                    _ => None,
                };
                if let Some(outputs) = self.ctx.reused.get(s) {
                    let value = match param {
                        None => outputs.result.as_deref().unwrap_or_default(),
                        Some(p) => outputs.parameters.get(p).ok_or_else(|| {
                            EngineError::Other(format!(
                                "step `{name}` reads {r}, which the reused step `{s}` did not record"
                            ))
                        })?,
                    };
                    jinja_text(value, out);
                } else {
                    let _ = write!(out, "{{{{ couler_output(ti, '{s}'");
                    if let Some(p) = param {
                        let _ = write!(out, ", '{p}'");
                    }
                    if self.ctx.mapped.contains(s) {
                        out.push_str(", mapped=True");
                    }
                    out.push_str(") }}");
                }
            }
            Ref::StepArtifact(s, a) => {
                if pods {
                    return Err(no_artifacts());
                }
                jinja_text(&self.artifact_source(s, a)?, out);
            }
            Ref::Item(field) => {
                if !self.mapped {
                    return Err(EngineError::Other(format!(
                        "step `{name}` reads {r} but is not a map step"
                    )));
                }
                out.push_str(ITEM);
                if let Some(k) = field {
                    out.push('.');
                    out.push_str(k);
                }
                out.push('\u{0}');
            }
            Ref::TrialParameter(_) | Ref::TrialBudget => {
                return Err(unsupported(format!(
                    "step `{name}` reads {r}: hyperparameter trials are expanded by the scheduler, not by Airflow"
                )));
            }
            Ref::InputArtifactPath(a) if !pods => {
                let _ = write!(out, "{}/inputs/{a}", self.step_dir());
            }
            Ref::OutputArtifactPath(a) if !pods => {
                let _ = write!(out, "{}/outputs/artifacts/{a}", self.step_dir());
            }
            Ref::OutputParameterPath(p) if !pods => {
                let _ = write!(out, "{}/outputs/parameters/{p}", self.step_dir());
            }
            Ref::OutputParameterPath(p) => {
                let declared = self.step.output_parameter(p).ok_or_else(|| {
                    EngineError::Other(format!("step `{name}` has no output parameter `{p}`"))
                })?;
                jinja_text(&declared.path, out);
            }
            Ref::InputArtifactPath(_) | Ref::OutputArtifactPath(_) => return Err(no_artifacts()),
        }
        Ok(())
    }

    /// The step's directory on the worker (BashOperator), as a template.
    fn step_dir(&self) -> String {
        let mut dir = format!("{{{{ couler_dir(ti) }}}}/{}", self.step.name);
        if self.mapped {
            dir.push('/');
            dir.push_str(INDEX);
        }
        dir
    }

    /// Where an upstream artifact lies on the worker, relative to the run
    /// directory (`$COULER_RUN_DIR/…`) or absolute for a reused one.
    fn artifact_source(&self, s: &str, a: &str) -> Result<String, EngineError> {
        let name = &self.step.name;
        if let Some(outputs) = self.ctx.reused.get(s) {
            let stored = outputs.artifacts.get(a).ok_or_else(|| {
                EngineError::Other(format!(
                    "step `{name}` reads artifact `{a}`, which the reused step `{s}` did not record"
                ))
            })?;
            return stored
                .location
                .strip_prefix("file://")
                .map(str::to_owned)
                .ok_or_else(|| {
                    unsupported(format!(
                        "step `{name}` reads the cached artifact `{s}.{a}` at {}, which a BashOperator cannot fetch",
                        stored.location
                    ))
                });
        }
        if self.ctx.mapped.contains(s) {
            return Err(unsupported(format!(
                "step `{name}` reads artifact `{a}` of the map step `{s}`: instances' artifacts are not aggregated"
            )));
        }
        Ok(format!(
            "{{{{ couler_dir(ti) }}}}/{s}/outputs/artifacts/{a}"
        ))
    }
}

/// Keyword arguments of an operator call, in order.
#[derive(Default)]
struct Kwargs(Vec<(&'static str, String)>);

impl Kwargs {
    fn push(&mut self, key: &'static str, python: String) {
        self.0.push((key, python));
    }
    /// A field that a map step's instances fill in themselves.
    fn push_varying(
        &mut self,
        per_item: &mut Vec<(&'static str, String)>,
        mapped: bool,
        key: &'static str,
        python: String,
    ) {
        if mapped {
            per_item.push((key, python));
        } else {
            self.push(key, python);
        }
    }
    fn write(&self, out: &mut String) {
        for (k, v) in &self.0 {
            let _ = writeln!(out, "        {k}={v},");
        }
    }
}

/// Emits the tasks of one step into `out` (inside the `with DAG` block).
pub(super) fn emit(
    ctx: &Ctx<'_>,
    step: &Step,
    exit: bool,
    out: &mut String,
) -> Result<Emitted, EngineError> {
    let scope = Scope {
        ctx,
        step,
        exit,
        mapped: step.map.is_some(),
    };
    let var = format!("t_{}", step.name.replace('-', "_"));
    let mut first = var.clone();

    if !step.when.is_empty() {
        let gate = format!("{var}__when");
        let mut conditions = Vec::with_capacity(step.when.len());
        for c in &step.when {
            let values: Vec<String> = match c.operator {
                couler_ir::Operator::In | couler_ir::Operator::Notin => {
                    c.values.iter().map(|v| jinja_literal(v.as_str())).collect()
                }
                _ => vec![jinja_literal(
                    c.value.as_ref().map(|v| v.as_str()).unwrap_or_default(),
                )],
            };
            conditions.push(format!(
                "[{}, {}, {}]",
                py_str(&scope.render(&c.input)?),
                py_str(&c.operator.to_string()),
                py_list(&values)
            ));
        }
        let _ = write!(
            out,
            "    {gate} = ShortCircuitOperator(\n        task_id={},\n        python_callable=couler_when,\n        op_kwargs={{\"conditions\": [{}]}},\n        ignore_downstream_trigger_rules=False,\n        retries=0,\n    )\n",
            py_str(&format!("{}__when", step.name)),
            conditions.join(", ")
        );
        first = gate;
    }

    let mut kwargs = Kwargs::default();
    kwargs.push("task_id", py_str(&step.name));
    if let Some(rule) = ctx.trigger_rule(step, exit)? {
        kwargs.push("trigger_rule", format!("TriggerRule.{rule}"));
    }
    // The fields that vary by map instance, as (name, python) pairs.
    let mut per_item: Vec<(&'static str, String)> = Vec::new();
    match ctx.operator {
        Operator::KubernetesPod => pod(&scope, &mut kwargs, &mut per_item)?,
        Operator::Bash => bash(&scope, &mut kwargs, &mut per_item)?,
    }
    common(step, &mut kwargs);

    let class = match ctx.operator {
        Operator::KubernetesPod => "KubernetesPodOperator",
        Operator::Bash => "BashOperator",
    };
    if let Some(map) = &step.map {
        let builder = format!("{var}__items");
        let items = match (&map.items, &map.from) {
            (Some(items), _) => py_str(&jinja_literal(
                &serde_json::to_string(items).unwrap_or_else(|_| "[]".into()),
            )),
            (None, Some(from)) => py_str(&scope.render(from)?),
            (None, None) => {
                return Err(EngineError::Other(format!(
                    "step `{}`: map needs items or from",
                    step.name
                )));
            }
        };
        let fields: Vec<String> = per_item
            .iter()
            .map(|(k, v)| format!("{}: {v}", py_str(k)))
            .collect();
        let _ = write!(
            out,
            "    {builder} = PythonOperator(\n        task_id={},\n        python_callable=couler_expand,\n        op_kwargs={{\"items\": {items}, \"fields\": {{{}}}}},\n        retries=0,\n    )\n",
            py_str(&format!("{}__items", step.name)),
            fields.join(", ")
        );
        if first == var {
            first = builder.clone();
        } else {
            let _ = writeln!(out, "    {first} >> {builder}");
        }
        if let Some(p) = map.parallelism {
            kwargs.push("max_active_tis_per_dagrun", p.to_string());
        }
        let _ = writeln!(out, "    {var} = {class}.partial(");
        kwargs.write(out);
        let _ = writeln!(out, "    ).expand_kwargs({builder}.output)");
    } else {
        let _ = writeln!(out, "    {var} = {class}(");
        kwargs.write(out);
        out.push_str("    )\n");
        if first != var {
            let _ = writeln!(out, "    {first} >> {var}");
        }
    }
    Ok(Emitted { first, last: var })
}

/// Retries, timeout and documentation, the same for every operator.
fn common(step: &Step, kwargs: &mut Kwargs) {
    match &step.retry {
        None => kwargs.push("retries", "0".into()),
        Some(retry) => {
            kwargs.push("retries", retry.limit.to_string());
            match &retry.backoff {
                None => kwargs.push("retry_delay", "timedelta(0)".into()),
                Some(b) => {
                    kwargs.push("retry_delay", seconds(b.duration.as_std()));
                    kwargs.push(
                        "retry_exponential_backoff",
                        format!("{}.0", b.factor.unwrap_or(2)),
                    );
                    if let Some(max) = b.max_duration {
                        kwargs.push("max_retry_delay", seconds(max.as_std()));
                    }
                }
            }
            if retry.on == couler_ir::RetryOn::Transient {
                kwargs.push("retry_policy", "COULER_TRANSIENT".into());
            }
        }
    }
    if let Some(t) = step.timeout {
        kwargs.push("execution_timeout", seconds(t.as_std()));
    }
}

pub(crate) fn seconds(d: std::time::Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("timedelta(seconds={})", d.as_secs())
    } else {
        format!("timedelta(seconds={})", d.as_secs_f64())
    }
}

/// What a container or script step runs: image, argv (command then args,
/// or interpreter), script source, env, working directory.
struct Runs<'s> {
    image: &'s str,
    argv: Vec<&'s str>,
    source: Option<&'s str>,
    env: &'s [EnvVar],
    working_dir: Option<&'s str>,
}

fn runs(step: &Step) -> Result<Runs<'_>, EngineError> {
    if let Some(c) = &step.container {
        Ok(Runs {
            image: &c.image,
            argv: c
                .command
                .iter()
                .chain(&c.args)
                .map(String::as_str)
                .collect(),
            source: None,
            env: &c.env,
            working_dir: c.working_dir.as_deref(),
        })
    } else if let Some(s) = &step.script {
        Ok(Runs {
            image: &s.image,
            argv: s.command.iter().map(String::as_str).collect(),
            source: Some(&s.source),
            env: &s.env,
            working_dir: s.working_dir.as_deref(),
        })
    } else {
        Err(unsupported(format!(
            "step `{}` runs neither a container nor a script",
            step.name
        )))
    }
}

fn py_dict(entries: &[(String, String)]) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{}: {v}", py_str(k)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// A KubernetesPodOperator: the step's container in a pod, wrapped in a
/// small shell script when it runs a script, has outputs someone reads, or
/// needs per-instance values outside its arguments.
fn pod(
    scope: &Scope<'_, '_>,
    kwargs: &mut Kwargs,
    per_item: &mut Vec<(&'static str, String)>,
) -> Result<(), EngineError> {
    let step = scope.step;
    let ctx = scope.ctx;
    let r = runs(step)?;
    let xcom = ctx.read.contains(step.name.as_str());
    kwargs.push("name", py_str(&step.name));
    kwargs.push("image", py_str(&scope.render(r.image)?));

    // Values handed to the wrapper as leading positional arguments.
    let mut lines = String::new();
    let mut leading: Vec<String> = Vec::new();
    let mut env: Vec<(String, String)> = Vec::new();
    let mut secrets: Vec<String> = Vec::new();
    for var in r.env {
        if let Some(secret) = &var.secret {
            let tenant = &ctx.run.tenant;
            secrets.push(format!(
                "Secret(\"env\", {}, {}, {})",
                py_str(&var.name),
                py_str(&secret_object(Namespace::Shared { tenant }, &secret.name)),
                py_str(&secret.key)
            ));
            continue;
        }
        let value = scope.render(var.value.as_deref().unwrap_or_default())?;
        if value.contains('\u{0}') {
            let _ = writeln!(lines, "export {}=\"$1\"; shift", var.name);
            leading.push(value);
        } else {
            env.push((var.name.clone(), py_str(&value)));
        }
    }
    let mut pod_spec_dir = None;
    if let Some(dir) = r.working_dir {
        if couler_ir::refs::has_references(dir) {
            lines.push_str("cd \"$1\" || exit 1; shift\n");
            leading.push(scope.render(dir)?);
        } else {
            pod_spec_dir = Some(dir);
        }
    }
    if let Some(source) = r.source {
        lines.push_str(
            "couler_script \"$1\" || exit 1; shift\nset -- \"$@\" \"$COULER_SCRIPT_FILE\"\n",
        );
        leading.push(scope.render(source)?);
    }
    let wrapped = !lines.is_empty() || xcom;
    let mut argv: Vec<String> = Vec::with_capacity(r.argv.len() + leading.len());
    argv.extend(leading);
    for a in &r.argv {
        argv.push(scope.render(a)?);
    }
    if wrapped {
        if r.argv.is_empty() {
            return Err(unsupported(format!(
                "step `{}` has no command: the wrapper that passes its outputs or script must start the image's entrypoint by name",
                step.name
            )));
        }
        if xcom {
            lines.push_str("couler_run \"$@\"\n");
            for p in step.outputs.iter().flat_map(|o| &o.parameters) {
                let _ = write!(
                    lines,
                    "couler_param {} {}",
                    sh_word(&p.name),
                    sh_word(&p.path)
                );
                if let Some(d) = &p.default {
                    let _ = write!(lines, " {}", base64(d.as_str().as_bytes()));
                }
                lines.push('\n');
            }
            lines.push_str("couler_push\n");
        } else {
            lines.push_str("exec \"$@\"\n");
        }
        kwargs.push(
            "cmds",
            format!(
                "[\"/bin/sh\", \"-c\", COULER_POD_SH + {}, \"couler\"]",
                py_str(&jinja_literal(&lines))
            ),
        );
    } else {
        // Unwrapped: the container's own command and args; a map step's
        // may both hold `{{item}}`, so both vary by instance.
        let split = step.container.as_ref().map_or(0, |c| c.command.len());
        let cmds: Vec<String> = argv.drain(..split).collect();
        if !cmds.is_empty() {
            kwargs.push_varying(per_item, scope.mapped, "cmds", py_list(&cmds));
        }
    }
    if !argv.is_empty() || scope.mapped {
        kwargs.push_varying(per_item, scope.mapped, "arguments", py_list(&argv));
    }
    if !env.is_empty() {
        kwargs.push("env_vars", py_dict(&env));
    }
    if !secrets.is_empty() {
        kwargs.push("secrets", format!("[{}]", secrets.join(", ")));
    }
    if let Some(res) = &step.resources {
        let mut requests = Vec::new();
        let mut limits = Vec::new();
        if let Some(cpu) = res.cpu {
            requests.push(("cpu".to_owned(), py_str(&cpu.to_string())));
        }
        if let Some(mem) = res.memory {
            requests.push(("memory".to_owned(), py_str(&mem.to_string())));
            limits.push(("memory".to_owned(), py_str(&mem.to_string())));
        }
        if let Some(gpu) = res.gpu {
            limits.push(("nvidia.com/gpu".to_owned(), py_str(&gpu.to_string())));
        }
        kwargs.push(
            "container_resources",
            format!(
                "k8s.V1ResourceRequirements(requests={}, limits={})",
                py_dict(&requests),
                py_dict(&limits)
            ),
        );
    }
    if let Some(h) = &step.hints {
        if !h.node_selector.is_empty() {
            let sel: Vec<(String, String)> = h
                .node_selector
                .iter()
                .map(|(k, v)| (k.clone(), py_str(v)))
                .collect();
            kwargs.push("node_selector", py_dict(&sel));
        }
        if !h.tolerations.is_empty() {
            let mut tols = Vec::new();
            for t in &h.tolerations {
                tols.push(toleration(&step.name, t)?);
            }
            kwargs.push("tolerations", format!("[{}]", tols.join(", ")));
        }
    }
    if let Some(dir) = pod_spec_dir {
        kwargs.push(
            "full_pod_spec",
            format!(
                "k8s.V1Pod(spec=k8s.V1PodSpec(containers=[k8s.V1Container(name=\"base\", working_dir={})]))",
                py_str(dir)
            ),
        );
    }
    let labels: Vec<(String, String)> = ctx
        .labels(&step.name)
        .into_iter()
        .map(|(k, v)| (k, py_str(&v)))
        .collect();
    kwargs.push("labels", py_dict(&labels));
    kwargs.push("do_xcom_push", if xcom { "True" } else { "False" }.into());
    if let Some(d) = &step.description {
        kwargs.push("doc_md", py_str(d));
    }
    Ok(())
}

/// A Kubernetes toleration (camelCase JSON) as a `k8s.V1Toleration`.
fn toleration(step: &str, t: &serde_json::Value) -> Result<String, EngineError> {
    let bad = |why: String| EngineError::Other(format!("step `{step}`: toleration {t}: {why}"));
    let object = t.as_object().ok_or_else(|| bad("not an object".into()))?;
    let mut args = Vec::new();
    for (k, v) in object {
        let key = match k.as_str() {
            "key" => "key",
            "operator" => "operator",
            "value" => "value",
            "effect" => "effect",
            "tolerationSeconds" => "toleration_seconds",
            other => return Err(bad(format!("unknown field {other:?}"))),
        };
        let value = match v {
            serde_json::Value::String(s) => py_str(s),
            serde_json::Value::Number(n) if n.is_i64() => n.to_string(),
            serde_json::Value::Null => "None".into(),
            other => return Err(bad(format!("unexpected value {other}"))),
        };
        args.push(format!("{key}={value}"));
    }
    Ok(format!("k8s.V1Toleration({})", args.join(", ")))
}

/// A BashOperator: the step's command on the worker, its argv, script and
/// environment passed through `env` so rendered values never meet the
/// shell parser; files live in the step's directory under the run's.
fn bash(
    scope: &Scope<'_, '_>,
    kwargs: &mut Kwargs,
    per_item: &mut Vec<(&'static str, String)>,
) -> Result<(), EngineError> {
    let step = scope.step;
    let ctx = scope.ctx;
    let r = runs(step)?;
    if r.argv.is_empty() {
        return Err(unsupported(format!(
            "step `{}` has no command: a BashOperator cannot start an image's entrypoint",
            step.name
        )));
    }
    let xcom = ctx.read.contains(step.name.as_str());
    let mut env: Vec<(String, String)> = vec![
        ("COULER_DATA".into(), "COULER_DATA".into()),
        ("COULER_RUN_DIR".into(), py_str("{{ couler_dir(ti) }}")),
        ("COULER_STEP_DIR".into(), py_str(&scope.step_dir())),
        ("COULER_ARGC".into(), py_str(&r.argv.len().to_string())),
    ];
    for (i, a) in r.argv.iter().enumerate() {
        env.push((format!("COULER_ARG_{i}"), py_str(&scope.render(a)?)));
    }
    if let Some(source) = r.source {
        env.push(("COULER_SCRIPT".into(), py_str(&scope.render(source)?)));
    }
    if let Some(dir) = r.working_dir {
        env.push(("COULER_CWD".into(), py_str(&scope.render(dir)?)));
    }
    let mut lines = String::new();
    for a in step.inputs.iter().flat_map(|i| &i.artifacts) {
        let Some(Ok(Ref::StepArtifact(s, name))) = sole_reference(&a.from) else {
            return Err(EngineError::Other(format!(
                "step `{}`: input artifact `{}` must come from {{{{steps.S.outputs.artifacts.A}}}}",
                step.name, a.name
            )));
        };
        let source = scope.artifact_source(s, name)?;
        let source = match source.strip_prefix("{{ couler_dir(ti) }}/") {
            Some(rel) => format!("\"$COULER_RUN_DIR\"/{}", sh_word(rel)),
            None => sh_word(&source),
        };
        let _ = writeln!(lines, "couler_in {} {source}", sh_word(&a.name));
    }
    for var in r.env {
        match &var.secret {
            Some(secret) => {
                let _ = writeln!(
                    lines,
                    "couler_secret {} {}",
                    var.name,
                    sh_word(&secret_file(&secret.name, &secret.key))
                );
            }
            None => env.push((
                var.name.clone(),
                py_str(&scope.render(var.value.as_deref().unwrap_or_default())?),
            )),
        }
    }
    lines.push_str("couler_run\n");
    for a in step.outputs.iter().flat_map(|o| &o.artifacts) {
        let _ = writeln!(lines, "couler_artifact {}", sh_word(&a.name));
    }
    if xcom {
        for p in step.outputs.iter().flat_map(|o| &o.parameters) {
            let _ = write!(lines, "couler_param {}", sh_word(&p.name));
            if let Some(d) = &p.default {
                let _ = write!(lines, " {}", base64(d.as_str().as_bytes()));
            }
            lines.push('\n');
        }
        lines.push_str("couler_push\n");
    }
    kwargs.push(
        "bash_command",
        format!("COULER_BASH + {}", py_str(&jinja_literal(&lines))),
    );
    kwargs.push_varying(per_item, scope.mapped, "env", py_dict(&env));
    kwargs.push("append_env", "True".into());
    kwargs.push("skip_on_exit_code", "None".into());
    kwargs.push("do_xcom_push", if xcom { "True" } else { "False" }.into());
    if xcom {
        kwargs.push("output_processor", "json.loads".into());
    }
    kwargs.push("doc_md", py_str(&recorded(step, r.image)));
    Ok(())
}

/// What a BashOperator records but cannot use: image, resources, hints.
fn recorded(step: &Step, image: &str) -> String {
    let mut doc = String::new();
    if let Some(d) = &step.description {
        doc.push_str(d);
        doc.push_str("\n\n");
    }
    let _ = write!(
        doc,
        "Runs on the worker; recorded, not used: image `{image}`"
    );
    if let Some(r) = &step.resources {
        let _ = write!(
            doc,
            ", resources {}",
            serde_json::to_string(r).unwrap_or_default()
        );
    }
    if let Some(h) = &step.hints {
        let _ = write!(
            doc,
            ", hints {}",
            serde_json::to_string(h).unwrap_or_default()
        );
    }
    doc.push('.');
    doc
}
