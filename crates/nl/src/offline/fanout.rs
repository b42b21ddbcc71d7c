//! Fan-outs: one instance per value of a list ("batch sizes 100, 200 and
//! 300", "for each of the names alice, bob and carol"), a range ("shards 1
//! to 20"), a count ("five folds", "each of the 10 test shards") or every
//! combination of several lists ("os (linux, darwin) and arch (amd64)").

use super::lexicon::{self, integer_at};
use super::reader::Reader;
use super::scan::{Class, Token, find_any, phrase_at};
use crate::decompose::{FanOut, FanOutValues};

mod cjk;
use cjk::{chinese_count, chinese_each};

const COUNT_NOUNS: &[(&str, &str)] = &[
    ("folds", "fold"),
    ("fold", "fold"),
    ("shards", "shard"),
    ("partitions", "partition"),
    ("seeds", "seed"),
    ("chunks", "chunk"),
    ("splits", "split"),
    ("折", "fold"),
    ("个分片", "shard"),
    ("分片", "shard"),
    ("个种子", "seed"),
    ("个随机种子", "seed"),
];

/// Things counted for a fan-out only with "each", "every", "in parallel"
/// nearby ("for each of the 7 days", not "the last 7 days of logs").
const COUNTED: &[(&str, &str)] = &[
    ("times", "run"),
    ("days", "day"),
    ("weeks", "week"),
    ("months", "month"),
    ("hours", "hour"),
    ("languages", "language"),
    ("regions", "region"),
    ("countries", "country"),
    ("cities", "city"),
    ("stores", "store"),
    ("files", "file"),
    ("tables", "table"),
    ("datasets", "dataset"),
    ("runs", "run"),
    ("trials", "trial"),
    ("experiments", "experiment"),
    ("configurations", "configuration"),
    ("configs", "config"),
    ("different seeds", "seed"),
    ("random seeds", "seed"),
    ("次", "run"),
    ("个随机种子", "seed"),
    ("个种子", "seed"),
];

const CJK_PARAMS: &[(&str, &str)] = &[
    ("批大小", "batch_size"),
    ("批量大小", "batch_size"),
    ("批次大小", "batch_size"),
    ("学习率", "learning_rate"),
    ("分片", "shard"),
    ("种子", "seed"),
    ("区域", "region"),
    ("地区", "region"),
    ("折", "fold"),
];

/// The fan-out the clause asks for; marks the words it used.
pub fn read(r: &mut Reader) -> Option<FanOut> {
    let mut out = None;
    read_into(r, &mut out);
    out
}

