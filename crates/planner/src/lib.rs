//! Planning a run: gather what the optimizer's pure passes need to know —
//! cache hits from the shared index, measured history of the same steps
//! from Postgres, an LLM's suggestions for `llm` searches — and run the
//! passes. The scheduler plans runs with it; the API explains plans with
//! it (without counting cache statistics).

use couler_cache::CacheIndex;
use couler_cache::plan::NotCacheable;
use couler_ir::{StepKind, Workflow};
use couler_nl::llm::{ChatRequest, LlmClient};
use couler_optimizer::split::Budget;
use couler_optimizer::{Facts, Pipeline, Plan, PlanError, ReuseStatus, StepOutputs, Usage, tune};
use couler_store::{Store, TenantId};
use std::collections::{BTreeMap, BTreeSet};
use tracing::Instrument;

/// Where facts come from.
pub struct Sources<'a> {
    pub store: &'a Store,
    /// The shared cache index; `None` plans without cache hits.
    pub cache: Option<&'a CacheIndex>,
    /// The configured LLM, for `llm` searches.
    pub llm: Option<&'a LlmClient>,
}

/// One planning request.
pub struct Request {
    pub tenant: TenantId,
    pub workflow: Workflow,
    pub parameters: BTreeMap<String, String>,
    /// Results an earlier attempt keeps (retry from failure).
    pub earlier: BTreeMap<String, (ReuseStatus, StepOutputs)>,
    /// Whether the tenant shares cache entries.
    pub share_cache: bool,
    /// Where the tenant's engine reads artifacts from
    /// (`couler_engines::reads_artifacts_from`).
    pub reads_artifacts: &'static [&'static str],
    /// Whether the engine reports where steps stored their artifacts
    /// (`EngineAdapter::records_artifacts`).
    pub records_artifacts: bool,
    /// The engine's and tenant's limits of one sub-workflow.
    pub split_budget: Budget,
}

/// A plan, and the cache hits it reuses: they count (in the tenant's
/// statistics and the entries' reuse scores) only when a run goes ahead
/// with them — [`Reuse::count`] — not when a plan is explained, nor when a
/// run planned again after waiting for another finds them once more.
pub struct Planned {
    pub plan: Plan,
    pub reuse: Reuse,
}

/// The most one submission to `engine` may hold: the tenant's own limits
/// over the engine's defaults. Kubernetes-based engines keep manifests well
/// under etcd's 1 MiB object limit and at the Couler paper's 200 steps;
/// Airflow slows with many tasks per DAG; the local engine has no limit.
pub fn split_budget(engine: &str, tenant: &couler_store::tenants::SplitBudget) -> Budget {
    let default = match engine {
        "argo" | "tekton" | "kfp" => Budget {
            max_steps: Some(200),
            max_bytes: Some(512 * 1024),
            max_pods: None,
        },
        "airflow" => Budget {
            max_steps: Some(200),
            ..Budget::default()
        },
        _ => Budget::default(),
    };
    Budget {
        max_steps: tenant.max_steps.or(default.max_steps),
        max_bytes: tenant.max_bytes.or(default.max_bytes),
        max_pods: tenant.max_pods.or(default.max_pods),
    }
}

/// History lookups stop here: beyond, a plan gets no resource advice.
const MAX_HISTORY_STEPS: usize = 5_000;
/// Measured runs considered per step.
const HISTORY_PER_STEP: i64 = 20;

/// Plans with every pass, one span per pass.
pub async fn plan(sources: &Sources<'_>, req: Request) -> Result<Planned, PlanError> {
    let passes = |name: &'static str, apply: &mut dyn FnMut() -> Result<(), PlanError>| {
        tracing::info_span!("pass", pass = name).in_scope(apply)
    };
    let mut earlier = req.earlier;
    if let Some(index) = sources.cache.filter(|_| !earlier.is_empty()) {
        forget_gone_artifacts(&req.workflow, &mut earlier, index).await;
    }
    let mut facts = Facts {
        parameters: req.parameters,
        earlier,
        split_budget: req.split_budget,
        engine_loses_artifacts: !req.records_artifacts,
        ..Default::default()
    };
    facts.tune_answers = suggestions(sources.llm, &req.workflow).await;
    let mut plan = Pipeline::before_lookup().plan(req.workflow, &facts, passes)?;
    let tenant = req.tenant.to_string();
    let mut reuse = Reuse::none(&tenant, &plan);
    if let Some(index) = sources.cache {
        let asker = couler_cache::plan::Asker {
            tenant: &tenant,
            shares: req.share_cache,
            reads: req.reads_artifacts,
        };
        let found = cache_hits(&plan, asker, index).await?;
        facts.cache_hits = found.hits;
        facts.cache_not_needed = found.not_needed;
        facts.cache_pending = found.pending;
        reuse = found.reuse;
    }
    facts.history = history(sources.store, req.tenant, &plan).await;
    Pipeline::after_lookup().apply(&mut plan, &facts, passes)?;
    Ok(Planned { plan, reuse })
}

