//! Headings: a sentence that states the goal ("Fine-tune a 7B language
//! model with LoRA on our tickets: tokenize …, train …, evaluate …") is
//! context for the steps it introduces — their model family, data and
//! resources — not a step of its own.

use super::clause::{self, Clause};
use super::kinds::IMAGE_WORDS;
use super::lexicon::{self, integer_at};
use super::order::Group;
use super::parse::expand;
use super::scan::{Class, Segment, Sep, Token, find_any, phrase_at, tokenize};
use crate::decompose::{FanOut, FanOutValues, Span, Stage, Subtask, TaskKind};

/// A heading and where it is.
pub struct Heading {
    clause: Clause,
    span: Span,
}

/// Words that say a clause states a goal rather than a step.
const GOAL: &[&str] = &[
    "goal",
    "objective",
    "we want to",
    "i want to",
    "we need to",
    "i need to",
    "i'd like to",
    "we'd like to",
    "the task is",
    "build a",
    "build an",
    "create a",
    "create an",
    "set up a",
    "develop a",
    "design a",
    "implement a",
    "make a pipeline",
    "pipeline",
    "workflow",
    "目标",
    "我们要",
    "我们想",
    "我想",
    "构建",
    "搭建",
    "流水线",
    "工作流",
];

/// Nouns that name a whole piece of work when a kind word is one.
const TITLE: &[&str] = &["benchmark", "study", "experiment", "ablation", "comparison"];

/// Takes the heading off the front of `groups`: the first clause, when a
/// colon or a full stop ends it and two or more clauses follow, and it
/// states a goal or asks for a step of a kind the others ask for again.
pub fn heading(
    text: &str,
    mut groups: Vec<Group>,
    segs: &[Segment],
) -> (Vec<Group>, Option<Heading>) {
    if groups.len() < 2 {
        return (groups, None);
    }
    // "We want to fine-tune Llama-3-8B on our data. 1. tokenize …": a
    // sentence asking for no step, which the grouping put before the first
    // step, is the heading alone.
    if let [first, second, ..] = groups[0].segs[..]
        && segs[second].sep == Sep::Sentence
        && find_any(&segs[first].tokens, GOAL).is_some()
    {
        let c = clause::read(&segs[first].tokens);
        if c.kind.is_none() {
            groups[0].segs.remove(0);
            groups[0].sep = Sep::Start;
            let span = segs[first].span();
            return (groups, Some(Heading { clause: c, span }));
        }
    }
    let first = groups[0].tokens(segs);
    let c = clause::read(&first);
    let next = &groups[1];
    // ("财务对账流程：每天早上8点，1. …": a schedule between the colon and
    // the first step is no step.)
    let after_first = groups[0].segs.last().map_or(0, |&s| s + 1);
    let colon =
        segs[next.segs[0]].after_colon || segs.get(after_first).is_some_and(|s| s.after_colon);
    let sentence = next.sep == Sep::Sentence;
    // ("for each of the 20 episodes: transcribe with whisper; …": a step
    // after a colon inside the clause, run for each.)
    let inner_colon = groups[0].segs[1..]
        .iter()
        .any(|&k| segs[k].after_colon && clause::read(&segs[k].tokens).kind.is_some());
    if c.condition.is_some() || c.otherwise || c.always || inner_colon {
        return (groups, None);
    }
    // (A later step on a condition is no repetition: "train X; if the
    // recall is low, retrain it" trains twice.)
    let same = |kind: TaskKind| {
        groups[1..].iter().any(|g| {
            let later = clause::read(&g.tokens(segs));
            later.condition.is_none()
                && !later.otherwise
                && later
                    .kind
                    .is_some_and(|k| k == kind || (k.trains() && kind.trains()))
        })
    };
    // "用 LSTM 预测股票价格，训练时用 1 块 GPU": predicting with a named
    // model, which a later step trains, is what the workflow is for.
    let forecast =
        c.kind == Some(TaskKind::Predict) && !c.models.is_empty() && same(TaskKind::Train);
    // "用 YOLOv8 训练安全帽检测，…，先 sync 到本地，然后训练": what comes
    // before the first step says what the steps are for.
    let before_first = groups[1..]
        .iter()
        .take(3)
        .any(|g| opens_with_first(text, &segs[g.segs[0]]));
    let repeats = c.kind.is_some_and(|k| !c.generic && k.trains() && same(k));
    if before_first && (repeats || c.generic) && groups.len() >= 3 {
        return take(groups, segs, c);
    }
    if !forecast && (!(colon || sentence) || groups.len() < 3) {
        return (groups, None);
    }
    // "Forecasting benchmark on ETTh1. Train …": a title naming what the
    // steps make up.
    let title = lexicon::kind(&first)
        .is_some_and(|(_, at)| TITLE.iter().any(|w| first[at].is(w)) && !first[at].is_label());
    let goal = title || find_any(&first, GOAL).is_some();
    // (`repeats`: a training goal whose training is listed again,
    // "Fine-tune a 7B model: tokenize, train, evaluate".)
    // "ship v2 of the ranking model: - canary …, - watch …": what a colon
    // introduces is the steps; the words before it name what they are for.
    // "Weather forecasting with an LSTM. Load …, train …": a sentence that
    // names a model but no action the library knows says what it is about.
    let topic = c.generic && !c.models.is_empty();
    if !(goal || repeats || colon || topic || forecast) {
        return (groups, None);
    }
    take(groups, segs, c)
}

