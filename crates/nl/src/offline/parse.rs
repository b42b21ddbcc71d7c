//! Segments → decomposition: segments that ask for a subtask start a clause,
//! modifiers and list items join the clause before them, conditions join the
//! clause after them; clauses become stages, with parallel markers pulling
//! neighbouring clauses into one group.

use super::Unrecognized;
use super::action;
use super::clause::{self, Clause};
use super::context;
use super::lexicon;
use super::order::in_order;
use super::preread::{implicit_ifs, is_question, list_tails, shared_verbs, split_run_ons};
use super::scan::{Class, Segment, Sep, Token, find_any, segments, tokenize};
use crate::decompose::{ConditionSpec, Decomposition, Span, Stage, Subtask, TaskKind};

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
    let segs = implicit_ifs(list_tails(shared_verbs(split_run_ons(segments(&tokens)))));
    let mut unknown = Vec::new();
    let mut ignored = Vec::new();
    let mut d = Decomposition::default();
    let mut preamble: Option<Clause> = None;
    let groups = in_order(
        super::group::group(text, &segs, &mut d, &mut ignored, &mut preamble),
        &segs,
    );
    let (groups, heading) = context::heading(text, groups, &segs);
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
            && (c.kind.is_none() || c.generic)
            && let Some((kind, verb)) = &last_verb
        {
            // "同时打印 hello2a 和 hello2b": the second is printed too.
            // (Named from the words before "side by side", "in parallel".)
            let end = find_any(&merged, lexicon::PARALLEL).map_or(merged.len(), |(i, _)| i);
            // ("text features with BERT": named up to its model; "through
            // the old rules": from what the preposition leads to.)
            // ("another one on the parquet": from what tells it apart.)
            let preposition =
                |t: &Token| action::PREPOSITIONS.iter().any(|w| t.is(w)) || t.is("without");
            let from = match merged.first() {
                Some(t) if preposition(t) => 1,
                // ("one forest without the bureau features": "without"
                // tells it apart.)
                Some(t) if t.is("another") || t.is("one") => merged
                    .iter()
                    .take(4)
                    .position(preposition)
                    .map_or(0, |k| k + usize::from(!merged[k].is("without"))),
                _ => 0,
            }
            .min(end);
            let end = merged[from..end]
                .iter()
                .position(|t| t.is("用") || action::PREPOSITIONS.iter().any(|w| t.is(w)))
                .map_or(end, |k| k + from);
            let words: Vec<String> = merged[from..end]
                .iter()
                .filter(|t| {
                    matches!(t.class, Class::Word | Class::Number)
                        && !action::NAME_STOP.iter().any(|w| t.is(w))
                })
                .map(|t| t.text.clone())
                .take(3)
                .collect();
            let mut name = vec![verb.clone()];
            name.extend(words);
            c.kind = Some(*kind);
            c.generic = *kind == TaskKind::Shell;
            c.name = Some(action::slug(&name));
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
        // ("otherwise keep the old one and ping #recsys": doing nothing is
        // no negation of what follows.)
        last_negated = c.negated && find_any(&merged, lexicon::NOTHING).is_none();
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
        // ("for each file: count its lines": the step is the words after
        // what opens it.)
        if c.kind.is_none()
            && let [_, .., own] = g.segs[..]
            && segs[own].after_colon
        {
            let tokens = &segs[own].tokens;
            let own = clause::read(tokens);
            let name = if own.generic {
                own.name
            } else {
                super::group::listed_step(&own, Sep::Comma, tokens).map(|a| a.name)
            };
            if let Some(name) = name {
                c.kind = Some(TaskKind::Shell);
                c.generic = true;
                c.name = Some(name);
                c.leftover.clear();
            }
        }
        let first = super::group::first_of_list(&segs, g.segs[0]);
        let sep = if first { Sep::Comma } else { g.sep };
        if (!stages.is_empty() || first)
            && let Some(a) = super::group::listed_step(&c, sep, &merged)
        {
            c.kind = Some(TaskKind::Shell);
            c.generic = true;
            c.name = Some(a.name);
            c.leftover.clear();
        }
        let ids: Vec<&Token> = merged.iter().filter(|t| t.class != Class::Punct).collect();
        let all_ids = ids.len() >= 2 && ids.iter().all(|t| t.is_task_id());
        if c.kind.is_none() && all_ids {
            // "[agg_by_country, agg_by_device]": task ids, whatever their
            // words, are steps (each its own, below).
            c.kind = Some(TaskKind::Shell);
            c.generic = true;
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
                    && ["the", "this", "that", "its"]
                        .iter()
                        .any(|w| merged[at - 1].is(w))
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
        if all_ids {
            tasks = ids
                .iter()
                .map(|id| {
                    let mut t = Subtask::new(TaskKind::Shell, id.text.clone());
                    t.name = Some(action::slug(std::slice::from_ref(&id.text)));
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
                    // "Otherwise: aggregate -> publish", "否则先回滚，再通知":
                    // what follows in the sentence of a branch opened by a
                    // colon or "first" is in it too ("otherwise notify,
                    // then write a report" is not, nor in the "if" branch).
                    let opened = g.segs.iter().any(|&k| segs[k].after_colon)
                        || find_any(&merged, &["先", "首先", "first"]).is_some();
                    active = opened.then(|| cond.negate());
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
        // "pull X, and at the same time export Y", "…; meanwhile, export
        // Y": a marker opening a clause after another runs it beside that
        // one ("both X and Y", "同时进行X和Y", "并行训练A、B和C" open a group
        // of their own).
        let last_seg = *g.segs.last().expect("a group has segments");
        // ("(train A || train B)": side by side by the operator.)
        let operator = segs[g.segs[0]].beside && meta.last().is_some_and(|m| !m.branch);
        let beside = operator
            || (c.parallel
                && starts_with_parallel(&merged)
                && find_any(&merged[..merged.len().min(2)], &["both", "并行", "并发"]).is_none()
                && c.models.len() <= 1
                && segs.get(last_seg + 1).is_none_or(|n| n.sep != Sep::And)
                && !segs[g.segs[0]].after_colon
                && (matches!(g.sep, Sep::And | Sep::Comma)
                    || find_any(
                        &merged[..merged.len().min(4)],
                        &["meanwhile", "in the meantime", "与此同时"],
                    )
                    .is_some())
                && meta.last().is_some_and(|m| !m.branch && !m.open)
                && c_condition.is_none());
        // ("三个任务同时跑：A、B、C": a marker before a colon opens the list.)
        let before_colon = g.segs.len() > 1
            && segs[g.segs[1]].after_colon
            && find_any(&segs[g.segs[0]].tokens, lexicon::PARALLEL).is_some();
        let opens = c.parallel
            && (starts_with_parallel(&merged)
                || ends_with_parallel(&segs[last_seg])
                || before_colon);
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
        if beside || joins_open {
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
    context::each_counted(&tokens, &mut stages);
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
    let owned: Vec<Token> = last
        .tokens
        .iter()
        .filter(|t| t.class != Class::Punct)
        .cloned()
        .collect();
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

pub(crate) fn expand(text: &str, c: &Clause, kind: TaskKind, span: Span) -> Vec<Subtask> {
    let base = |model: Option<&String>| {
        let mut t = Subtask::new(kind, span.of(text).trim());
        t.span = Some(span);
        t.name = c.name.clone();
        t.model = model.cloned();
        t.target = c.target.clone();
        t.command = c.command.clone();
        // ("print done", "wait 2 hours": the words are the command.)
        if kind == TaskKind::Shell && t.command.is_none() {
            t.command = super::fill::literal_command(&t.text);
        }
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
