//! Fan-outs: one instance per value of a list ("batch sizes 100, 200 and
//! 300", "for each of the names alice, bob and carol"), a range ("shards 1
//! to 20"), a count ("five folds", "each of the 10 test shards") or every
//! combination of several lists ("os (linux, darwin) and arch (amd64)").

use super::clause::Reader;
use super::lexicon::{self, integer_at};
use super::scan::{Class, Token, find_any, phrase_at};
use crate::decompose::{FanOut, FanOutValues};

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
    if let Some(m) = matrix(r) {
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
            parameter: parameter_before(t, from),
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
        if noun_at(u).is_none() && t.get(u).is_some_and(|x| x.class == Class::Word) {
            u += 1;
        }
        if let Some((noun, len)) = noun_at(u)
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
    // Lists: two or more numbers in a row ("batch sizes 100, 200 and 300").
    let mut i = 0;
    while i < t.len() {
        let run: Vec<usize> = (i..t.len())
            .take_while(|&j| !r.used[j] && (t[j].class == Class::Number || t[j].is("or")))
            .filter(|&j| t[j].class == Class::Number)
            .collect();
        if run.len() >= 2 {
            let end = *run.last().expect("two numbers") + 1;
            *slot = Some(FanOut {
                parameter: parameter_before(t, i),
                values: FanOutValues::List(run.iter().map(|&j| t[j].text.clone()).collect()),
            });
            r.mark(i.saturating_sub(2), end - i.saturating_sub(2));
            return;
        }
        i += run.len().max(1);
    }
    // Words after "for each X in" or "for each of the Xs": "for each region
    // in us, eu and asia", up to the next verb.
    if let Some((at, n)) = find_any(t, &["for each", "for every", "each of", "for all"]) {
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
        let (parameter, from) =
            match (j..t.len().min(j + 4)).find(|&k| r.is(k, &["in", ":", "from", "="])) {
                Some(k) => (identifier(&t[j..k]), k + 1),
                None if t.get(j).is_some_and(|x| x.class == Class::Word) => {
                    (identifier(&t[j..j + 1]), j + 1)
                }
                None => return,
            };
        let mut values = Vec::new();
        let mut end = from;
        while let Some(x) = t.get(end) {
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
                && !lexicon::is_filler(x);
            if !value {
                break;
            }
            values.push(x.text.clone());
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
        ],
    )?;
    let mut names = Vec::new();
    let mut lists: Vec<Vec<String>> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if !t[i].is("(") {
            i += 1;
            continue;
        }
        let close = (i + 1..t.len()).find(|&k| t[k].is(")"))?;
        let values: Vec<String> = t[i + 1..close]
            .iter()
            .filter(|x| {
                matches!(x.class, Class::Word | Class::Number) && !x.is("and") && !x.is("or")
            })
            .map(|x| x.text.clone())
            .collect();
        if values.len() >= 2 {
            names.push(
                i.checked_sub(1)
                    .map_or("item".into(), |k| t[k].text.clone()),
            );
            lists.push(values);
            r.mark(i.saturating_sub(1), close + 2 - i);
        }
        i = close + 1;
    }
    if lists.len() < 2 {
        return None;
    }
    let mut crossed: Vec<String> = vec![String::new()];
    for list in &lists {
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
    if let Some((at, n)) = find_any(t, &["for every", "for each", "for all"]) {
        r.mark(at, n);
    }
    Some(FanOut {
        parameter: names.join("_"),
        values: FanOutValues::List(crossed),
    })
}

/// What varies, from the words before a list: "batch sizes" → `batch_size`.
fn parameter_before(t: &[Token], i: usize) -> String {
    if i > 0 && t[i - 1].class == Class::Cjk {
        let start = i.saturating_sub(5);
        let text: String = t[start..i].iter().map(|x| x.text.as_str()).collect();
        return CJK_PARAMS
            .iter()
            .find(|(w, _)| text.contains(w))
            .map_or_else(|| "item".to_owned(), |(_, p)| (*p).to_owned());
    }
    let words: Vec<&Token> = t[..i]
        .iter()
        .rev()
        .take_while(|x| x.class == Class::Word)
        .filter(|x| {
            !matches!(
                x.text.as_str(),
                "with"
                    | "for"
                    | "of"
                    | "using"
                    | "the"
                    | "a"
                    | "different"
                    | "values"
                    | "from"
                    | "over"
                    | "across"
                    | "on"
                    | "and"
            )
        })
        .take(2)
        .collect();
    let owned: Vec<Token> = words.into_iter().rev().cloned().collect();
    identifier(&owned)
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