fn take(mut groups: Vec<Group>, segs: &[Segment], c: Clause) -> (Vec<Group>, Option<Heading>) {
    let span = groups[0].span(segs);
    groups.remove(0);
    groups[0].sep = Sep::Start;
    (groups, Some(Heading { clause: c, span }))
}

/// "First pull the tickets", "先 sync 到本地", "首先…": the segment says it
/// is the first step.
fn opens_with_first(text: &str, seg: &Segment) -> bool {
    if seg
        .tokens
        .first()
        .is_some_and(|t| t.is("先") || t.is("首先"))
    {
        return true;
    }
    let before = text[..seg.span().start]
        .trim_end_matches(|c: char| c.is_whitespace() || c == ',' || c == '，')
        .to_lowercase();
    ["first", "firstly", "首先", "first of all"]
        .iter()
        .any(|w| before.ends_with(w))
}

/// Gives the heading's model, resources, target and retries to the steps
/// of its kind (its model to training steps), or, when it asks for a step
/// none of them is, places that step where such steps go.
pub fn apply(text: &str, h: &Heading, stages: &mut Vec<Stage>) {
    let c = &h.clause;
    let kind = c.kind.filter(|_| !c.generic);
    let mut hit = false;
    for stage in stages.iter_mut() {
        let mut tasks = Vec::new();
        for t in std::mem::take(&mut stage.tasks) {
            let same = kind.is_some_and(|k| k == t.kind || (k.trains() && t.kind.trains()));
            if t.kind.trains() && t.model.is_none() && c.models.len() > 1 {
                hit |= same;
                for m in &c.models {
                    let mut one = with_context(t.clone(), c);
                    one.model = Some(m.clone());
                    one.name = None;
                    tasks.push(one);
                }
                continue;
            }
            if same || (t.kind.trains() && t.model.is_none() && !c.models.is_empty()) {
                hit |= same;
                tasks.push(with_context(t, c));
            } else {
                tasks.push(t);
            }
        }
        stage.tasks = tasks;
    }
    // Only training is a step the listed ones cannot do without ("train an
    // SVM: load, evaluate"); "forecast the load: read, train, evaluate"
    // states what the listed steps are for.
    let Some(kind) = kind.filter(|k| !hit && k.trains()) else {
        return;
    };
    let tasks = expand(text, c, kind, h.span);
    let at = stages
        .iter()
        .position(|s| {
            s.tasks
                .iter()
                .any(|t| t.kind.pipeline_order() > kind.pipeline_order())
        })
        .unwrap_or(stages.len());
    stages.insert(at, Stage { tasks });
}

fn with_context(mut t: Subtask, c: &Clause) -> Subtask {
    if t.kind.trains() && t.model.is_none() {
        t.model = c.models.first().cloned();
    }
    t.resources = t.resources.or(&c.resources);
    t.retry = t.retry.or(c.retry);
    if t.target.is_none() && !t.kind.trains() {
        t.target = c.target.clone();
    }
    if t.kind == TaskKind::Train && (c.distributed || t.resources.workers.is_some()) {
        t.kind = TaskKind::DistributedTrain;
    }
    t
}

/// A heading with no step of its own ("QLoRA on mistral-7b for our FAQ
/// bot: …"): its models and resources go to the training steps.
pub fn preamble(c: &Clause, stages: &mut [Stage]) {
    for t in stages.iter_mut().flat_map(|s| s.tasks.iter_mut()) {
        if t.kind.trains() {
            if t.model.is_none() {
                t.model = c.models.first().cloned();
            }
            t.resources = t.resources.or(&c.resources);
        }
    }
}

