//! Readings before the clauses are grouped: a question asks for no
//! workflow, "X 就 Y" makes X a condition, and a run-on list of verbs is
//! cut before each.

use super::clause;
use super::lexicon;
use super::scan::{Class, Segment, Sep, Token, find_any};
use crate::decompose::Span;

/// "how do I install couler?", "Couler 是什么？": a question, which asks
/// for no workflow ("can you train …?" does).
pub(super) fn is_question(text: &str) -> bool {
    let t = text.trim().to_lowercase();
    if !(t.ends_with('?') || t.ends_with('？')) {
        return false;
    }
    let asks = [
        "how ", "what", "why ", "where ", "who ", "which ", "is ", "are ", "does ", "do i ",
        "did ", "should i", "can i ", "is it",
    ]
    .iter()
    .any(|w| t.starts_with(w));
    let zh = ["什么", "怎么", "为什么", "如何", "哪", "是否", "吗"]
        .iter()
        .any(|w| t.contains(w))
        && !["帮我", "请", "帮忙"].iter().any(|w| t.contains(w));
    asks || zh
}

/// "正面就打印正面", "大于 5 就打印 high": what comes before "就" is a
/// condition even without "如果"; it is read as if "如果" were there.
pub(super) fn implicit_ifs(mut segs: Vec<Segment>) -> Vec<Segment> {
    for i in 0..segs.len().saturating_sub(1) {
        // "flip a coin; heads: print 'you win'": an outcome before a colon.
        // ("for each of the genres drama, …, and horror: compute …" is a
        // list's last value.)
        let outcome = i > 0
            && segs[i + 1].after_colon
            && !in_list(&segs, i)
            && matches!(segs[i].tokens.as_slice(), [t] if t.class == Class::Word
                && !t.is_label()
                // ("Otherwise: publish_metrics" is the other branch.)
                && !lexicon::OTHERWISE.iter().any(|w| t.is(w)));
        if outcome {
            let t = &segs[i].tokens[0];
            let at = Span::new(t.span.start, t.span.start);
            segs[i].tokens.insert(
                0,
                Token {
                    text: "if".into(),
                    span: at,
                    class: Class::Word,
                    upper: false,
                },
            );
            continue;
        }
        if !segs[i + 1].after_then {
            continue;
        }
        // ("失败的话最多重试 3 次": a retry, no branch; its words go with it.)
        if clause::read(&segs[i + 1].tokens).retry.is_some() {
            let text: String = segs[i].tokens.iter().map(|t| t.text.as_str()).collect();
            if lexicon::FAILED_BEFORE_RETRY.contains(&text.as_str()) {
                let words = std::mem::take(&mut segs[i].tokens);
                segs[i + 1].tokens.splice(0..0, words);
                segs[i + 1].sep = segs[i].sep;
            }
            continue;
        }
        let tokens = &segs[i].tokens;
        let marked = (0..tokens.len()).any(|k| {
            lexicon::IF
                .iter()
                .chain(lexicon::UNLESS)
                .any(|p| super::scan::phrase_at(tokens, k, p).is_some())
        });
        let c = clause::read(tokens);
        // "评估通过就上线": the step before passing is the condition's subject.
        let passed = lexicon::PASS
            .iter()
            .chain(lexicon::FAIL)
            .chain(&["成功", "达标"])
            .any(|p| {
                let n = p.chars().count();
                tokens.len() >= n && super::scan::phrase_at(tokens, tokens.len() - n, p).is_some()
            });
        if marked || (c.kind.is_some() && !c.generic && !passed) {
            continue;
        }
        let Some(first) = tokens.first() else {
            continue;
        };
        let at = Span::new(first.span.start, first.span.start);
        let mark = |text: &str| Token {
            text: text.into(),
            span: at,
            class: Class::Cjk,
            upper: false,
        };
        segs[i].tokens.splice(0..0, [mark("如"), mark("果")]);
    }
    segs.retain(|s| !s.tokens.is_empty());
    segs
}

/// "load data clean data train logistic regression evaluate model": a
/// segment with three or more step verbs and no separator between them is
/// cut before each.
pub(super) fn split_run_ons(segs: Vec<Segment>) -> Vec<Segment> {
    let mut out = Vec::with_capacity(segs.len());
    for seg in segs {
        let t = &seg.tokens;
        let starts: Vec<usize> = (0..t.len())
            .filter(|&i| {
                t[i].class == Class::Word
                    && lexicon::kind_phrase(&t[i..]).is_some_and(|(_, at, _)| at == 0)
                    && (i == 0
                        || ![
                            "the", "a", "an", "to", "for", "on", "of", "with", "in", "by", "from",
                            "its", "their", "our", "my", "and",
                        ]
                        .iter()
                        .any(|w| t[i - 1].is(w)))
            })
            .collect();
        // "distributed training": kind words in a row are one phrase.
        let starts: Vec<usize> = starts
            .iter()
            .copied()
            .filter(|&i| i == 0 || !starts.contains(&(i - 1)))
            .collect();
        let worded = t.iter().any(|x| {
            // (and relative clauses: "keep whichever scores best")
            [
                "the",
                "a",
                "an",
                "it",
                "them",
                "into",
                "to",
                "then",
                "whichever",
                "which",
                "that",
                "whose",
            ]
            .iter()
            .any(|w| x.is(w))
        });
        if starts.len() < 3 || starts[0] != 0 || worded {
            out.push(seg);
            continue;
        }
        for (n, w) in starts.iter().enumerate() {
            let end = starts.get(n + 1).copied().unwrap_or(t.len());
            out.push(Segment {
                sep: if n == 0 { seg.sep } else { Sep::Sequence },
                tokens: t[*w..end].to_vec(),
                order: if n == 0 { seg.order } else { None },
                after_colon: n == 0 && seg.after_colon,
                after_then: n == 0 && seg.after_then,
                beside: n == 0 && seg.beside,
            });
        }
    }
    out
}

