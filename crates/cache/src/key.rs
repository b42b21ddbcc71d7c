//! Cache keys: a digest of everything that determines a step's outputs —
//! what runs (image, command, args, env values that are not secrets,
//! script source, job spec), the output declarations, the concrete values
//! of the upstream outputs it reads, the content digests of its input
//! artifacts, its conditions (`when`) with the values they read, and
//! `cache.version`. Never names, paths of earlier runs, run
//! ids or tenants; resources, retries and timeouts do not count.
//!
//! A key exists only when all of that is known: a step that reads an
//! upstream step whose outputs are not known yet (it has not run, or did
//! not come from the cache) has no key at plan time.

use couler_ir::refs::{Ref, Segment, segments};
use couler_ir::{CachePolicy, CacheScope, Step};
use couler_optimizer::StepOutputs;
use std::fmt;
use std::sync::LazyLock;

/// What a field of the encoding is.
#[derive(Clone, Copy)]
#[repr(u8)]
enum Tag {
    /// Shared across tenants (no value) or kept inside one (its id): no
    /// tenant id can pass for the shared scope.
    Shared = 1,
    Tenant,
    Kind,
    Framework,
    Replica,
    Count,
    Image,
    Command,
    Arg,
    Source,
    Workdir,
    Env,
    Value,
    Secret,
    SecretKey,
    Input,
    InputPath,
    InputDigest,
    OutParam,
    OutPath,
    OutDefault,
    OutArtifact,
    Version,
    When,
    Operator,
    Operand,
    /// A training-job role's own image, command and args (absent when the
    /// role runs the job's, so that such keys did not change).
    RoleImage,
    RoleCommand,
    RoleArg,
}

/// Tagged, length-prefixed fields (a tag byte, the length as LEB128, the
/// bytes), gathered and then hashed in one go: a step's fields are a few
/// hundred bytes, and hashing them piecemeal cost more than hashing them.
/// Each thread keeps one, so keying a big plan allocates no buffers.
#[derive(Default)]
struct Encoder {
    fields: Vec<u8>,
    /// A text field with its references resolved.
    resolved: String,
}

thread_local! {
    static ENCODER: std::cell::Cell<Encoder> = std::cell::Cell::default();
}

impl Encoder {
    fn field(&mut self, tag: Tag, value: &[u8]) {
        push_field(&mut self.fields, tag, value);
    }

    /// A text field, its references to upstream outputs replaced by their
    /// values (see [`resolve`]).
    fn text<'a>(
        &mut self,
        tag: Tag,
        s: &str,
        outputs_of: &impl Fn(&str) -> Option<&'a StepOutputs>,
    ) -> Result<(), NoKey> {
        if !couler_ir::refs::has_references(s) {
            self.field(tag, s.as_bytes());
            return Ok(());
        }
        self.resolved.clear();
        resolve(s, outputs_of, &mut self.resolved)?;
        push_field(&mut self.fields, tag, self.resolved.as_bytes());
        Ok(())
    }

    fn finish(&self) -> CacheKey {
        // A keyed hash under a key derived from the context once: one call,
        // no hasher state to set up per key.
        static KEY: LazyLock<[u8; 32]> = LazyLock::new(|| blake3::derive_key(CONTEXT, b""));
        CacheKey(*blake3::keyed_hash(&KEY, &self.fields).as_bytes())
    }
}

/// The keys' version: changed when the encoding changes, or the layout of
/// what the index stores under a key (`Entry::payload`), so that no entry
/// is read as another.
const CONTEXT: &str = "couler.dev 2026 cache key v3";

/// Appends a field: its tag, its length as LEB128, its bytes.
fn push_field(fields: &mut Vec<u8>, tag: Tag, value: &[u8]) {
    fields.push(tag as u8);
    let mut n = value.len();
    while n >= 0x80 {
        fields.push((n & 0x7f) as u8 | 0x80);
        n >>= 7;
    }
    fields.push(n as u8);
    fields.extend_from_slice(value);
}

/// A cache key: a BLAKE3 digest, named in hex wherever it is shown or
/// stored (Redis names and members, logs, API answers).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey(pub [u8; 32]);

impl CacheKey {
    /// The key in hex, without allocating.
    pub fn hex(&self) -> impl std::ops::Deref<Target = str> + use<> {
        blake3::Hash::from_bytes(self.0).to_hex()
    }
}

impl fmt::Display for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CacheKey({self})")
    }
}

/// As a Redis argument: its hex, as members of the index's sets name it.
impl redis::ToRedisArgs for CacheKey {
    fn write_redis_args<W: ?Sized + redis::RedisWrite>(&self, out: &mut W) {
        out.write_arg(self.hex().as_bytes());
    }
}