/// Retry from failure: an artifact of a kept result that is gone from its
/// store loses its location, as one the engine never recorded, so that a
/// step that runs again and reads it runs its producer again too (else it
/// would fail on every retry). Only artifacts that steps which will run
/// read are asked about, level by level as producers join them.
async fn forget_gone_artifacts(
    workflow: &Workflow,
    earlier: &mut BTreeMap<String, (ReuseStatus, StepOutputs)>,
    index: &CacheIndex,
) {
    let reads = workflow.artifact_reads();
    let name = |i: usize| workflow.steps[i].name.as_str();
    let mut runs: BTreeSet<usize> = (0..workflow.steps.len())
        .filter(|&i| !earlier.contains_key(name(i)))
        .collect();
    let mut asked = BTreeSet::new();
    loop {
        let ask: Vec<(usize, &str, String)> = (reads.iter())
            .filter(|r| runs.contains(&r.reader) && !runs.contains(&r.producer))
            .filter(|r| asked.insert((r.producer, r.artifact.as_str())))
            .filter_map(|r| {
                let (_, outputs) = earlier.get(name(r.producer))?;
                let at = &outputs.artifacts.get(&r.artifact)?.location;
                (!at.is_empty()).then(|| (r.producer, r.artifact.as_str(), at.clone()))
            })
            .collect();
        if ask.is_empty() {
            return;
        }
        let locations: Vec<&str> = ask.iter().map(|(_, _, at)| at.as_str()).collect();
        let there = index.stores().exist(&locations).await;
        for ((producer, artifact, _), there) in ask.iter().zip(there) {
            if there {
                continue;
            }
            tracing::info!(
                step = name(*producer),
                artifact,
                "a kept step's artifact is gone: the step runs again"
            );
            if let Some(a) = earlier
                .get_mut(name(*producer))
                .and_then(|(_, outputs)| outputs.artifacts.get_mut(*artifact))
            {
                a.location.clear();
            }
            runs.insert(*producer);
        }
    }
}

/// What the cache index said of a plan's steps.
#[derive(Debug)]
pub struct Found {
    /// The outputs of each hit by step name, with why it was reused.
    pub hits: BTreeMap<String, (StepOutputs, String)>,
    /// Steps that need not run (computed before, read by nothing that
    /// runs): their recorded outputs, and why.
    pub not_needed: BTreeMap<String, (StepOutputs, String)>,
    /// Steps not keyed before the run only because a step they read runs.
    pub pending: BTreeSet<String>,
    /// The hits, to count once a run goes ahead with them.
    pub reuse: Reuse,
}

/// Cache hits a plan reuses, not yet counted.
#[derive(Debug)]
#[must_use = "hits count only when a run goes ahead with them (`Reuse::count`)"]
pub struct Reuse {
    tenant: String,
    workflow: String,
    hits: Vec<(String, couler_cache::CacheKey, couler_cache::Cached)>,
    bytes: u64,
    saved_ms: u64,
    /// What the lookup said of each step it looked up (not of steps kept
    /// from an earlier attempt), in plan order.
    verdicts: Vec<(String, couler_cache::Verdict)>,
}

impl Reuse {
    fn none(tenant: &str, plan: &Plan) -> Reuse {
        Reuse {
            tenant: tenant.to_owned(),
            workflow: plan.workflow.name.clone(),
            hits: Vec::new(),
            bytes: 0,
            saved_ms: 0,
            verdicts: Vec::new(),
        }
    }

    /// What the lookup said of each step it looked up, in plan order (a
    /// later lookup's verdict on a step follows the earlier one): the
    /// scheduler records them for the run's page.
    pub fn verdicts(&self) -> &[(String, couler_cache::Verdict)] {
        &self.verdicts
    }

    /// These hits and a later lookup's of the same run (a stage looked up
    /// again after waiting keeps the hits it had found).
    pub fn and(mut self, later: Reuse) -> Reuse {
        self.hits.extend(later.hits);
        self.verdicts.extend(later.verdicts);
        self.bytes += later.bytes;
        self.saved_ms += later.saved_ms;
        self
    }

