//! One LLM generation (Couler Algorithm 1): outline → retrieval → plan →
//! build and validate → write each step → repair → critique → regenerate,
//! within the rounds and the token budget. Every failure is a [`Failure`] whose text becomes
//! the offline fallback's reason.

use super::prompt::{self, Prompt};
use super::steps;
use super::wire::{self, Issue, WirePlan};
use super::{GenerateConfig, Request, Usage};
use crate::decompose::Decomposition;
use crate::llm::{ChatRequest, LlmClient, LlmError};
use crate::offline::{OfflinePlanner, Plan, PlanError, PlanOptions};
use crate::safety::{Warning, WarningCode};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt;

/// Prompt tokens are estimated as bytes / this (conservative for English).
const BYTES_PER_TOKEN: usize = 3;
/// A call is not started with less room than this for its answer.
const MIN_COMPLETION_TOKENS: u64 = 64;
const CRITIQUE_TOKENS: u32 = 160;

/// Why the LLM path gave up.
#[derive(Debug)]
pub(crate) enum Failure {
    Llm(LlmError),
    Unusable { answers: u32, last: Vec<Issue> },
    Budget { used: u64, limit: u64 },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Llm(e) => write!(f, "the LLM failed: {e}"),
            Failure::Unusable { answers, last } => {
                let shown: Vec<String> = last.iter().take(3).map(ToString::to_string).collect();
                write!(
                    f,
                    "the LLM gave no usable answer in {answers} tries (last problems: {})",
                    shown.join("; ")
                )
            }
            Failure::Budget { used, limit } => write!(
                f,
                "the token budget ran out ({used} of {limit} tokens spent)"
            ),
        }
    }
}

/// A built draft and the critique's verdict on it.
pub(crate) struct Candidate {
    pub plan: Plan,
    pub dropped: Vec<Warning>,
    pub score: Option<f64>,
    pub notes: Vec<String>,
}

#[derive(Deserialize)]
struct Critique {
    score: f64,
    #[serde(default)]
    issues: Vec<String>,
}

/// What a session reads; never changes during it.
pub(crate) struct Context<'a> {
    pub llm: &'a LlmClient,
    pub config: &'a GenerateConfig,
    pub request: &'a Request<'a>,
    pub planner: OfflinePlanner,
    pub options: PlanOptions,
    /// The description with unsafe sentences and secret values blanked.
    pub description: String,
    pub named_secrets: Vec<String>,
    /// What screening the description found.
    pub screen_warnings: Vec<Warning>,
}

/// Tokens spent and the most that may be.
pub(crate) struct Meter {
    pub usage: Usage,
    pub stats: super::Stats,
    limit: u64,
}

impl Meter {
    pub fn new(config: &GenerateConfig, tokens_left: Option<u64>) -> Meter {
        Meter {
            usage: Usage::default(),
            stats: super::Stats::default(),
            limit: tokens_left.map_or(config.max_tokens, |left| left.min(config.max_tokens)),
        }
    }

    /// One call, or [`Failure::Budget`] when its prompt and a useful answer
    /// would not fit in what is left.
    async fn ask(
        &mut self,
        llm: &LlmClient,
        prompt: &Prompt,
        schema: &Value,
        max_completion: u32,
        temperature: f32,
    ) -> Result<String, Failure> {
        let used = self.usage.total();
        let estimate = ((prompt.system.len() + prompt.user.len()) / BYTES_PER_TOKEN) as u64;
        let room = self.limit.saturating_sub(used).saturating_sub(estimate);
        if room < MIN_COMPLETION_TOKENS.min(u64::from(max_completion)) {
            return Err(Failure::Budget {
                used,
                limit: self.limit,
            });
        }
        let request = ChatRequest {
            system: prompt.system.clone(),
            user: prompt.user.clone(),
            json_schema: Some(schema.clone()),
            max_tokens: Some(room.min(u64::from(max_completion)) as u32),
            temperature: Some(temperature),
        };
        self.stats.calls += 1;
        let answer = llm.chat(&request).await.map_err(Failure::Llm)?;
        self.usage.prompt_tokens += answer.prompt_tokens;
        self.usage.completion_tokens += answer.completion_tokens;
        Ok(answer.content)
    }
}

