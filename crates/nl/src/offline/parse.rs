//! Segments → decomposition: segments that ask for a subtask start a clause,
//! modifiers and list items join the clause before them, conditions join the
//! clause after them; clauses become stages, with parallel markers pulling
//! neighbouring clauses into one group.

use super::Unrecognized;
use super::clause::{self, Clause};
use super::context;
use super::lexicon;
use super::order::{Group, in_order};
use super::preread::{implicit_ifs, is_question, split_run_ons};
use super::scan::{Class, Segment, Sep, Token, find_any, segments, tokenize};
use crate::decompose::{
    ConditionSpec, Decomposition, ScheduleSpec, Span, Stage, Subtask, TaskKind,
};

/// What reading a description gave: the decomposition, what makes it
/// refuse, and what it read past (words that ask for no step).
pub struct Understood {
    pub decomposition: Decomposition,
    pub unknown: Vec<Unrecognized>,
    pub ignored: Vec<Unrecognized>,
}

/// Reads a (screened) description.
pub fn understand(text: &str) -> Understood {
    let tokens = tokenize(text);
    if is_question(text) {
        return Understood {
            decomposition: Decomposition::default(),
            unknown: vec![Unrecognized::new(
                text,
                Span::new(0, text.len()),
                "this is a question, not a workflow to build",
            )],
            ignored: Vec::new(),
        };
    }
    let segs = implicit_ifs(split_run_ons(segments(&tokens)));
    let mut unknown = Vec::new();
    let mut ignored = Vec::new();
    let mut d = Decomposition::default();
    let mut preamble: Option<Clause> = None;
    let groups = in_order(
        group(text, &segs, &mut d, &mut ignored, &mut preamble),
        &segs,
    );
    let (groups, heading) = context::heading(groups, &segs);
    let mut stages: Vec<Stage> = Vec::new();
    let mut meta: Vec<Meta> = Vec::new();
    let mut last_condition: Option<ConditionSpec> = None;
    let mut kind_modifiers: Vec<(TaskKind, Clause, Span)> = Vec::new();
    // "always X, and Y": both run at the end, whatever happens.
    let mut always = false;
    // "if … retrain and redeploy": both carry the condition.
    let mut active: Option<ConditionSpec> = None;
    // The verb of the step before, for "打印 X 和 Y".
    let mut last_verb: Option<(TaskKind, String)> = None;
    let mut chose = false;
    let mut last_negated = false;
    for g in groups {
        let merged = g.tokens(&segs);
        let span = g.span(&segs);
        let mut c = clause::read(&merged);
        // "else if it is above 0.8 …": one more branch, not the last one.
        if c.otherwise && c.condition.is_some() {
            c.otherwise = false;
        }
        // "if the accuracy is above 0.9 …, else if it is above 0.8 …",
        // "如果准确率大于 0.9 …，大于 0.8 …": a comparison naming no metric
        // after a branch is on the metric of that branch.
        if let (Some(cond), Some(last)) = (c.condition.as_mut(), &last_condition)
            && cond.metric == "score"
            && last.metric != "score"
            && g.sep <= Sep::Comma
            && meta.last().is_some_and(|m| m.branch)
            && lexicon::METRICS
                .iter()
                .all(|(_, spellings)| find_any(&merged, spellings).is_none())
        {
            cond.metric = last.metric.clone();
        }
        // "…; if it succeeded celebrate, otherwise cry": after an exit
        // handler, the outcome is the workflow's, and so are its branches.
        let on_outcome = c.otherwise
            || c.condition.as_ref().is_some_and(|x| {
                x.metric == "quality"
                    || (x.metric == "result"
                        && ["succeeded", "failed", "fail", "pass"].contains(&x.value.as_str()))
            });
        if g.sep >= Sep::Sequence && !(always && on_outcome) {
            always = false;
        }
        // "if it drifted, retrain and then redeploy": what follows "then" in
        // the branch's sentence is in the branch too; a new sentence ends it.
        if g.sep == Sep::Sentence {
            active = None;
        }
        if g.inherits
            && c.kind.is_none()
            && let Some((kind, verb)) = &last_verb
        {
            // "同时打印 hello2a 和 hello2b": the second is printed too.
            // (Named from the words before "side by side", "in parallel".)
            let end = find_any(&merged, lexicon::PARALLEL).map_or(merged.len(), |(i, _)| i);
            let words: Vec<String> = merged[..end]
                .iter()
                .filter(|t| {
                    matches!(
                        t.class,
                        super::scan::Class::Word | super::scan::Class::Number
                    )
                })
                .map(|t| t.text.clone())
                .take(3)
                .collect();
            let mut name = vec![verb.clone()];
            name.extend(words);
            c.kind = Some(*kind);
            c.generic = *kind == TaskKind::Shell;
            c.name = Some(super::action::slug(&name));
            c.parallel = true;
        }
        if let Some(bad) = c.bad_condition {
            ignored.push(Unrecognized::new(
                text,
                bad,
                "could not read this condition, so the step runs on a flag named from its words; say e.g. \"if the accuracy is above 0.9\"",
            ));
        }
        // "don't deploy or upload anything": the negation covers the list.
        if last_negated && g.sep == Sep::And {
            c.negated = true;
        }
        last_negated = c.negated;
        if c.negated && ((c.condition.is_none() && !c.otherwise) || c.kind.is_none()) {
            // What is not wanted is understood: no step, nothing ignored.
            continue;
        }
        if c.off_topic {
            unknown.push(Unrecognized::new(
                text,
                span,
                "this is nothing a workflow step can do",
            ));
            continue;
        }
        if !stages.is_empty()
            && let Some(a) = listed_step(&c, g.sep, &merged)
        {
            c.kind = Some(TaskKind::Shell);
            c.generic = true;
            c.name = Some(a.name);
            c.leftover.clear();
        }
        let Some(kind) = c.kind else {
            match c.refers_to {
                Some(k) => kind_modifiers.push((k, c, span)),
                None => ignored.push(Unrecognized::new(text, span, "no step matches these words")),
            }
            continue;
        };
        // "retry the training up to 2 times", "give the training 4 GPUs":
        // a step asked for before, named with "the", gets the modifiers.
        let named_before = (c.retry.is_some() || !c.resources.is_empty())
            && !c.generic
            && c.condition.is_none()
            && lexicon::kind_phrase(&merged).is_some_and(|(k, at, _)| {
                k == kind
                    && at > 0
                    && ["the", "this", "that", "its"].iter().any(|w| merged[at - 1].is(w))
            })
            && stages
                .iter()
                .flat_map(|s| s.tasks.iter())
                .any(|t| t.kind == kind || (kind.trains() && t.kind.trains()));
        if named_before {
            kind_modifiers.push((kind, c, span));
            continue;
        }
        // "run the chosen one" after a choice: the branches are that.
        if chose
            && c.generic
            && find_any(
                &merged,
                &["chosen", "selected", "that one", "it", "选中", "被选"],
            )
            .is_some()
            && g.sep < Sep::Sentence
        {
            continue;
        }
        chose = false;
        let mut tasks = expand(text, &c, kind, span);
        // "[extract_customers, extract_orders] >> build": task ids listed
        // together run side by side.
        let ids: Vec<&Token> = merged.iter().filter(|t| t.class != Class::Punct).collect();
        if ids.len() >= 2 && ids.iter().all(|t| t.is_task_id()) {
            tasks = ids
                .iter()
                .map(|id| {
                    let mut t = Subtask::new(TaskKind::Shell, id.text.clone());
                    t.name = Some(super::action::slug(std::slice::from_ref(&id.text)));
                    t.span = Some(id.span);
                    t
                })
                .collect();
        }
        if c.branches.len() >= 2 {
            // The choice, then each alternative if it was chosen.
            stages.push(Stage { tasks });
            meta.push(Meta {
                sep: g.sep,
                kind,
                open: false,
                branch: false,
            });
            let branches: Vec<Subtask> = c
                .branches
                .iter()
                .map(|b| {
                    let mut t = Subtask::new(TaskKind::Shell, b.clone());
                    t.name = Some(b.clone());
                    t.span = Some(span);
                    t.condition = Some(ConditionSpec {
                        metric: "result".into(),
                        operator: crate::decompose::Comparison::Eq,
                        value: b.clone(),
                    });
                    t
                })
                .collect();
            stages.push(Stage { tasks: branches });
            meta.push(Meta {
                sep: Sep::Sequence,
                kind: TaskKind::Shell,
                open: false,
                branch: true,
            });
            chose = true;
            continue;
        }
        // "打印 B 和 C": C is printed too.
        if c.generic
            && g.sep <= Sep::Comma
            && let Some(name) = c.name.as_deref().filter(|n| n.len() == 1)
            && let Some(verb) = stages
                .last()
                .and_then(|s| s.tasks.last())
                .and_then(|t| t.name.as_deref())
                .and_then(|n| n.strip_suffix(|ch: char| ch.is_ascii_lowercase()))
                .and_then(|n| n.strip_suffix('-'))
        {
            let verb = verb.to_owned();
            for t in &mut tasks {
                t.name = Some(format!("{verb}-{name}"));
            }
        }
        if let Some(t) = tasks.first() {
            let verb = super::action::step_name(t);
            let verb = verb.split('-').next().unwrap_or("").to_owned();
            last_verb = Some((kind, verb));
        }
        if c.always || always {
            always = true;
            d.on_exit.extend(tasks);
            continue;
        }
        // "else do nothing" asks for nothing.
        if c.condition.is_some() && !c.otherwise {
            active = c.condition.clone();
        } else if let Some(cond) = &active
            && !c.otherwise
            && g.sep <= Sep::Sequence
        {
            for t in &mut tasks {
                t.condition = Some(cond.clone());
            }
        }
        let c_condition = tasks.first().and_then(|t| t.condition.clone());
        if c.otherwise {
            // "…; otherwise Y": the latest condition before, even a few
            // clauses back.
            let previous = last_condition.clone().or_else(|| {
                stages
                    .iter()
                    .rev()
                    .flat_map(|s| s.tasks.iter())
                    .find_map(|t| t.condition.clone())
            });
            if previous.is_none() {
                ignored.push(Unrecognized::new(
                    text,
                    span,
                    "\"otherwise\" without an \"if\" before it; the step runs unconditionally",
                ));
                stages.push(Stage { tasks });
                meta.push(Meta {
                    sep: g.sep,
                    kind,
                    open: false,
                    branch: false,
                });
                continue;
            }
            // Beside the first step of the "if" branch, not after its last:
            // "if X register and deploy, otherwise email" emails instead of
            // registering.
            let at = previous.as_ref().and_then(|cond| {
                let carries =
                    |s: &Stage| s.tasks.iter().any(|t| t.condition.as_ref() == Some(cond));
                let last = stages.iter().rposition(carries)?;
                let first = (0..=last)
                    .rev()
                    .take_while(|&k| carries(&stages[k]))
                    .last()
                    .unwrap_or(last);
                Some(first)
            });
            let at = at.unwrap_or(stages.len().saturating_sub(1));
            match (&previous, stages.get_mut(at)) {
                (Some(cond), Some(stage)) => {
                    for mut t in tasks {
                        t.condition = Some(cond.negate());
                        stage.tasks.push(t);
                    }
                    if let Some(m) = meta.get_mut(at) {
                        m.branch = true;
                    }
                }
                _ => unknown.push(Unrecognized::new(
                    text,
                    span,
                    "\"otherwise\" without an \"if\" before it",
                )),
            }
            last_condition = None;
            continue;
        }
        // "if heads X, if tails Y": branches on one outcome share a stage.
        let sibling = c.condition.is_some()
            && meta.last().is_some_and(|m| m.branch)
            && stages.last().is_some_and(|s| {
                s.tasks.iter().all(|t| {
                    t.condition.as_ref().is_some_and(|x| {
                        Some(&x.metric) == c.condition.as_ref().map(|y| &y.metric)
                            && Some(x) != c.condition.as_ref()
                    })
                })
            });
        if sibling {
            stages
                .last_mut()
                .expect("a branch stage")
                .tasks
                .extend(tasks);
            last_condition = c.condition.clone();
            continue;
        }
        last_condition = c_condition.clone();
        let opens = c.parallel
            && (starts_with_parallel(&merged) || ends_with_parallel(&segs[*g.segs.last().expect("a group has segments")]));
        let closes = c.parallel && !opens;
        let this = Meta {
            sep: g.sep,
            kind,
            open: opens,
            branch: c_condition.is_some(),
        };
        let joins_open = meta
            .last()
            .is_some_and(|m| m.open && !m.branch && !this.branch && links(g.sep, m.kind, kind));
        if joins_open {
            stages
                .last_mut()
                .expect("meta follows stages")
                .tasks
                .extend(tasks);
            continue;
        }
        if closes && !this.branch {
            // Pull the clauses linked by "and" (or commas, same kind) into one group.
            let mut k = stages.len();
            let mut link = g.sep;
            while k > 0
                && !meta[k - 1].branch
                && !meta[k - 1].open
                && links(link, meta[k - 1].kind, kind)
            {
                k -= 1;
                link = meta[k].sep;
            }
            let mut joined: Vec<Subtask> = stages.drain(k..).flat_map(|s| s.tasks).collect();
            let first = meta.drain(k..).next();
            joined.extend(tasks);
            stages.push(Stage { tasks: joined });
            meta.push(Meta {
                sep: first.map_or(g.sep, |m| m.sep),
                ..this
            });
            continue;
        }
        stages.push(Stage { tasks });
        meta.push(this);
    }
    for (kind, c, span) in kind_modifiers {
        let mut hit = false;
        for t in stages.iter_mut().flat_map(|s| s.tasks.iter_mut()) {
            let same =
                t.kind == kind || (kind == TaskKind::Train && t.kind == TaskKind::DistributedTrain);
            if same {
                hit = true;
                t.resources = c.resources.or(&t.resources);
                t.retry = c.retry.or(t.retry);
                if t.kind == TaskKind::Train && c.resources.workers.is_some() {
                    t.kind = TaskKind::DistributedTrain;
                }
            }
        }
        if !hit {
            ignored.push(Unrecognized::new(
                text,
                span,
                &format!("this refers to a {kind} step, but none was asked for"),
            ));
        }
    }
    // Lettered steps and what each needs: the graph's layers.
    let lettered = stages
        .iter()
        .flat_map(|s| s.tasks.iter())
        .all(|t| t.kind == TaskKind::Shell && t.command.is_none());
    if lettered && let Some(layers) = super::dag::read(&tokens) {
        stages = layers;
    }
    if let Some(h) = heading {
        context::apply(text, &h, &mut stages);
    }
    if let Some(p) = &preamble {
        context::preamble(p, &mut stages);
    }
    context::image_models(&tokens, &mut stages);
    // Only "at the end" steps: they are the workflow.
    if stages.is_empty() && !d.on_exit.is_empty() {
        stages = std::mem::take(&mut d.on_exit)
            .into_iter()
            .map(|t| Stage { tasks: vec![t] })
            .collect();
    }
    inherit_models(&mut stages);
    d.stages = stages;
    Understood {
        decomposition: d,
        unknown,
        ignored,
    }
}