fn read_into(r: &mut Reader, slot: &mut Option<FanOut>) {
    if let Some(m) = matrix(r)
        .or_else(|| super::dates::date_range(r))
        .or_else(|| super::dates::month_range(r))
        .or_else(|| super::dates::month_days(r))
        .or_else(|| super::dates::chinese_calendar(r))
        .or_else(|| chinese_each(r))
        .or_else(|| each_of_count(r))
        .or_else(|| chinese_count(r))
    {
        *slot = Some(m);
        return;
    }
    let t = r.t;
    // Ranges: "shards 1 to 20", "1-20", "分片1到20".
    for i in 0..t.len() {
        if r.used[i] {
            continue;
        }
        let Some((a, n)) = integer_at(t, i, false) else {
            continue;
        };
        if !r.is(i + n, &["to", "through", "thru", "-", "到", "至", "~"]) {
            continue;
        }
        let Some((b, m)) = integer_at(t, i + n + 1, false) else {
            continue;
        };
        if b <= a || b - a >= 10_000 {
            continue;
        }
        let from = i.saturating_sub(usize::from(i > 0 && r.is(i - 1, &["from", "从"])));
        *slot = Some(FanOut {
            parameter: parameter_before(t, from).0,
            values: FanOutValues::Range {
                start: i64::from(a),
                end: i64::from(b),
            },
        });
        r.mark(from, i + n + 1 + m - from);
        return;
    }
    // Counts: "five folds", "5-fold", "10 shards", "五折".
    for i in 0..t.len() {
        if r.used[i] {
            continue;
        }
        let Some((v, n)) = integer_at(t, i, true).filter(|_| !t[i].is("a") && !t[i].is("an"))
        else {
            continue;
        };
        let mut u = i + n + usize::from(r.is(i + n, &["-"]));
        // "the 10 test shards": one word may stand between.
        let noun_at = |u: usize| {
            COUNT_NOUNS
                .iter()
                .find_map(|(w, p)| phrase_at(t, u, w).map(|len| (*p, len)))
        };
        // "(7 days)", "100 times", "for each of 4 regions": counted things,
        // when the clause says each of them runs.
        let free: Vec<Token> = t
            .iter()
            .zip(&r.used)
            .filter(|(_, u)| !**u)
            .map(|(x, _)| x.clone())
            .collect();
        let cued = find_any(
            &free,
            &[
                "each",
                "every",
                "per",
                "parallel",
                "separately",
                "different",
                "分别",
                "每",
                "并行",
                "times",
                "次",
            ],
        )
        .is_some();
        // ("at most 10 times" is a retry limit.)
        let limit = i > 0
            && ["most", "to", "max", "maximum"]
                .iter()
                .any(|w| t[i - 1].is(w));
        let counted = |u: usize| {
            (cued && v >= 2 && !limit)
                .then(|| {
                    COUNTED
                        .iter()
                        .find_map(|(w, p)| phrase_at(t, u, w).map(|len| (*p, len)))
                })
                .flatten()
        };
        // "for every fold of 3", "each shard of 8": the noun before its count.
        let before = (i >= 2 && t[i - 1].is("of") && v >= 2 && !limit)
            .then(|| {
                COUNT_NOUNS
                    .iter()
                    .chain(COUNTED.iter().filter(|_| cued))
                    .find(|(w, p)| t[i - 2].is(w) || t[i - 2].is(p))
            })
            .flatten();
        if let Some((_, noun)) = before {
            *slot = Some(FanOut {
                parameter: (*noun).to_owned(),
                values: FanOutValues::Count(v),
            });
            r.mark(i - 2, n + 2);
            return;
        }
        // ("print hello five times": the counted word itself is no filler.)
        if noun_at(u).is_none()
            && counted(u).is_none()
            && t.get(u).is_some_and(|x| x.class == Class::Word)
        {
            u += 1;
        }
        if let Some((noun, len)) = noun_at(u).or_else(|| counted(u))
            && v >= 2
        {
            *slot = Some(FanOut {
                parameter: noun.to_owned(),
                values: FanOutValues::Count(v),
            });
            // "5-fold cross validation" trains per fold; it is no evaluation step.
            let after = u + len;
            let cv = [
                "cross validation",
                "cross-validation",
                "cross-validated",
                "交叉验证",
            ]
            .iter()
            .find_map(|p| phrase_at(t, after, p))
            .unwrap_or(0);
            r.mark(i, after + cv - i);
            return;
        }
    }
    // Lists: two or more numbers in a row ("batch sizes 100, 200 and 300");
    // several named lists in one clause are crossed ("learning rates 1e-2
    // and 1e-3 and batch sizes 32 and 64", "each lr in {…} and each seed
    // in {…}").
    let mut lists: Vec<(String, Vec<String>)> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i].class != Class::Number {
            i += 1;
            continue;
        }
        // What varies is named before the list ("batch sizes 100, 200"),
        // not acted on ("add 1 and 2").
        // ("C in {0.1, 1, 10}", "per seed (0, 1, 2)", "lr = [1e-3, 1e-4]".)
        let mut before = i;
        while before > 0
            && ["=", ":", "{", "[", "(", "（", "in"]
                .iter()
                .any(|w| t[before - 1].is(w))
        {
            before -= 1;
        }
        let named = before > 0
            && matches!(t[before - 1].class, Class::Word | Class::Cjk)
            && !super::action::is_verb(&t[before - 1].text)
            && lexicon::kind(&t[before - 1..before]).is_none();
        if !named {
            i += 1;
            continue;
        }
        let run: Vec<usize> = (i..t.len())
            .take_while(|&j| {
                !r.used[j]
                    && (t[j].class == Class::Number
                        || ["or", "and", ",", "，", "、", "和", "或"]
                            .iter()
                            .any(|w| t[j].is(w)))
            })
            .filter(|&j| t[j].class == Class::Number)
            .collect();
        if run.len() >= 2 {
            let end = *run.last().expect("two numbers") + 1;
            let (parameter, named_at) = parameter_before(t, before);
            lists.push((parameter, run.iter().map(|&j| t[j].text.clone()).collect()));
            // From the name on ("C in {": "C" is no step of its own;
            // "learning rate": no training either).
            let from = named_at.min(before - 1);
            let end = end + usize::from(r.is(end, &["}", "]", ")", "）"]));
            r.mark(from, end - from);
            i = end;
            continue;
        }
        i += run.len().max(1);
    }
    if !lists.is_empty() {
        let parameter = lists
            .iter()
            .map(|(p, _)| p.as_str())
            .collect::<Vec<_>>()
            .join("_");
        let values: Vec<Vec<String>> = lists.into_iter().map(|(_, v)| v).collect();
        if values.len() > 1
            && let Some((at, n)) = find_any(t, &["for each", "for every", "for all"])
        {
            r.mark(at, n);
        }
        *slot = Some(FanOut {
            parameter,
            values: FanOutValues::List(cross(&values)),
        });
        return;
    }
    // Words after "for each X in" or "for each of the Xs": "for each region
    // in us, eu and asia", up to the next verb.
    if let Some((at, n)) = find_any(
        t,
        &[
            "for each",
            "for every",
            "each of",
            "for all",
            "loop over",
            "iterate over",
            "over the list",
        ],
    )
    .or_else(|| each_in(t))
    {
        let mut j = at + n;
        while r.is(
            j,
            &[
                "of",
                "the",
                "these",
                "those",
                "our",
                "my",
                "all",
                "following",
            ],
        ) {
            j += 1;
        }
        // "each of the names alice, bob": a plural noun names what varies;
        // "each of alice, bob and carol": the values come at once.
        let plural =
            |x: &Token| x.class == Class::Word && x.text.ends_with('s') && x.text.len() > 3;
        // "for each language: en, fr" names what varies first; "each of
        // alice, bob" lists the values at once.
        let of = (at + n..j).any(|k| r.is(k, &["of"]));
        let named_first = (r.is(at, &["for"]) && !of) || t.get(j).is_some_and(plural);
        let (parameter, from) =
            match (j..t.len().min(j + 4)).find(|&k| r.is(k, &["in", ":", "from", "="])) {
                Some(k) => (identifier(&t[j..k]), k + 1),
                None if named_first && t.get(j).is_some_and(|x| x.class == Class::Word) => {
                    (identifier(&t[j..j + 1]), j + 1)
                }
                None => ("item".to_owned(), j),
            };
        // A value may be several words: "debian 9.1, alpine 3.6".
        let mut values: Vec<String> = Vec::new();
        // "over the list [a, b]": the list's name, then its values.
        let from = from + usize::from(r.is(from + 1, &["["]) && !r.is(from, &["["]));
        let mut end = from;
        // "[a, b, c]": everything in the brackets is a value.
        if r.is(from, &["["]) {
            let close = (from..t.len())
                .find(|&k| r.is(k, &["]"]))
                .unwrap_or(t.len());
            values = t[from + 1..close]
                .iter()
                .filter(|x| matches!(x.class, Class::Word | Class::Number) && !x.is("and"))
                .map(|x| x.text.clone())
                .collect();
            end = (close + 1).min(t.len());
        }
        let bracketed = !values.is_empty();
        while let Some(x) = t.get(end).filter(|_| !bracketed) {
            if x.is("and") || x.is("or") || x.class == Class::Punct {
                end += 1;
                continue;
            }
            let verb = super::action::is_verb(&x.text)
                || lexicon::KINDS
                    .iter()
                    .any(|(_, ps)| ps.iter().any(|p| phrase_at(t, end, p).is_some()));
            let value = matches!(x.class, Class::Word | Class::Number | Class::Url)
                && !verb
                && ![
                    "the", "a", "an", "then", "to", "with", "on", "in", "of", "for",
                ]
                .iter()
                .any(|w| x.is(w));
            if !value {
                break;
            }
            // "alpine 3.6": a version belongs to the name before it.
            let version = x.class == Class::Number
                && end > 0
                && t[end - 1].class == Class::Word
                && values
                    .last()
                    .is_some_and(|v| v.ends_with(t[end - 1].text.as_str()));
            match values.last_mut() {
                Some(last) if version => {
                    last.push(' ');
                    last.push_str(&x.text);
                }
                _ => values.push(x.text.clone()),
            }
            end += 1;
        }
        if values.len() >= 2 {
            *slot = Some(FanOut {
                parameter,
                values: FanOutValues::List(values),
            });
            r.mark(at, end - at);
        }
    }
}