/// Asks, checks, and asks again with the problems, up to `max_rounds`
/// repairs.
pub(crate) async fn converse<T>(
    cx: &Context<'_>,
    meter: &mut Meter,
    first: Prompt,
    schema: &Value,
    temperature: f32,
    check: impl Fn(&str) -> Result<T, Vec<Issue>>,
) -> Result<T, Failure> {
    let mut prompt = first.clone();
    let mut answers = 0;
    loop {
        let answer = meter
            .ask(
                cx.llm,
                &prompt,
                schema,
                cx.config.max_completion_tokens,
                temperature,
            )
            .await?;
        answers += 1;
        match check(&answer) {
            Ok(value) => return Ok(value),
            Err(issues) if answers > cx.config.max_rounds => {
                return Err(Failure::Unusable {
                    answers,
                    last: issues,
                });
            }
            Err(issues) => {
                meter.stats.repairs += 1;
                tracing::debug!(
                    round = answers,
                    problems = issues.len(),
                    "llm answer needs repair"
                );
                prompt = prompt::repair(&first, &answer, &issues);
            }
        }
    }
}

impl<'a> Context<'a> {
    /// An answer → a validated workflow, or what is wrong with it.
    fn build(&self, answer: &str) -> Result<(Plan, Vec<Warning>), Vec<Issue>> {
        let plan = wire::parse(answer)?;
        let checked = wire::check(&plan, self.request.library, &self.named_secrets)?;
        let built = self
            .planner
            .build(checked.decomposition, &self.description, &self.options)
            .map_err(build_issues)?;
        Ok((built, checked.warnings))
    }

    /// An outline answer → its decomposition (kinds and words only).
    fn outline(&self, answer: &str) -> Result<(WirePlan, Decomposition), Vec<Issue>> {
        let plan = wire::parse(answer)?;
        let checked = wire::check(&plan, self.request.library, &self.named_secrets)?;
        Ok((plan, checked.decomposition))
    }
}

fn build_issues(error: PlanError) -> Vec<Issue> {
    match error {
        PlanError::NotUnderstood { unknown, .. } => unknown
            .into_iter()
            .map(|u| Issue::new("/stages", format!("task {:?}: {}", u.text, u.reason)))
            .collect(),
        PlanError::Empty { .. } => vec![Issue::new("/stages", "give at least one task")],
        PlanError::Invalid(problems) => problems
            .iter()
            .map(|p| Issue::new(format!("workflow{}", p.path), p.message.clone()))
            .collect(),
        other => vec![Issue::new("", other.to_string())],
    }
}

/// A first draft: outline, then plan with references, then critique and
/// bounded regeneration. Returns the best candidate seen.
pub(crate) async fn generate(cx: &Context<'_>, meter: &mut Meter) -> Result<Candidate, Failure> {
    let library = cx.request.library;
    // The offline planner's reading seeds the outline (its structure is
    // read from the sentence's shape); the LLM corrects it.
    let reading = cx.planner.decompose(&cx.description).ok().map(|(d, _)| d);
    let (outline, outlined) = converse(
        cx,
        meter,
        prompt::outline(library, &cx.description, reading.as_ref()),
        &wire::schema(library, false),
        0.0,
        |a| cx.outline(a),
    )
    .await?;
    let full = wire::schema(library, true);
    let ask = |notes: &[String]| {
        prompt::plan(
            library,
            cx.config.references,
            &cx.description,
            &outline,
            Some(&outlined),
            notes,
        )
    };
    calibrate(cx, meter, &full, ask, &cx.description, None).await
}

/// A revision of `previous` by the user's feedback.
pub(crate) async fn revise(
    cx: &Context<'_>,
    meter: &mut Meter,
    previous: &super::Draft,
    feedback: &str,
) -> Result<Candidate, Failure> {
    let library = cx.request.library;
    let full = wire::schema(library, true);
    let base = prompt::revise(
        library,
        cx.config.references,
        &cx.description,
        &previous.decomposition,
        &previous.workflow,
        feedback,
    );
    let ask = |notes: &[String]| {
        let mut p = Prompt {
            system: base.system.clone(),
            user: base.user.clone(),
        };
        if !notes.is_empty() {
            p.user
                .push_str("\nA reviewer found these faults in an earlier attempt:\n");
            for note in notes {
                p.user.push_str(&format!("- {note}\n"));
            }
        }
        p
    };
    let goal = format!("{} Then: {feedback}", cx.description.trim());
    calibrate(cx, meter, &full, ask, &goal, Some(previous)).await
}