    /// Counts the hits in the tenant's statistics and the entries' reuse
    /// scores (misses count when a step runs and offers its result: the
    /// scheduler's `Writer`).
    pub async fn count(self, index: &CacheIndex) {
        let hits = self.hits.len() as u64;
        if hits == 0 && self.saved_ms == 0 {
            return;
        }
        index
            .record_hits(&self.tenant, hits, self.bytes, self.saved_ms)
            .await;
        let by_step: Vec<(&str, &couler_cache::CacheKey)> = (self.hits.iter())
            .map(|(step, key, _)| (step.as_str(), key))
            .collect();
        index
            .reused_by(&self.tenant, &self.workflow, &by_step)
            .await;
        let entries: Vec<_> = (self.hits.into_iter())
            .map(|(_, key, entry)| (key, entry))
            .collect();
        index.reused(&entries).await;
        metrics::counter!("couler_cache_hits_total").increment(hits);
    }
}

/// Looks every step up in the cache index (pipelined chunks in depth order,
/// see [`couler_cache::plan`]). Nothing counts until [`Reuse::count`].
pub async fn cache_hits(
    plan: &Plan,
    asker: couler_cache::plan::Asker<'_>,
    index: &CacheIndex,
) -> Result<Found, PlanError> {
    let dag = plan.dag()?;
    let lookups = couler_cache::plan::lookup_plan_with_dag(plan, &dag, asker, index)
        .instrument(tracing::info_span!("pass", pass = "cache-lookup"))
        .await;
    let mut found = Found {
        hits: BTreeMap::new(),
        not_needed: BTreeMap::new(),
        pending: BTreeSet::new(),
        reuse: Reuse::none(asker.tenant, plan),
    };
    let degraded = couler_cache::verdict::degraded(&lookups, index).await;
    let reuse = &mut found.reuse;
    for (step, lookup) in plan.steps.iter().zip(lookups) {
        if !matches!(lookup.outcome, couler_cache::plan::Outcome::Kept) {
            (reuse.verdicts).push((step.name.clone(), lookup.verdict(degraded)));
        }
        match lookup.outcome {
            couler_cache::plan::Outcome::Hit { key, entry } => {
                let why = format!(
                    "cache hit: its exact inputs were computed before ({} ms saved)",
                    entry.wall_ms
                );
                found
                    .hits
                    .insert(step.name.clone(), (entry.outputs.clone(), why));
                reuse.bytes += entry.size;
                reuse.saved_ms += entry.wall_ms;
                reuse.hits.push((step.name.clone(), key, *entry));
            }
            couler_cache::plan::Outcome::NotNeeded { record, .. } => {
                let why = format!(
                    "not run: computed before ({} ms), and every step that reads it is cached",
                    record.wall_ms
                );
                reuse.saved_ms += record.wall_ms;
                found
                    .not_needed
                    .insert(step.name.clone(), (record.outputs, why));
            }
            couler_cache::plan::Outcome::NotCacheable(NotCacheable::Pending {
                step: Some(_),
                ..
            }) => {
                found.pending.insert(step.name.clone());
            }
            _ => {}
        }
    }
    Ok(found)
}

/// Measured successes of each runnable step's family. History is advice:
/// when Postgres cannot answer, the plan goes without it.
async fn history(store: &Store, tenant: TenantId, plan: &Plan) -> BTreeMap<String, Vec<Usage>> {
    let asked: Vec<(String, Option<String>)> = plan
        .workflow
        .steps
        .iter()
        .zip(&plan.steps)
        .filter(|(s, p)| matches!(p.action, couler_optimizer::Action::Run) && s.tune.is_none())
        .map(|(s, _)| (s.name.clone(), family(s)))
        .collect();
    if asked.is_empty() || asked.len() > MAX_HISTORY_STEPS {
        return BTreeMap::new();
    }
    let rows = async {
        let mut tx = store.tenant(tenant).await?;
        let rows = couler_store::scheduling::history(
            &mut tx,
            tenant,
            &plan.workflow.name,
            &asked,
            HISTORY_PER_STEP,
        )
        .await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(rows)
    }
    .instrument(tracing::info_span!("pass", pass = "history"))
    .await;
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!(error = %e, "step history is unavailable; planning without resource advice");
            return BTreeMap::new();
        }
    };
    let mut history: BTreeMap<String, Vec<Usage>> = BTreeMap::new();
    for r in rows {
        history.entry(r.step).or_default().push(Usage {
            wall_ms: r.wall_ms.max(0) as u64,
            cpu_ms: r.cpu_ms.max(0) as u64,
            max_rss_kb: r.max_rss_kb.max(0) as u64,
        });
    }
    history
}

