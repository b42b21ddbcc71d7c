//! Conditions of a clause: "if the accuracy is above 0.9", "如果 AUC 大于
//! 0.8", "only if it passed", and what a branch reads when no metric is
//! named.

use super::lexicon::{self, number_at};
use super::reader::Reader;
use super::scan::{Class, Token, phrase_at};
use super::shape::read_outcome;
use crate::decompose::{Comparison, ConditionSpec, Span};

/// A clause's condition: what it compares, whether the clause opens with it
/// ("if …, deploy"), and where it is when it could not be read (the step
/// then runs on a flag named from its words).
pub(super) struct Read {
    pub condition: ConditionSpec,
    pub first: bool,
    pub unreadable: Option<Span>,
}

/// The condition the clause from `start` states, with the words it used
/// marked.
pub(super) fn read(r: &mut Reader, start: usize) -> Option<Read> {
    let t = r.t;
    let found = (start..t.len()).find_map(|i| {
        if r.used[i] {
            return None;
        }
        let marker = lexicon::IF
            .iter()
            .find_map(|p| phrase_at(t, i, p).map(|n| (n, false, *p)))
            .or_else(|| {
                lexicon::UNLESS
                    .iter()
                    .find_map(|p| phrase_at(t, i, p).map(|n| (n, true, *p)))
            })?;
        // "当" opens a condition only at the start of a clause.
        (marker.2 != "当" || i == start).then_some((i, marker.0, marker.1, marker.2))
    });
    let Some((at, n, negated, marker)) = found else {
        // "AUC 大于 0.75 就注册", "大于 5 打印“中”" (a branch after an
        // "if"): a clause that opens with a comparison. (Not "at least 3
        // GPUs", so only the Chinese comparisons open one.)
        let metric_first = lexicon::METRICS
            .iter()
            .map(|(_, spellings)| *spellings)
            .chain(lexicon::COMPARISONS.iter().map(|(_, words)| *words))
            .flatten()
            .filter(|p| metric_word(p))
            .any(|p| phrase_at(t, start, p).is_some());
        if metric_first
            && let Some((cond, end)) = read_condition(t, start)
            && end <= start + 6
        {
            r.mark(start, end - start);
            return Some(Read {
                condition: cond,
                first: true,
                unreadable: None,
            });
        }
        return None;
    };
    let body = at + n;
    // "on success", "if it succeeds": the step before passed.
    if [
        "on success",
        "if successful",
        "if it succeeds",
        "if they pass",
        "if all tests pass",
    ]
    .contains(&marker)
    {
        r.mark(at, n);
        return Some(Read {
            condition: ConditionSpec {
                metric: "quality".into(),
                operator: Comparison::Eq,
                value: if negated { "fail" } else { "pass" }.into(),
            },
            first: at == start,
            unreadable: None,
        });
    }
    // "if needed", "if possible": no condition.
    if let Some(k) = [
        "needed",
        "necessary",
        "possible",
        "required",
        "applicable",
        "available",
    ]
    .iter()
    .find_map(|p| phrase_at(t, body, p))
    {
        r.mark(at, n + k);
        return None;
    }
    let strict = marker == "when" || marker == "当";
    match read_condition(t, body).or_else(|| read_outcome(t, body, strict)) {
        Some((mut cond, end)) => {
            if negated {
                cond = cond.negate();
            }
            r.mark(at, end - at);
            Some(Read {
                condition: cond,
                first: at == start,
                unreadable: None,
            })
        }
        // "when" is also just "at the time"; only a real "if" must parse.
        // A condition it cannot read still makes the step conditional: on a
        // flag named from its words, with a warning.
        None if marker != "when" && marker != "当" => {
            // (Six words at most: "it's" is one.)
            let words = |end: usize| {
                t[body..end]
                    .iter()
                    .filter(|x| x.class != Class::Punct)
                    .count()
            };
            let mut end = body;
            while end < t.len()
                && words(end) < 6
                && lexicon::kind(&t[end..end + 1]).is_none()
                && !t[end].is(",")
                && !t[end].is("，")
                // ("if it is a weekend, print hello": the clauses' tokens
                // hold no comma; the step starts at its verb or task id.)
                && !(end >= body + 2
                    && (super::action::is_verb(&t[end].text)
                        || t[end].is_task_id()
                        || ["run", "execute", "trigger", "launch"].iter().any(|w| t[end].is(w))))
            {
                end += 1;
            }
            let end = end.max(at + n);
            let words: Vec<String> = t[body..end]
                .iter()
                .filter(|x| x.class == Class::Word && !lexicon::is_filler(x))
                .take(3)
                .map(|x| x.text.replace('-', "_"))
                .collect();
            r.mark(at, end - at);
            Some(Read {
                unreadable: Some(t[at].span.join(t[end - 1].span)),
                first: at == start,
                condition: ConditionSpec {
                    metric: if words.is_empty() {
                        "condition".into()
                    } else {
                        words.join("_")
                    },
                    operator: if negated {
                        Comparison::Ne
                    } else {
                        Comparison::Eq
                    },
                    value: "true".into(),
                },
            })
        }
        None => None,
    }
}