#[derive(Debug, Clone, Copy)]
struct Meta {
    /// The separator before the stage's first clause.
    sep: Sep,
    kind: TaskKind,
    /// A leading "both"/"并行": following "and" clauses join.
    open: bool,
    /// An `if` / `otherwise` stage.
    branch: bool,
}

fn links(sep: Sep, before: TaskKind, after: TaskKind) -> bool {
    sep == Sep::And || (sep == Sep::Comma && before == after)
}

/// "both clean … and extract …", "并行训练…": the marker opens the clause
/// (after at most one word); "C in parallel" closes it.
fn starts_with_parallel(tokens: &[Token]) -> bool {
    lexicon::PARALLEL
        .iter()
        .any(|p| super::scan::phrase_at(tokens, 0, p).is_some())
}

/// "load A and, at the same time, load B": a marker after "and", alone
/// in the last clause of a group, opens the group for what follows.
fn ends_with_parallel(last: &Segment) -> bool {
    let owned: Vec<Token> = last.tokens.iter().filter(|t| t.class != Class::Punct).cloned().collect();
    let forward = |markers: &[&str]| {
        markers
            .iter()
            .any(|p| super::scan::phrase_at(&owned, 0, p) == Some(owned.len()))
    };
    (matches!(last.sep, Sep::And | Sep::Comma)
        && forward(&["at the same time", "meanwhile", "simultaneously"]))
        // ("train A and, in parallel, B"; "train A and B, in parallel"
        // closes its group.)
        || (last.sep == Sep::And && forward(&["in parallel", "concurrently", "side by side"]))
}