/// Plan (with repairs) → write the steps → critique; below the baseline,
/// plan again with the critique's notes, at most `max_rounds` times. A
/// failure after a first valid draft ends the search with that draft, not
/// with the failure. A revision's steps start from the `previous` draft's.
async fn calibrate(
    cx: &Context<'_>,
    meter: &mut Meter,
    schema: &Value,
    ask: impl Fn(&[String]) -> Prompt,
    goal: &str,
    previous: Option<&super::Draft>,
) -> Result<Candidate, Failure> {
    let mut best: Option<Candidate> = None;
    let mut notes: Vec<String> = Vec::new();
    for round in 0..=cx.config.max_rounds {
        // Regenerations ask for a different answer, not the same one again.
        let temperature = if round == 0 { 0.0 } else { 0.7 };
        if round > 0 {
            meter.stats.regenerations += 1;
        }
        let built = converse(cx, meter, ask(&notes), schema, temperature, |a| cx.build(a)).await;
        let (mut plan, mut dropped) = match (built, &mut best) {
            (Ok(built), _) => built,
            (Err(failure), None) => return Err(failure),
            (Err(failure), Some(best)) => {
                best.plan.warnings.push(note(format!(
                    "regenerating the draft stopped: {failure}; the best earlier draft is kept"
                )));
                break;
            }
        };
        if cx.config.write_steps {
            dropped.extend(steps::write(cx, meter, &mut plan, goal, previous).await);
        }
        let mut candidate = Candidate {
            plan,
            dropped,
            score: None,
            notes: Vec::new(),
        };
        match critique(cx, meter, goal, &candidate.plan).await {
            Ok(verdict) => {
                candidate.score = Some(verdict.score);
                candidate.notes = verdict.issues;
            }
            Err(failure) => {
                candidate
                    .plan
                    .warnings
                    .push(note(format!("the draft was not scored: {failure}")));
                return Ok(candidate);
            }
        }
        let score = candidate.score.unwrap_or(0.0);
        tracing::debug!(round, score, "llm draft scored");
        notes = candidate.notes.clone();
        if best.as_ref().is_none_or(|b| b.score.unwrap_or(0.0) < score) {
            best = Some(candidate);
        }
        if score >= cx.config.baseline_score {
            break;
        }
    }
    let mut best = best.expect("the first round either returned or set a draft");
    if let Some(score) = best.score.filter(|s| *s < cx.config.baseline_score) {
        let mut message = format!(
            "the critique scored the best draft {score:.2}, below the baseline {:.2}",
            cx.config.baseline_score
        );
        if !best.notes.is_empty() {
            message.push_str(&format!(": {}", best.notes.join("; ")));
        }
        best.plan.warnings.push(note(message));
    }
    Ok(best)
}

async fn critique(
    cx: &Context<'_>,
    meter: &mut Meter,
    goal: &str,
    plan: &Plan,
) -> Result<Critique, Failure> {
    let schema = json!({
        "type": "object",
        "properties": {
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "issues": {
                "type": "array",
                "items": {"type": "string", "pattern": "^[A-Za-z0-9 ,.:;()/_+=%-]{1,100}$"},
                "maxItems": 4,
            },
        },
        "required": ["score", "issues"],
        "additionalProperties": false,
    });
    let prompt = prompt::critique(goal, &plan.explanations);
    let answer = meter
        .ask(cx.llm, &prompt, &schema, CRITIQUE_TOKENS, 0.0)
        .await?;
    let parsed: Result<Critique, _> = serde_json::from_str(answer.trim());
    match parsed {
        Ok(c) if c.score.is_finite() => Ok(Critique {
            score: c.score.clamp(0.0, 1.0),
            issues: c.issues,
        }),
        _ => Err(Failure::Unusable {
            answers: 1,
            last: vec![Issue::new("", "the critique is not {score, issues}")],
        }),
    }
}

fn note(message: String) -> Warning {
    Warning {
        code: WarningCode::Assumption,
        message,
        span: None,
    }
}