/// "同时从支付系统和订单系统拉数据", "把图片和文本分开预处理，两个同时跑":
/// two objects before one verb, said to run side by side or apart. The
/// first gets the verb too ("同时从支付系统拉数据"), so each is a step of its
/// own; the marker then groups them as it would any two steps.
pub(super) fn shared_verbs(mut segs: Vec<Segment>) -> Vec<Segment> {
    // ("对 A、B、C 分别计算": "分别" over a list is a fan-out.)
    const APART: &[&str] = &["分开", "各自", "单独"];
    for i in 0..segs.len().saturating_sub(1) {
        let (first, next) = (&segs[i], &segs[i + 1]);
        let chinese = first.tokens.iter().any(|t| t.class == Class::Cjk);
        // Two objects only: the first opens the coordination.
        if next.sep != Sep::And || first.sep == Sep::And || !chinese {
            continue;
        }
        let c = clause::read(&first.tokens);
        if c.kind.is_some() || c.leftover.is_empty() {
            continue;
        }
        // ("召回和排序两个模型并行训练": models to train are read as such.)
        let Some(kind) = clause::read(&next.tokens).kind.filter(|k| !k.trains()) else {
            continue;
        };
        // Where its verb starts: the shortest end of it that still asks
        // for its step ("拉前一天的数据" of "订单系统拉前一天的数据"). A verb
        // first ("和训练模型") is a step of its own.
        let Some(at) = (1..next.tokens.len())
            .rev()
            .find(|&k| clause::read(&next.tokens[k..]).kind == Some(kind))
        else {
            continue;
        };
        let sentence = segs[i..]
            .iter()
            .enumerate()
            .take_while(|(k, s)| *k == 0 || s.sep <= Sep::Comma);
        let apart = sentence.map(|(_, s)| &s.tokens).any(|tokens| {
            find_any(tokens, lexicon::PARALLEL).is_some() || find_any(tokens, APART).is_some()
        });
        if apart {
            let verb = next.tokens[at..].to_vec();
            segs[i].tokens.extend(verb);
        }
    }
    segs
}

/// The segment is a value of a list opened before it in its sentence
/// ("for each of the genres drama, comedy and horror").
fn in_list(segs: &[Segment], i: usize) -> bool {
    let mut k = i;
    while k > 0 && matches!(segs[k].sep, Sep::And | Sep::Comma) && !segs[k].after_colon {
        k -= 1;
        if clause::read(&segs[k].tokens).opens_list {
            return true;
        }
    }
    false
}

/// "for each of the genres drama, comedy, action and horror compute the
/// median gross": the list's last value and the step run for each share a
/// segment; the step is cut off at its verb, as if a colon came before it.
/// ("for each file count its lines": so is the step after what opens the
/// list.)
pub(super) fn list_tails(mut segs: Vec<Segment>) -> Vec<Segment> {
    let mut i = 0;
    while i < segs.len() {
        let tokens = &segs[i].tokens;
        // ("for each of the 12 stores": a noun after its count; "(12 runs
        // in total)": words in brackets.)
        let open = |j: usize| {
            let n = |b: &[&str]| {
                tokens[..j]
                    .iter()
                    .filter(|t| b.iter().any(|x| t.is(x)))
                    .count()
            };
            n(&["(", "（"]) > n(&[")", "）"])
        };
        // (The clause's first verb, after at least one word.)
        let verb = tokens
            .iter()
            .position(|t| super::action::is_verb(&t.text))
            .filter(|&j| {
                j >= 1
                    && tokens[j].class == Class::Word
                    && !(tokens[j - 1].class == Class::Number && tokens[j].text.ends_with('s'))
                    && !open(j)
                    && tokens[j + 1..].iter().any(|t| t.class != Class::Punct)
            });
        let opens = || {
            let c = clause::read(tokens);
            (c.opens_list || c.fan_out.is_some()) && c.kind.is_none()
        };
        let cut = verb.filter(|&j| {
            (in_list(&segs, i) || opens()) && clause::read(&tokens[j..]).kind.is_some()
        });
        if let Some(j) = cut {
            let rest = segs[i].tokens.split_off(j);
            segs.insert(
                i + 1,
                Segment {
                    sep: Sep::Comma,
                    tokens: rest,
                    order: None,
                    after_colon: true,
                    after_then: false,
                    beside: false,
                },
            );
        }
        i += 1;
    }
    segs
}