/// A metric's spelling, or a Chinese comparison ("大于").
fn metric_word(p: &str) -> bool {
    lexicon::METRICS.iter().any(|(_, s)| s.contains(&p))
        || p.chars().next().is_some_and(super::scan::is_cjk)
}

/// `metric comparison value` or `check passes`, from token `i`; returns the
/// condition and the index after it.
fn read_condition(t: &[Token], i: usize) -> Option<(ConditionSpec, usize)> {
    let window = (i + 12).min(t.len());
    let mut metric = None;
    let mut op = None;
    let mut j = i;
    while j < window {
        if let Some(n) = lexicon::PASS.iter().find_map(|p| phrase_at(t, j, p)) {
            return Some((
                ConditionSpec {
                    metric: metric.unwrap_or("quality").to_owned(),
                    operator: Comparison::Eq,
                    value: "pass".into(),
                },
                j + n,
            ));
        }
        if let Some(n) = lexicon::FAIL.iter().find_map(|p| phrase_at(t, j, p)) {
            return Some((
                ConditionSpec {
                    metric: metric.unwrap_or("quality").to_owned(),
                    operator: Comparison::Eq,
                    value: "fail".into(),
                },
                j + n,
            ));
        }
        if metric.is_none()
            && let Some((name, n)) = lexicon::METRICS.iter().find_map(|(name, spellings)| {
                spellings
                    .iter()
                    .find_map(|s| phrase_at(t, j, s))
                    .map(|n| (*name, n))
            })
        {
            metric = Some(name);
            j += n;
            continue;
        }
        if op.is_none()
            && let Some((cmp, n)) = lexicon::COMPARISONS.iter().find_map(|(cmp, words)| {
                words
                    .iter()
                    .find_map(|w| phrase_at(t, j, w))
                    .map(|n| (*cmp, n))
            })
        {
            op = Some(cmp);
            j += n;
            continue;
        }
        if let Some(op) = op
            && let Some((v, percent, n)) = number_at(t, j, false)
        {
            let value = if percent { v / 100.0 } else { v };
            let mut end = j + n + usize::from(t.get(j + n).is_some_and(|x| x.is("percent")));
            // "if more than 500 docs changed": what is counted names it.
            let counted = match metric {
                Some(_) => None,
                None => counted_after(t, end),
            };
            if let Some((_, n)) = &counted {
                end += n;
            }
            return Some((
                ConditionSpec {
                    metric: counted
                        .map_or_else(|| metric.unwrap_or("score").to_owned(), |(name, _)| name),
                    operator: op,
                    value: trim_number(value),
                },
                end,
            ));
        }
        // "if v7 is better promote it to 100%": a comparison with no number
        // before the step's verb compares no number.
        if op.is_some() && step_word(&t[j]) {
            return None;
        }
        j += 1;
    }
    None
}

/// A verb or a step's kind word: where a condition has ended.
fn step_word(t: &Token) -> bool {
    t.class == Class::Word
        && (super::action::is_verb(&t.text) || lexicon::kind(std::slice::from_ref(t)).is_some())
}

/// The words after a count that say what was counted ("500 docs changed",
/// "3 jobs failed"), up to the step's verb: the metric's name and how many
/// tokens it took.
fn counted_after(t: &[Token], from: usize) -> Option<(String, usize)> {
    let from = from.min(t.len());
    // ("3 partitions failed": right after a count, a plural is what is
    // counted, even one that could be a verb.)
    let n = t[from..]
        .iter()
        .take(3)
        .enumerate()
        .take_while(|&(k, x)| {
            let counted = k == 0
                && x.text.len() > 3
                && x.text.ends_with('s')
                && lexicon::kind(std::slice::from_ref(x)).is_none();
            x.class == Class::Word
                && !lexicon::is_filler(x)
                && !LATER.iter().any(|w| x.is(w))
                && !super::action::PREPOSITIONS.iter().any(|w| x.is(w))
                && (!step_word(x) || x.text.ends_with("ed") || counted)
        })
        .count();
    let words: Vec<String> = t[from..from + n]
        .iter()
        .map(|x| x.text.replace('-', "_"))
        .collect();
    (n > 0).then(|| (words.join("_"), n))
}

/// Words that end a condition's metric: what comes next is the branch.
const LATER: &[&str] = &[
    "then", "and", "or", "so", "we", "i", "you", "please", "also",
];

fn trim_number(v: f64) -> String {
    let s = format!("{v}");
    s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
}
