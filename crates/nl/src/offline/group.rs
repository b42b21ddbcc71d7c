//! Segments → clauses: segments that ask for a subtask start a clause,
//! modifiers and list items join the clause before them, conditions join
//! the clause after them; schedules and whole-workflow retries are
//! recorded, and what says nothing understood is reported.

use super::Unrecognized;
use super::clause::{self, Clause};
use super::lexicon;
use super::order::Group;
use super::scan::{Class, Segment, Sep, Token, find_any};
use crate::decompose::{Decomposition, ScheduleSpec, Span, TaskKind};

/// Gathers segments into clauses; records schedules and whole-workflow
/// retries; reports segments that say nothing understood.
pub(super) fn group(
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
        if let Some((cron, span)) = &c.schedule {
            match &mut d.schedule {
                None => {
                    d.schedule = Some(ScheduleSpec {
                        cron: cron.clone(),
                        text: span.of(text).to_owned(),
                    });
                }
                Some(s) => {
                    if let Some(better) = super::schedule::refine(&s.cron, cron) {
                        s.cron = better;
                        s.text = format!("{} … {}", s.text, span.of(text));
                    }
                }
            }
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
        let more = object_after_and(seg, &c, value_only, &groups, segs)
            || sent_with(seg, &c, &groups, segs);
        if prefix.is_empty() && same_verb_again(seg, &c, &groups, segs) {
            groups.push(Group {
                sep: seg.sep,
                segs: vec![i],
                inherits: true,
            });
            continue;
        }
        if c.kind.is_some() && !list_item && more {
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
        // ("三个任务同时跑：…": the marker is about the steps after it.)
        let shapes =
            c.fan_out.is_some() || c.condition.is_some() || c.retry.is_some() || c.parallel;
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
        // "extract image features with a ResNet and text features with BERT
        // at the same time": an object of its own, and its own model.
        let own_model = c.parallel
            && !c.models.is_empty()
            && c.resources.is_empty()
            && c.condition.is_none()
            && c.fan_out.is_none()
            && c.retry.is_none()
            && first_word(seg).is_some_and(|t| !super::action::is_verb(&t.text));
        let bare = c.kind.is_none()
            && (!c.is_modifier() || only_parallel || own_model)
            && !c.leftover.is_empty()
            && seg.sep == Sep::And
            && prefix.is_empty()
            && groups.last().is_some_and(|g| {
                let b = clause::read(&g.tokens(segs));
                // "train DeepFM and a Wide&Deep baseline at the same time":
                // one more model, trained beside the one named.
                // ("train three models in parallel: an LSTM, a vanilla
                // Transformer and a DLinear baseline")
                let listed = b.parallel && g.segs.iter().any(|&k| segs[k].after_colon);
                let another_model = (c.parallel || listed)
                    && b.kind.is_some_and(|k| k.trains())
                    && find_any(&seg.tokens, MODEL_NOUNS).is_some()
                    && !first_word(seg).is_some_and(|t| super::action::is_verb(&t.text));
                ((b.parallel || c.parallel)
                    && (b.models.is_empty() || own_model)
                    && !b.kind.is_some_and(|k| k.trains()))
                    || another_model
            });
        if bare {
            groups.push(Group {
                sep: seg.sep,
                segs: vec![i],
                inherits: true,
            });
            continue;
        }
        // "deploy it, only if the accuracy is above 0.9": the step before
        // is the one that runs only then.
        let only_if = c.kind.is_none()
            && c.condition.is_some()
            && c.leftover.is_empty()
            && first_word(seg).is_some_and(|t| t.is("only"));
        if only_if
            && prefix.is_empty()
            && continues
            && let Some(g) = groups.last_mut()
            && g.segs.len() == 1
            && same_fan_out(g, &[i], segs)
        {
            g.segs.push(i);
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
        // ("逻辑回归和随机森林并行训练": a model "and" a training: one more
        // model it trains.)
        let before_step = segs.get(i + 1).is_some_and(|next| {
            next.sep == Sep::And
                && clause::read(&next.tokens)
                    .kind
                    .is_some_and(|k| c.models.is_empty() || k.trains())
        });
        // "Load the data. For each of the 5 folds, train …": a fan-out that
        // opens its sentence belongs to the step after it.
        let opens = seg.sep >= Sep::Sequence || seg.sep == Sep::Start || seg.after_colon;
        // ("n_estimators 取 100、300，max_depth 取 5、10、20，每组训练一个
        // 模型": past more of what the step is run for.)
        let step_follows = || {
            segs[i + 1..]
                .iter()
                .take_while(|next| next.sep < Sep::Sequence && !next.after_colon)
                .take(3)
                .map(|next| clause::read(&next.tokens))
                .find(|n| n.kind.is_some() || n.condition.is_some() || !n.resources.is_empty())
                .is_some_and(|n| n.kind.is_some() && n.condition.is_none())
        };
        if c.kind.is_none() && c.fan_out.is_some() && opens && step_follows() {
            prefix.push(i);
            continue;
        }
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
        // "[agg_by_country, agg_by_device]": task ids are steps whatever
        // their words (each its own: `parse`).
        let mut words_of = seg.tokens.iter().filter(|t| t.class != Class::Punct);
        let only_ids = words_of.clone().count() >= 2 && words_of.all(Token::is_task_id);
        let sep = if first_of_list(segs, i) {
            Sep::Comma
        } else {
            seg.sep
        };
        let listed =
            (!groups.is_empty() || sep != seg.sep) && listed_step(&c, sep, &seg.tokens).is_some();
        if only_ids || listed {
            let mut members = std::mem::take(&mut prefix);
            members.push(i);
            groups.push(Group {
                sep: segs[members[0]].sep,
                segs: members,
                inherits: false,
            });
            continue;
        }
        // "pseudonymize the email and phone columns": nouns after "and",
        // with no verb of their own, are more of what the step acts on.
        let nouns = seg.sep == Sep::And
            && !c.is_modifier()
            && !first_word(seg).is_some_and(|t| super::action::is_verb(&t.text));
        if words
            && nouns
            && prefix.is_empty()
            && let Some(g) = groups.last_mut()
        {
            g.segs.push(i);
            continue;
        }
        // "(before the copy happens)": an aside on the order, no step.
        let aside = seg.tokens.first().is_some_and(|t| t.is("(") || t.is("（"))
            && find_any(&seg.tokens, &["before", "after", "之前", "之后", "以后"]).is_some();
        if words && !aside {
            let span = c
                .leftover
                .iter()
                .copied()
                .reduce(Span::join)
                .unwrap_or(seg.span());
            ignored.push(Unrecognized::new(text, span, "no step matches these words"));
        }
    }
    // "…, then deploy it if the accuracy is above 0.9.": a condition at the
    // very end is the last step's.
    let trailing = prefix.first().is_some_and(|&i| {
        let c = clause::read(&segs[i].tokens);
        // (Not "when …": at the end that is when, not whether.)
        c.condition.is_some()
            && !c.otherwise
            && c.leftover.is_empty()
            && segs[i].sep <= Sep::Comma
            && first_word(&segs[i])
                .is_some_and(|t| ["if", "only", "unless"].iter().any(|w| t.is(w)))
    });
    // (Only after one clause: after a list it would be one more value.)
    if trailing
        && let Some(g) = groups.last_mut()
        && g.segs.len() == 1
        && same_fan_out(g, &prefix, segs)
    {
        g.segs.append(&mut prefix);
    }
    for i in prefix {
        let c = clause::read(&segs[i].tokens);
        // ("…, otherwise do nothing": understood, and no step.)
        if c.negated && c.condition.is_none() {
            continue;
        }
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

/// Whether the step's fan-out stays what it was with the clauses `more`
/// (a condition after it) read with it.
fn same_fan_out(g: &Group, more: &[usize], segs: &[Segment]) -> bool {
    let own = g.tokens(segs);
    let mut tokens = own.clone();
    for &i in more {
        tokens.extend(segs[i].tokens.iter().cloned());
    }
    clause::read(&own).fan_out == clause::read(&tokens).fan_out
}

/// "replay the transactions through the new rules and through the old
/// rules", "pull the logs of the control group and of the treatment
/// group": after "and", the preposition of the step before, again: the
/// same action a second time, on what follows it.
fn same_verb_again(seg: &Segment, c: &Clause, groups: &[Group], segs: &[Segment]) -> bool {
    const AGAIN: &[&str] = &[
        "through", "of", "with", "on", "for", "from", "against", "into", "to", "at", "in", "using",
        "over", "across",
    ];
    let Some(g) = groups.last() else {
        return false;
    };
    let last = *g.segs.last().expect("a group has segments");
    let before = &g.tokens(segs);
    // ("… and, in parallel, one forest without …": the marker is a clause
    // of its own, read with the step before.)
    let marker = {
        let m = clause::read(&segs[last].tokens);
        m.parallel && m.kind.is_none() && m.leftover.is_empty()
    };
    // "train an xgboost model on the csv and another one on the parquet",
    // "one forest on all features and, in parallel, one forest without …":
    // one more of what the step before made, told apart by what follows.
    let words: Vec<&Token> = seg
        .tokens
        .iter()
        .filter(|t| t.class != Class::Punct)
        .collect();
    let another = matches!(words.first(), Some(t) if t.is("another") || t.is("one"))
        && words
            .iter()
            .take(4)
            .skip(1)
            .any(|t| AGAIN.iter().any(|w| t.is(w)) || t.is("without"))
        && (seg.sep == Sep::And || (seg.sep == Sep::Comma && (c.parallel || marker)));
    let again = seg.sep == Sep::And
        && seg.tokens.first().is_some_and(|first| {
            AGAIN.iter().any(|w| first.is(w)) && before.iter().skip(1).any(|t| t.is(&first.text))
        });
    // ("… and on 4 GPUs", "… and with a timeout of 10 minutes": more
    // about the same step; "send it to the team and to the manager": one
    // message to both.)
    let about_the_step = !c.resources.is_empty()
        || c.fan_out.is_some()
        || c.retry.is_some()
        || c.schedule.is_some()
        || find_any(
            &seg.tokens,
            &["timeout", "time limit", "deadline", "retries"],
        )
        .is_some();
    (again || another)
        && (c.kind.is_none() || c.generic)
        && c.condition.is_none()
        && !c.otherwise
        && !about_the_step
        && clause::read(before)
            .kind
            .is_some_and(|k| !matches!(k, TaskKind::Notify | TaskKind::Report))
}

/// Words that name a model when no model family is named.
const MODEL_NOUNS: &[&str] = &[
    "baseline",
    "model",
    "classifier",
    "regressor",
    "network",
    "variant",
    "模型",
    "基线",
];

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
    // ("log how many stars and contributors it has", "resize images and
    // masks to 512x512": a plural noun after "and", acting on nothing, is
    // more of what the step before acts on.)
    let words: Vec<&Token> = seg
        .tokens
        .iter()
        .filter(|t| t.class != Class::Punct)
        .collect();
    if c.generic
        && seg.sep == Sep::And
        && let [first, rest @ ..] = words.as_slice()
        && first.class == Class::Word
        && !first.is_label()
        && !first.is_task_id()
        && first.text.len() > 3
        && first.text.ends_with('s')
        && (!super::action::is_verb(&first.text)
            || rest
                .first()
                .is_none_or(|t| super::action::PREPOSITIONS.iter().any(|w| t.is(w))))
    {
        return true;
    }
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
    // "evaluate with Recall@20 and NDCG@20": one more metric.
    if b.kind == Some(TaskKind::Evaluate)
        && (0..seg.tokens.len()).any(|k| lexicon::names_metric(&seg.tokens, k))
    {
        return true;
    }
    let plural = seg.tokens.iter().any(|t| {
        t.class == Class::Word
            && t.text.len() > 3
            && t.text.ends_with('s')
            && !super::action::is_verb(&t.text)
    });
    plural || b.kind == Some(TaskKind::Load)
}

/// "post its name and status to our slack webhook": what follows "and",
/// with no verb of its own, is more of what the step before sends, and
/// says where to.
fn sent_with(seg: &Segment, c: &Clause, groups: &[Group], segs: &[Segment]) -> bool {
    let starts_with_noun = first_word(seg).is_some_and(|t| {
        !super::action::is_verb(&t.text) && lexicon::kind(std::slice::from_ref(t)).is_none()
    });
    seg.sep == Sep::And
        && c.kind == Some(TaskKind::Notify)
        && starts_with_noun
        && groups
            .last()
            .is_some_and(|g| clause::read(&g.tokens(segs)).generic)
}

/// The segment's first English word that is no filler.
fn first_word(seg: &Segment) -> Option<&Token> {
    seg.tokens
        .iter()
        .find(|t| t.class == Class::Word && !lexicon::is_filler(t))
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

/// "terraform plan, wait for approval, terraform apply": the first
/// segment opens a list of steps ("churn model v2 -> clean data -> …"
/// names the work).
pub(super) fn first_of_list(segs: &[Segment], i: usize) -> bool {
    i == 0
        && segs.get(1).is_some_and(|n| {
            n.sep == Sep::Comma && !n.after_colon && clause::read(&n.tokens).kind.is_some()
        })
}

/// "…, compact small files, and expire old snapshots": in a list of steps,
/// a clause no other reader took that starts with a verb and its object
/// is a generic step, whatever the verb.
pub(super) fn listed_step(c: &Clause, sep: Sep, tokens: &[Token]) -> Option<super::action::Action> {
    // ("ingest clickstream; sessionize; …": one verb between semicolons.)
    let alone = tokens.iter().filter(|t| t.class != Class::Punct).count() == 1;
    // ("…; as the exit task, print …": a step at the end is still a step.)
    let in_list = matches!(sep, Sep::Comma | Sep::Sequence | Sep::And)
        || (sep == Sep::Sentence && (alone || c.always));
    (c.kind.is_none()
        && c.refers_to.is_none()
        && !c.modifies_step()
        && !c.opens_list
        && c.schedule.is_none()
        && !c.negated
        && !c.leftover.is_empty()
        && in_list)
        .then(|| super::action::listed(tokens, sep == Sep::And))
        .flatten()
}