/// A model trained on images, with none named, is a CNN.
pub fn image_models(tokens: &[Token], stages: &mut [Stage]) {
    if find_any(tokens, IMAGE_WORDS).is_none() {
        return;
    }
    for t in stages.iter_mut().flat_map(|s| s.tasks.iter_mut()) {
        if t.kind == TaskKind::Train && t.model.is_none() {
            t.model = Some("cnn".into());
        }
    }
}

/// "做 10 折交叉验证：每一折训练一个 LightGBM", "5-fold CV: for each fold,
/// train …", "Random search over 20 sampled MLP configs: train each
/// config": a step run for each of the things counted in another clause.
///
/// A training that counts its own trials ("run 16 random-search trials of
/// XGBoost (max_depth between 2 and 10)", "… (all 6 combinations)") runs
/// that many, whatever values it lists.
pub fn each_counted(tokens: &[Token], stages: &mut [Stage]) {
    for t in stages.iter_mut().flat_map(|s| s.tasks.iter_mut()) {
        let words = tokenize(&t.text);
        let trials = ["trial", "combination", "config", "configuration"]
            .iter()
            .find_map(|noun| counted(&words, noun).map(|v| (*noun, v)))
            .or_else(|| runs_counted(&words).map(|v| ("trial", v)));
        if let Some((noun, v)) = trials.filter(|_| t.kind.trains())
            && t.fan_out.as_ref().is_none_or(|f| f.width() < v as usize)
        {
            t.fan_out = Some(FanOut {
                parameter: noun.into(),
                values: FanOutValues::Count(v),
            });
        }
        if t.fan_out.is_some() {
            continue;
        }
        let Some(noun) = each_noun(&words) else {
            continue;
        };
        if let Some(v) = counted(tokens, noun) {
            t.fan_out = Some(FanOut {
                parameter: noun.into(),
                values: FanOutValues::Count(v),
            });
        }
    }
}

/// What a step is run for each of, when it is something a run is fanned
/// out over ("each config", "every seed", "per fold", "每一折"); not
/// "every day" (a schedule) or "each epoch" (a loop inside the step).
fn each_noun(words: &[Token]) -> Option<&'static str> {
    const OVER: &[&str] = &[
        "fold",
        "config",
        "configuration",
        "trial",
        "seed",
        "shard",
        "partition",
        "chunk",
        "combination",
        "candidate",
        "variant",
        "setting",
    ];
    for (each, noun) in [
        (["每一折", "每折"], "fold"),
        (["每一份", "每份"], "shard"),
        (["每一组", "每组"], "config"),
    ] {
        if find_any(words, &each).is_some() {
            return Some(noun);
        }
    }
    words.windows(2).find_map(|w| {
        let each = ["each", "every", "per"].iter().any(|e| w[0].is(e));
        let noun = OVER.iter().find(|n| w[1].is(n))?;
        each.then_some(*noun)
    })
}

/// "一共 9 次训练": how many times the training runs.
fn runs_counted(words: &[Token]) -> Option<u32> {
    (0..words.len()).find_map(|i| {
        let (v, n) = integer_at(words, i, true).filter(|(v, _)| *v >= 2)?;
        let times = words.get(i + n).is_some_and(|t| t.is("次"));
        let runs = ["训练", "实验"]
            .iter()
            .any(|w| phrase_at(words, i + n + 1, w).is_some());
        (times && runs).then_some(v)
    })
}

/// The count of `noun` in "N noun(s)", with at most two words between
/// ("20 sampled MLP configs", "10-fold", "10 折", "32 份", "6 组参数").
fn counted(tokens: &[Token], noun: &str) -> Option<u32> {
    (0..tokens.len()).find_map(|i| {
        let (v, n) = integer_at(tokens, i, true).filter(|(v, _)| *v >= 2)?;
        let k = i + n + usize::from(tokens.get(i + n).is_some_and(|t| t.is("-")));
        let names = |t: &Token| {
            t.text.strip_suffix('s').unwrap_or(&t.text) == noun
                || (noun == "fold" && t.is("折"))
                || (noun == "shard" && t.is("份"))
                || (noun == "config" && t.is("组"))
        };
        // ("16 random-search trials".)
        let after = tokens.get(k..)?.iter().filter(|t| !t.is("-")).take(3);
        let mut words = after.take_while(|t| t.class == Class::Word || t.class == Class::Cjk);
        words.any(names).then_some(v)
    })
}