/// "every letter in [a, b]", "each exchange in coinbase, kraken": where
/// "each" or "every" is, with what varies named before "in".
pub(super) fn each_in(t: &[Token]) -> Option<(usize, usize)> {
    (0..t.len()).find_map(|k| {
        let is = |i: usize, w: &str| t.get(i).is_some_and(|x| x.is(w));
        ((is(k, "each") || is(k, "every")) && is(k + 2, "in")).then_some((k, 1))
    })
}

/// "for each of the 20 podcast episodes", "each of our 4 markets (us, uk,
/// de, jp)": a count right after "each of" is the fan-out, whatever is
/// counted (the values in brackets after it, when they are as many).
fn each_of_count(r: &mut Reader) -> Option<FanOut> {
    let t = r.t;
    let (at, n) = find_any(t, &["each of", "every one of"])?;
    let mut i = at + n;
    while r.is(i, &["the", "our", "these", "those", "my", "all"]) {
        i += 1;
    }
    let (v, m) = integer_at(t, i, true).filter(|(v, _)| *v >= 2)?;
    if r.used[i] {
        return None;
    }
    let noun = (i + m..t.len().min(i + m + 3))
        .rev()
        .find(|&k| t[k].class == Class::Word && t[k].text.ends_with('s'))
        .unwrap_or(i + m);
    let parameter = t
        .get(noun)
        .filter(|x| x.class == Class::Word)
        .map_or("item".to_owned(), |x| identifier(&[singular(x)]));
    let mut end = noun + 1;
    // "each of the three model names bert-base, roberta-base …": the values
    // follow, and the list reader takes them.
    if t.get(end).is_some_and(|x| {
        x.class == Class::Word
            && !super::action::is_verb(&x.text)
            && lexicon::kind(&t[end..end + 1]).is_none()
            && ![
                "in", "on", "at", "for", "from", "with", "to", "across", "of", "then", "we", "i",
            ]
            .iter()
            .any(|w| x.is(w))
    }) {
        return None;
    }
    let mut values = FanOutValues::Count(v);
    if r.is(end, &["(", "（"]) {
        let close = (end..t.len()).find(|&k| r.is(k, &[")", "）"]))?;
        let listed: Vec<String> = t[end + 1..close]
            .split(|x| x.is(",") || x.is("，") || x.is("、") || x.is("and"))
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|x| x.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|v| !v.is_empty())
            .collect();
        if listed.len() == v as usize {
            values = FanOutValues::List(listed);
        }
        end = close + 1;
    }
    // ("for each of" stays for the clause to see that a list opens.)
    r.mark(i, end.min(t.len()) - i);
    Some(FanOut { parameter, values })
}