/// A step's family for resource history: the digest of its image and what
/// it runs (command, or a script's interpreter and source). Arguments and
/// environment are left out: the same program on other inputs is still the
/// same program.
pub fn family(step: &couler_ir::Step) -> Option<String> {
    let mut h = blake3::Hasher::new();
    let mut put = |s: &str| {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    match step.kind()? {
        StepKind::Container(c) => {
            put("container");
            put(&c.image);
            c.command.iter().for_each(|s| put(s));
        }
        StepKind::Script(s) => {
            put("script");
            put(&s.image);
            s.command.iter().for_each(|c| put(c));
            put(&s.source);
        }
        StepKind::Job(j) => {
            put("job");
            put(&j.image);
            j.command.iter().for_each(|s| put(s));
            for r in j.replicas.values() {
                r.image.iter().chain(&r.command).for_each(|s| put(s));
            }
        }
    }
    Some(h.finalize().to_hex()[..32].to_owned())
}

/// Asks the LLM for configurations of every `llm` search (absent when no
/// LLM is configured; an empty answer when the call failed, which the
/// search reports and replaces with random configurations).
async fn suggestions(llm: Option<&LlmClient>, workflow: &Workflow) -> BTreeMap<String, String> {
    let mut answers = BTreeMap::new();
    let Some(llm) = llm else { return answers };
    for step in &workflow.steps {
        let Some(spec) = step
            .tune
            .as_ref()
            .filter(|t| t.strategy == couler_ir::Strategy::Llm)
        else {
            continue;
        };
        let request = tune::llm_request(spec);
        let chat = ChatRequest {
            system: request.system,
            user: request.user,
            json_schema: Some(request.schema),
            max_tokens: Some(1024),
            temperature: Some(0.2),
        };
        let answer = match llm
            .chat(&chat)
            .instrument(tracing::info_span!("llm", step = %step.name))
            .await
        {
            Ok(response) => response.content,
            Err(e) => {
                tracing::warn!(step = %step.name, error = %e, "the LLM did not answer; the search falls back to random configurations");
                String::new()
            }
        };
        answers.insert(step.name.clone(), answer);
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::*;
    use couler_cache::{CacheKey, Cached};

    fn found(step: &str, key: u8, wall_ms: u64, size: u64) -> Reuse {
        let entry = Cached {
            outputs: StepOutputs::default(),
            wall_ms,
            cpu_ms: wall_ms,
            max_rss_kb: 0,
            size,
            reconstruction: 0.0,
            downstream: 0.0,
            created_at: 0,
        };
        Reuse {
            tenant: "tnt_a".into(),
            workflow: "train".into(),
            hits: vec![(step.into(), CacheKey([key; 32]), entry)],
            bytes: size,
            saved_ms: wall_ms,
            verdicts: vec![(step.into(), hit_verdict(key, wall_ms))],
        }
    }

    fn hit_verdict(key: u8, wall_ms: u64) -> couler_cache::Verdict {
        couler_cache::Verdict {
            status: couler_cache::VerdictStatus::Hit,
            reason: None,
            key: Some(CacheKey([key; 32])),
            saved_ms: Some(wall_ms),
            size: None,
        }
    }

    #[test]
    fn a_later_lookup_adds_its_hits_to_the_earlier_ones() {
        let both = found("prepare", 1, 60_000, 1 << 20).and(found("fit", 2, 600_000, 1 << 30));
        let steps: Vec<(&str, CacheKey)> =
            both.hits.iter().map(|(s, k, _)| (s.as_str(), *k)).collect();
        assert_eq!(
            steps,
            [("prepare", CacheKey([1; 32])), ("fit", CacheKey([2; 32]))]
        );
        assert_eq!(both.bytes, (1 << 20) + (1 << 30));
        assert_eq!(both.saved_ms, 660_000);
        // Verdicts follow in lookup order, for the run's page.
        assert_eq!(
            both.verdicts(),
            [
                ("prepare".to_owned(), hit_verdict(1, 60_000)),
                ("fit".to_owned(), hit_verdict(2, 600_000))
            ]
        );
        assert_eq!(
            (both.tenant.as_str(), both.workflow.as_str()),
            ("tnt_a", "train")
        );
    }
}