/// Gathers segments into clauses; records schedules and whole-workflow
/// retries; reports segments that say nothing understood.
fn group(
    text: &str,
    segs: &[Segment],
    d: &mut Decomposition,
    ignored: &mut Vec<Unrecognized>,
    preamble: &mut Option<Clause>,
) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut prefix: Vec<usize> = Vec::new();
    let mut list_open = false;
    let mut goal = false;
    for (i, seg) in segs.iter().enumerate() {
        let c = clause::read(&seg.tokens);
        if let Some((cron, span)) = &c.schedule
            && d.schedule.is_none()
        {
            d.schedule = Some(ScheduleSpec {
                cron: cron.clone(),
                text: span.of(text).to_owned(),
            });
        }
        let next_after_colon = segs.get(i + 1).is_some_and(|n| n.after_colon);
        // "Goal: predict house prices. Steps: …": the goal is context.
        if seg.sep == Sep::Sentence || seg.sep == Sep::Start {
            goal = false;
        }
        if goal {
            if !c.models.is_empty() || !c.resources.is_empty() {
                *preamble = Some(c);
            }
            continue;
        }
        if c.kind.is_none()
            && next_after_colon
            && find_any(
                &seg.tokens,
                &["goal", "objective", "aim", "purpose", "目标", "目的"],
            )
            .is_some()
        {
            goal = true;
            continue;
        }
        let continues = seg.sep <= Sep::Comma && seg.sep != Sep::Start;
        // A value of the list ("eu", "asia"), not a step after it ("d.csv
        // count the lines").
        // ("alpine 3.6": the numbers are part of the value.)
        let value_only = seg
            .tokens
            .iter()
            .filter(|t| !matches!(t.class, Class::Punct | Class::Number) && !lexicon::is_filler(t))
            .count()
            <= 1;
        // What a colon introduces is a step, no value of the list before it.
        let list_item = list_open
            && continues
            && !seg.after_colon
            && (c.kind.is_none() || (c.generic && value_only));
        if c.kind.is_some() && !list_item && object_after_and(seg, &c, value_only, &groups, segs) {
            if let Some(g) = groups.last_mut() {
                g.segs.push(i);
            }
            continue;
        }
        if c.kind.is_some() && !list_item {
            let mut members = std::mem::take(&mut prefix);
            members.push(i);
            groups.push(Group {
                sep: segs[members[0]].sep,
                segs: members,
                inherits: false,
            });
            list_open = c.opens_list;
            continue;
        }

        // "QLoRA on mistral-7b for our FAQ bot: …", "推荐系统：…": a heading
        // without a step is context for the steps after it.
        // ("for each of the numbers 1, 2 and 3: double it": the fan-out is
        // the step's.)
        let shapes = c.fan_out.is_some() || c.condition.is_some() || c.retry.is_some();
        if c.kind.is_none() && next_after_colon && groups.is_empty() && prefix.is_empty() && !shapes
        {
            if !c.models.is_empty() || !c.resources.is_empty() {
                *preamble = Some(c);
            }
            continue;
        }
        // "并行执行两个任务：…", "regardless of the outcome, print …": what
        // the marker says is about the steps after it.
        let next_in_sentence = segs.get(i + 1).is_some_and(|n| n.sep < Sep::Sentence);
        // "Next, at the same time, run X and say Y": a marker that opens
        // its sentence's clause is about what follows it.
        let opens = c.parallel
            && c.leftover.is_empty()
            && next_in_sentence
            && (seg.sep >= Sep::Sequence || seg.sep == Sep::Start);
        if c.kind.is_none()
            && ((c.parallel && next_after_colon) || (c.always && next_in_sentence) || opens)
        {
            prefix.push(i);
            continue;
        }
        // "同时打印 hello2a 和 hello2b": a bare object the step before acts on.
        let only_parallel = c.is_modifier()
            && c.models.is_empty()
            && c.resources.is_empty()
            && c.condition.is_none()
            && c.fan_out.is_none()
            && c.retry.is_none()
            && !c.always;
        let bare = c.kind.is_none()
            && (!c.is_modifier() || only_parallel)
            && !c.leftover.is_empty()
            && seg.sep == Sep::And
            && prefix.is_empty()
            && groups.last().is_some_and(|g| {
                let b = clause::read(&g.tokens(segs));
                (b.parallel || c.parallel)
                    && b.models.is_empty()
                    && !b.kind.is_some_and(|k| k.trains())
            });
        if bare {
            groups.push(Group {
                sep: seg.sep,
                segs: vec![i],
                inherits: true,
            });
            continue;
        }
        if c.kind.is_none() && (c.condition_first || (c.otherwise && c.leftover.is_empty())) {
            prefix.push(i);
            continue;
        }
        if c.kind.is_none() && c.opens_list {
            match groups.last_mut() {
                Some(g) if prefix.is_empty() && continues => g.segs.push(i),
                _ => prefix.push(i),
            }
            list_open = true;
            continue;
        }
        if !list_item {
            list_open = false;
        }
        if c.retry.is_some() && (c.retry_all || seg.sep >= Sep::Sequence || groups.is_empty()) {
            d.retry = c.retry;
            continue;
        }
        let words = !c.leftover.is_empty();
        if c.refers_to.is_some() && c.kind.is_none() {
            groups.push(Group {
                sep: seg.sep,
                segs: vec![i],
                inherits: false,
            });
            continue;
        }
        // "用4块GPU和32GB内存训练": a modifier "and" a step: it belongs to the step.
        let before_step = segs.get(i + 1).is_some_and(|next| {
            next.sep == Sep::And && c.models.is_empty() && clause::read(&next.tokens).kind.is_some()
        });
        if c.is_modifier() && before_step {
            prefix.push(i);
            continue;
        }
        if c.is_modifier() || list_item || (words && continues && continuation(seg)) {
            match groups.last_mut() {
                Some(g) if prefix.is_empty() => g.segs.push(i),
                _ => prefix.push(i),
            }
            continue;
        }
        if c.schedule.is_some() && !words {
            continue;
        }
        if !groups.is_empty() && listed_step(&c, seg.sep, &seg.tokens).is_some() {
            groups.push(Group {
                sep: seg.sep,
                segs: vec![i],
                inherits: false,
            });
            continue;
        }
        if words {
            let span = c
                .leftover
                .iter()
                .copied()
                .reduce(Span::join)
                .unwrap_or(seg.span());
            ignored.push(Unrecognized::new(text, span, "no step matches these words"));
        }
    }
    for i in prefix {
        let c = clause::read(&segs[i].tokens);
        if c.condition.is_some() || c.otherwise {
            ignored.push(Unrecognized::new(
                text,
                segs[i].span(),
                "a condition with no step after it",
            ));
        } else if let Some(g) = groups.last_mut() {
            g.segs.push(i);
        } else if c.is_modifier() {
            ignored.push(Unrecognized::new(
                text,
                segs[i].span(),
                "this modifies a step, but no step was asked for",
            ));
        }
    }
    groups
}