impl redis::ToSingleRedisArg for CacheKey {}

/// Who may reuse an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Any tenant that shares.
    Shared,
    /// Only this tenant (its `scope: tenant` steps, steps with secrets, or a
    /// tenant that opted out of sharing).
    Tenant(String),
}

/// Why a step has no key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoKey {
    /// `cache: {policy: off}`.
    Off,
    /// Fan-outs, loops and searches are not cached as a whole.
    Unsupported(&'static str),
    /// It reads outputs that are not known yet.
    Pending(String),
}

/// The scope a step's entries live in.
pub fn scope_of(step: &Step, tenant: &str, tenant_shares: bool) -> Scope {
    let private = step
        .cache
        .as_ref()
        .is_some_and(|c| c.scope == CacheScope::Tenant)
        || step.env().iter().any(|e| e.secret.is_some())
        || !tenant_shares;
    if private {
        Scope::Tenant(tenant.to_owned())
    } else {
        Scope::Shared
    }
}

/// The key of `step` (parameters already resolved) given the outputs of
/// the steps it reads.
pub fn key<'a>(
    step: &Step,
    scope: &Scope,
    outputs_of: impl Fn(&str) -> Option<&'a StepOutputs>,
) -> Result<CacheKey, NoKey> {
    if step
        .cache
        .as_ref()
        .is_some_and(|c| c.policy == CachePolicy::Off)
    {
        return Err(NoKey::Off);
    }
    if step.map.is_some() {
        return Err(NoKey::Unsupported("map"));
    }
    if step.repeat.is_some() {
        return Err(NoKey::Unsupported("while"));
    }
    if step.tune.is_some() {
        return Err(NoKey::Unsupported("tune"));
    }
    let mut h = ENCODER.take();
    h.fields.clear();
    let key = encode(&mut h, step, scope, &outputs_of).map(|()| h.finish());
    ENCODER.set(h);
    key
}

/// Encodes what determines the outputs of `step`: a length-prefixed,
/// tagged encoding, with no intermediate tree and no way for two different
/// specs to collide by concatenation.
fn encode<'a>(
    h: &mut Encoder,
    step: &Step,
    scope: &Scope,
    outputs_of: &impl Fn(&str) -> Option<&'a StepOutputs>,
) -> Result<(), NoKey> {
    match scope {
        Scope::Shared => h.field(Tag::Shared, b""),
        Scope::Tenant(t) => h.field(Tag::Tenant, t.as_bytes()),
    }
    let (image, command, args, env, working_dir, source) = if let Some(c) = &step.container {
        h.field(Tag::Kind, b"container");
        (
            &c.image,
            &c.command,
            &c.args[..],
            &c.env,
            &c.working_dir,
            None,
        )
    } else if let Some(s) = &step.script {
        h.field(Tag::Kind, b"script");
        (
            &s.image,
            &s.command,
            &[][..],
            &s.env,
            &s.working_dir,
            Some(&s.source),
        )
    } else if let Some(j) = &step.job {
        h.field(Tag::Kind, b"job");
        h.field(Tag::Framework, format!("{:?}", j.framework).as_bytes());
        for (role, r) in &j.replicas {
            h.field(Tag::Replica, role.as_bytes());
            h.field(Tag::Count, &r.count.to_le_bytes());
            if let Some(image) = &r.image {
                h.field(Tag::RoleImage, image.as_bytes());
            }
            for c in &r.command {
                h.text(Tag::RoleCommand, c, outputs_of)?;
            }
            for a in &r.args {
                h.text(Tag::RoleArg, a, outputs_of)?;
            }
        }
        (
            &j.image,
            &j.command,
            &j.args[..],
            &j.env,
            &j.working_dir,
            None,
        )
    } else {
        return Err(NoKey::Unsupported("no body"));
    };
    h.field(Tag::Image, image.as_bytes());
    for c in command {
        h.text(Tag::Command, c, outputs_of)?;
    }
    for a in args {
        h.text(Tag::Arg, a, outputs_of)?;
    }
    if let Some(src) = source {
        h.text(Tag::Source, src, outputs_of)?;
    }
    if let Some(dir) = working_dir {
        h.text(Tag::Workdir, dir, outputs_of)?;
    }
    // By name, so that reordering env vars keeps the key; most lists are
    // short and already sorted.
    let sorted: Vec<&couler_ir::EnvVar>;
    let vars: &mut dyn Iterator<Item = &couler_ir::EnvVar> =
        if env.is_sorted_by(|a, b| a.name <= b.name) {
            &mut env.iter()
        } else {
            sorted = {
                let mut v: Vec<_> = env.iter().collect();
                v.sort_by(|a, b| a.name.cmp(&b.name));
                v
            };
            &mut sorted.iter().copied()
        };
    for e in vars {
        h.field(Tag::Env, e.name.as_bytes());
        match (&e.value, &e.secret) {
            (Some(v), _) => h.text(Tag::Value, v, outputs_of)?,
            // The secret's name, never its value.
            (None, Some(secret)) => {
                h.field(Tag::Secret, secret.name.as_bytes());
                h.field(Tag::SecretKey, secret.key.as_bytes());
            }
            (None, None) => {}
        }
    }
    for a in step.inputs.iter().flat_map(|i| &i.artifacts) {
        let Some(Ok(Ref::StepArtifact(from, name))) = couler_ir::refs::sole_reference(&a.from)
        else {
            return Err(NoKey::Pending(a.from.clone()));
        };
        let digest = outputs_of(from)
            .and_then(|o| o.artifacts.get(name))
            .ok_or_else(|| NoKey::Pending(a.from.clone()))?;
        h.field(Tag::Input, a.name.as_bytes());
        h.field(Tag::InputPath, a.path.as_bytes());
        h.field(Tag::InputDigest, digest.digest.as_bytes());
    }
    for p in step.outputs.iter().flat_map(|o| &o.parameters) {
        h.field(Tag::OutParam, p.name.as_bytes());
        h.field(Tag::OutPath, p.path.as_bytes());
        if let Some(d) = &p.default {
            h.field(Tag::OutDefault, d.as_str().as_bytes());
        }
    }
    for a in step.outputs.iter().flat_map(|o| &o.artifacts) {
        h.field(Tag::OutArtifact, a.name.as_bytes());
        h.field(Tag::OutPath, a.path.as_bytes());
    }
    if let Some(v) = step.cache.as_ref().and_then(|c| c.version.as_deref()) {
        h.field(Tag::Version, v.as_bytes());
    }
    // Its conditions, resolved: an entry exists only for conditions that
    // held, so a step whose conditions do not hold now (it is to be
    // skipped) never hits, and one whose conditions read outputs not
    // known yet has no key before the run.
    for c in &step.when {
        h.text(Tag::When, &c.input, outputs_of)?;
        h.field(Tag::Operator, c.operator.to_string().as_bytes());
        for v in c.value.iter().chain(&c.values) {
            h.field(Tag::Operand, v.as_str().as_bytes());
        }
    }
    Ok(())
}