fn singular(t: &Token) -> Token {
    let mut t = t.clone();
    if t.text.ends_with('s') && t.text.len() > 3 {
        t.text.pop();
    }
    t
}

/// "every combination of os (linux, darwin) and arch (amd64, arm64)":
/// the lists in parentheses, crossed.
fn matrix(r: &mut Reader) -> Option<FanOut> {
    let t = r.t;
    find_any(
        t,
        &[
            "combination",
            "combinations",
            "matrix",
            "cross product",
            "every pair",
            "grid",
        ],
    )?;
    let mut names = Vec::new();
    let mut lists: Vec<Vec<String>> = Vec::new();
    let mut marks = Vec::new();
    let mut i = 0;
    // "os (linux, darwin)", "depth in {3, 5}", "lr [0.1, 0.01]".
    while i < t.len() {
        let Some(closer) = [("(", ")"), ("{", "}"), ("[", "]")]
            .iter()
            .find(|(open, _)| t[i].is(open))
            .map(|(_, close)| *close)
        else {
            i += 1;
            continue;
        };
        let close = (i + 1..t.len()).find(|&k| t[k].is(closer))?;
        let values: Vec<String> = t[i + 1..close]
            .iter()
            .filter(|x| {
                matches!(x.class, Class::Word | Class::Number) && !x.is("and") && !x.is("or")
            })
            .map(|x| x.text.clone())
            .collect();
        if values.len() >= 2 {
            // The name before the list, past "in" / "=" / "of".
            let named = (0..i)
                .rev()
                .find(|&k| !["in", "=", "of", "over", ":"].iter().any(|w| t[k].is(w)));
            names.push(named.map_or("item".into(), |k| t[k].text.clone()));
            let from = named.unwrap_or(i);
            marks.push((from, close + 1 - from));
            lists.push(values);
        }
        i = close + 1;
    }
    // ("… and 64 (all 6 combinations)": one bracket is no matrix.)
    if lists.len() < 2 {
        return None;
    }
    for (from, n) in marks {
        r.mark(from, n);
    }
    if let Some((at, n)) = find_any(t, &["for every", "for each", "for all"]) {
        r.mark(at, n);
    }
    Some(FanOut {
        parameter: names.join("_"),
        values: FanOutValues::List(cross(&lists)),
    })
}