/// "load the images and masks", "加载 CT 切片和标注": one word after "and"
/// that no step knows is more of what the step before acts on, when it is
/// a plural noun or what is loaded.
fn object_after_and(
    seg: &Segment,
    c: &Clause,
    value_only: bool,
    groups: &[Group],
    segs: &[Segment],
) -> bool {
    let Some(last) = groups.last() else {
        return false;
    };
    // ("加载 CT 切片和标注": a lone Chinese word after what is loaded, even
    // one that could be a verb.)
    let cjk_word = seg.tokens.len() <= 4 && seg.tokens.iter().all(|t| t.class == Class::Cjk);
    if !((c.generic || cjk_word) && seg.sep == Sep::And) || seg.tokens.iter().any(Token::is_label) {
        return false;
    }
    let b = clause::read(&last.tokens(segs));
    if b.generic || b.kind.is_none() {
        return false;
    }
    // "训练 CNN 和 ViT 两个分类模型": one more model to train.
    if !c.models.is_empty() && b.kind.is_some_and(TaskKind::trains) {
        return true;
    }
    if cjk_word {
        return b.kind == Some(TaskKind::Load);
    }
    if !value_only {
        return false;
    }
    let plural = seg.tokens.iter().any(|t| {
        t.class == Class::Word
            && t.text.len() > 3
            && t.text.ends_with('s')
            && !super::action::is_verb(&t.text)
    });
    plural || b.kind == Some(TaskKind::Load)
}