/// Writes `s` to `out` with references to upstream outputs replaced by
/// their values; path placeholders stay (they are not inputs).
fn resolve<'a>(
    s: &str,
    outputs_of: &impl Fn(&str) -> Option<&'a StepOutputs>,
    out: &mut String,
) -> Result<(), NoKey> {
    for seg in segments(s) {
        match seg {
            Ok(Segment::Text(t)) => out.push_str(t),
            Ok(Segment::Ref(r)) => match r {
                Ref::StepResult(step) => {
                    let v = outputs_of(step).and_then(|o| o.result.as_deref());
                    out.push_str(v.ok_or_else(|| NoKey::Pending(r.to_string()))?);
                }
                Ref::StepParameter(step, p) => {
                    let v = outputs_of(step).and_then(|o| o.parameters.get(p));
                    out.push_str(v.ok_or_else(|| NoKey::Pending(r.to_string()))?);
                }
                Ref::StepArtifact(step, a) => {
                    let v = outputs_of(step)
                        .and_then(|o| o.artifacts.get(a))
                        .map(|x| x.digest.as_str());
                    out.push_str(v.ok_or_else(|| NoKey::Pending(r.to_string()))?);
                }
                Ref::InputArtifactPath(_)
                | Ref::OutputParameterPath(_)
                | Ref::OutputArtifactPath(_)
                | Ref::WorkflowName => out.push_str(&r.to_string()),
                Ref::Item(_)
                | Ref::TrialParameter(_)
                | Ref::TrialBudget
                | Ref::WorkflowStatus
                | Ref::WorkflowParameter(_) => {
                    return Err(NoKey::Pending(r.to_string()));
                }
            },
            Err(e) => return Err(NoKey::Pending(e.to_string())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use couler_optimizer::ArtifactRef;
    use couler_optimizer::Named;

    fn step(yaml: &str) -> Step {
        let doc = format!(
            "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - name: up\n    container: {{image: a}}\n    outputs: {{parameters: [{{name: p, path: /tmp/p}}], artifacts: [{{name: data, path: /tmp/d}}]}}\n{yaml}"
        );
        couler_ir::load(&doc, couler_ir::Format::Yaml)
            .unwrap()
            .steps
            .pop()
            .unwrap()
    }

    fn outputs(p: &str, digest: &str) -> StepOutputs {
        StepOutputs {
            result: Some("hello".into()),
            parameters: Named::from_iter([("p".into(), p.into())]),
            artifacts: Named::from_iter([(
                "data".into(),
                ArtifactRef {
                    digest: digest.into(),
                    size: 1,
                    location: "file:///x".into(),
                },
            )]),
        }
    }

    const STEP: &str = "  - name: s\n    container: {image: py, args: ['--p={{steps.up.outputs.parameters.p}}']}\n    inputs: {artifacts: [{name: d, from: '{{steps.up.outputs.artifacts.data}}', path: /in}]}\n";

    #[test]
    fn keys_follow_inputs_not_names_or_resources() {
        let s = step(STEP);
        let o = outputs("1", "aa");
        let k = key(&s, &Scope::Shared, |_| Some(&o)).unwrap();
        // Renamed, with resources and retries: the same work, the same key.
        let renamed = step(&STEP.replace("name: s", "name: other").replace(
            "  - name: other\n",
            "  - name: other\n    resources: {cpu: 4}\n    retry: {limit: 3}\n    timeout: 1h\n",
        ));
        assert_eq!(key(&renamed, &Scope::Shared, |_| Some(&o)).unwrap(), k);
        // A different upstream value or artifact content: a different key.
        let o2 = outputs("2", "aa");
        assert_ne!(key(&s, &Scope::Shared, |_| Some(&o2)).unwrap(), k);
        let o3 = outputs("1", "bb");
        assert_ne!(key(&s, &Scope::Shared, |_| Some(&o3)).unwrap(), k);
        // cache.version and the tenant scope separate keys too.
        let versioned = step(&format!("{STEP}    cache: {{version: '2'}}\n"));
        assert_ne!(key(&versioned, &Scope::Shared, |_| Some(&o)).unwrap(), k);
        assert_ne!(
            key(&s, &Scope::Tenant("t".into()), |_| Some(&o)).unwrap(),
            k
        );
    }

    #[test]
    fn keys_stay_the_same_across_releases() {
        // Entries outlive deployments: a changed encoding would turn every
        // cached result into a miss. Change CONTEXT's version if it must.
        let s = step(&format!(
            "{}    cache: {{version: '2'}}\n",
            STEP.replace(
                "image: py,",
                "image: py, env: [{name: B, value: '1'}, {name: A, value: '2'}],"
            )
        ));
        let o = outputs("1", "aa");
        assert_eq!(
            key(&s, &Scope::Shared, |_| Some(&o)).unwrap().to_string(),
            "856f3f6a221ee1604fbc5c944adb898bef7784512afc5dc175785d0ce93dc8ce"
        );
    }

    #[test]
    fn unknown_upstream_outputs_mean_no_key_yet() {
        let s = step(STEP);
        assert!(matches!(
            key(&s, &Scope::Shared, |_| None),
            Err(NoKey::Pending(_))
        ));
        let off = step(&format!("{STEP}    cache: {{policy: off}}\n"));
        assert_eq!(key(&off, &Scope::Shared, |_| None), Err(NoKey::Off));
    }

    #[test]
    fn a_conditional_step_is_keyed_with_what_its_conditions_read() {
        let s = step(
            "  - name: s\n    depends: [up]\n    when: [{input: '{{steps.up.outputs.result}}', operator: eq, value: hello}]\n    container: {image: a}\n",
        );
        // Not before the step it reads has an outcome.
        assert!(matches!(
            key(&s, &Scope::Shared, |_| None),
            Err(NoKey::Pending(_))
        ));
        let held = outputs("1", "aa");
        let mut other = outputs("1", "aa");
        other.result = Some("bye".into());
        let k = key(&s, &Scope::Shared, |_| Some(&held)).unwrap();
        assert_ne!(key(&s, &Scope::Shared, |_| Some(&other)).unwrap(), k);
        // And not as the same step without the condition.
        let plain = step("  - name: s\n    depends: [up]\n    container: {image: a}\n");
        assert_ne!(key(&plain, &Scope::Shared, |_| Some(&held)).unwrap(), k);
    }

    #[test]
    fn secrets_and_tenant_scope_keep_entries_private() {
        let secret = step(
            "  - name: s\n    container: {image: a, env: [{name: T, secret: {name: s, key: k}}]}\n",
        );
        assert_eq!(scope_of(&secret, "t1", true), Scope::Tenant("t1".into()));
        let plain = step("  - name: s\n    container: {image: a}\n");
        assert_eq!(scope_of(&plain, "t1", true), Scope::Shared);
        assert_eq!(scope_of(&plain, "t1", false), Scope::Tenant("t1".into()));
    }
}