/// Every combination of the lists' values, in order: `[[a, b], [1, 2]]`
/// gives `a-1, a-2, b-1, b-2`.
fn cross(lists: &[Vec<String>]) -> Vec<String> {
    let mut crossed: Vec<String> = vec![String::new()];
    for list in lists {
        crossed = crossed
            .iter()
            .flat_map(|a| {
                list.iter().map(move |v| {
                    if a.is_empty() {
                        v.clone()
                    } else {
                        format!("{a}-{v}")
                    }
                })
            })
            .collect();
    }
    crossed
}

/// What varies, from the words before a list, and where those words start:
/// "batch sizes" → `batch_size`, "学习率试一下" → `learning_rate`, "learning
/// rate 分别取" → `learning_rate`. A verb before them is the step's, no name
/// ("train lr 0.1, 0.2").
fn parameter_before(t: &[Token], i: usize) -> (String, usize) {
    // "rank 取", "学习率试一下", "分别设为": the words that give the values.
    let mut end = i;
    while end > 0
        && ["取", "为", "设", "成", "试", "一", "下", "分", "别"]
            .iter()
            .any(|w| t[end - 1].is(w))
    {
        end -= 1;
    }
    if end > 0 && t[end - 1].class == Class::Cjk {
        let start = end.saturating_sub(5);
        let text: String = t[start..end].iter().map(|x| x.text.as_str()).collect();
        return CJK_PARAMS
            .iter()
            .find_map(|(w, p)| {
                let at = text.find(w)?;
                Some(((*p).to_owned(), start + text[..at].chars().count()))
            })
            .unwrap_or_else(|| ("item".to_owned(), end));
    }
    const NOT_NAMES: &[&str] = &[
        "with",
        "for",
        "of",
        "using",
        "the",
        "a",
        "different",
        "values",
        "from",
        "over",
        "across",
        "on",
        "and",
        "each",
        "every",
        "all",
    ];
    let mut taken: Vec<usize> = Vec::new();
    let mut k = end;
    while k > 0 && t[k - 1].class == Class::Word && taken.len() < 2 {
        k -= 1;
        // ("learning rate" names a value; "learning" is no training here.)
        let rate = t[k].is("learning") && t.get(k + 1).is_some_and(|x| x.text.starts_with("rate"));
        let model = !lexicon::models(&t[k..=k]).is_empty();
        // ("try k = 2, 3, 4": "try" asks for the runs.)
        let verb = super::action::is_verb(&t[k].text)
            || ["try", "run", "fit", "use"].iter().any(|w| t[k].is(w));
        // ("rank 取 8、16": before the words that give values, a name.)
        let given = end < i && taken.is_empty();
        if (verb && !rate && !given) || model {
            break;
        }
        // "batch sizes of 16, 32": small words before the name are skipped;
        // "xgboost with max_depth 3, 5": one before it ends the name.
        if NOT_NAMES.iter().any(|w| t[k].is(w)) {
            if taken.is_empty() {
                continue;
            }
            break;
        }
        taken.push(k);
    }
    let owned: Vec<Token> = taken.iter().rev().map(|&k| t[k].clone()).collect();
    (identifier(&owned), taken.last().copied().unwrap_or(end))
}

fn identifier(words: &[Token]) -> String {
    let parts: Vec<String> = words
        .iter()
        .filter(|w| w.class == Class::Word && !lexicon::is_filler(w))
        .map(|w| w.text.replace(['-', '.'], "_"))
        .collect();
    if parts.is_empty() {
        return "item".into();
    }
    let mut id = parts.join("_");
    if id.ends_with('s') && !id.ends_with("ss") && id.len() > 3 {
        id.pop();
    }
    if id.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        id.insert(0, '_');
    }
    id
}