/// "train catboost …; if the recall is low, retrain it": a later training
/// step that names no model trains the one before.
fn inherit_models(stages: &mut [Stage]) {
    let mut last: Option<String> = None;
    for t in stages.iter_mut().flat_map(|s| s.tasks.iter_mut()) {
        if !t.kind.trains() {
            continue;
        }
        match &t.model {
            Some(m) => last = Some(m.clone()),
            None => t.model.clone_from(&last),
        }
    }
}

/// A segment that continues a noun phrase: "…, a GRU", "… and its labels".
fn continuation(seg: &Segment) -> bool {
    let Some(first) = seg.tokens.first() else {
        return false;
    };
    match first.class {
        Class::Number | Class::Url | Class::Code => true,
        Class::Cjk => seg.sep == Sep::And,
        _ => lexicon::CONTINUATION.iter().any(|w| first.is(w)),
    }
}

pub(crate) fn expand(text: &str, c: &Clause, kind: TaskKind, span: Span) -> Vec<Subtask> {
    let base = |model: Option<&String>| {
        let mut t = Subtask::new(kind, span.of(text).trim());
        t.span = Some(span);
        t.name = c.name.clone();
        t.model = model.cloned();
        t.target = c.target.clone();
        t.command = c.command.clone();
        t.fan_out = c.fan_out.clone();
        t.condition = c.condition.clone();
        t.retry = c.retry;
        t.resources = c.resources.clone();
        t
    };
    let trains = matches!(kind, TaskKind::Train | TaskKind::DistributedTrain);
    if trains && c.models.len() > 1 {
        c.models.iter().map(|m| base(Some(m))).collect()
    } else if trains && c.models.is_empty() && c.model_count.is_some() {
        (0..c.model_count.unwrap_or(1))
            .map(|_| base(None))
            .collect()
    } else if trains {
        vec![base(c.models.first())]
    } else {
        vec![base(None)]
    }
}

/// "…, compact small files, and expire old snapshots": in a list of steps,
/// a clause no other reader took that starts with a verb and its object
/// is a generic step, whatever the verb.
fn listed_step(c: &Clause, sep: Sep, tokens: &[Token]) -> Option<super::action::Action> {
    let in_list = matches!(sep, Sep::Comma | Sep::Sequence | Sep::And);
    (c.kind.is_none()
        && c.refers_to.is_none()
        && !c.is_modifier()
        && !c.opens_list
        && c.schedule.is_none()
        && !c.otherwise
        && !c.negated
        && !c.leftover.is_empty()
        && in_list)
        .then(|| super::action::listed(tokens, sep == Sep::And))
        .flatten()
}
