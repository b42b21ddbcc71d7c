//! Markers that shape a list of clauses without being steps: the number
//! of a list item ("1.", "Step 2:", "第三步") and "once both are done" /
//! "等B和C都完成后", after which a clause waits for the ones before.

use super::scan::{Class, Order, Token, phrase_at};

/// the number the list expects, so "batch sizes 100, 200. Then" is no item.
pub(super) fn list_marker(tokens: &[Token], i: usize, starts: bool, next: u32) -> Option<usize> {
    let is =
        |k: usize, words: &[&str]| tokens.get(k).is_some_and(|t| words.iter().any(|w| t.is(w)));
    let content = |k: usize| {
        tokens
            .get(k)
            .is_some_and(|t| matches!(t.class, Class::Word | Class::Cjk | Class::Code))
    };
    let number = |k: usize| {
        tokens
            .get(k)
            .filter(|t| t.class == Class::Number)
            .and_then(|t| t.text.parse::<u32>().ok())
    };
    // "- load", "* load", "• load" at the start of a line.
    let line_start = i == 0 || tokens[i - 1].is("\n");
    if starts && line_start && is(i, &["-", "*", "•"]) && content(i + 1) {
        return Some(1);
    }
    // "(1) load", "1) load", "1. load", "1、加载"
    let open = usize::from(is(i, &["(", "（"]));
    if let Some(n) = number(i + open)
        && (n == next || (starts && n == 1))
        && is(i + open + 1, &[".", ")", "）", "、", ":", "："])
        && content(i + open + 2)
    {
        return Some(open + 2);
    }
    // "Step 2: train", "step 2 - train"
    if starts && is(i, &["step"]) && number(i + 1).is_some() {
        let punct = usize::from(is(i + 2, &[":", "：", ".", "-", ")", ","]));
        return Some(2 + punct);
    }
    // "第一步", "第2步："
    if is(i, &["第"]) {
        let mut k = i + 1;
        while tokens.get(k).is_some_and(|t| {
            t.class == Class::Number
                || (t.class == Class::Cjk && "一二三四五六七八九十".contains(t.text.as_str()))
        }) {
            k += 1;
        }
        if k > i + 1 && is(k, &["步"]) {
            return Some(k + 1 - i + usize::from(is(k + 1, &[":", "：", "，", ","])));
        }
    }
    None
}

#[rustfmt::skip]
const WAIT_FILLER: &[&str] = &[
    "both", "all", "they", "them", "these", "those", "the", "two", "three", "of", "are", "is",
    "have", "has", "been", "steps", "step", "tasks", "task", "above", "previous", "ones",
    "everything", "it", "that", "this", "its", "their", "and", "or", ",", "jobs", "branches",
    "parallel", "first", "prior", "earlier", "successfully", "one", "four", "five", "upstream",
    "other", "others", "rest", "running", "it's", "they're", "that's", "'s", "'", "s",
];
#[rustfmt::skip]
const DONE: &[&str] = &[
    "done", "finished", "finish", "finishes", "complete", "completed", "completes", "succeeded",
    "succeed", "succeeds", "ready", "over", "through", "end", "ended", "ends",
];

/// "once both are done", "when A and B finish", "after all of them
/// complete", "wait for both to finish", "等B和C都完成后", "在…都完成之后":
/// how many tokens the marker takes at `i`.
pub(super) fn done_marker(tokens: &[Token], i: usize) -> Option<usize> {
    let t = tokens.get(i)?;
    if t.class == Class::Word {
        let open = [
            "once",
            "when",
            "after",
            "wait for",
            "waiting for",
            "as soon as",
        ]
        .iter()
        .find_map(|p| phrase_at(tokens, i, p))?;
        let mut k = i + open;
        while k < tokens.len() && k < i + open + 8 {
            let w = &tokens[k];
            if DONE.iter().any(|d| w.is(d)) {
                // "wait for both to finish"
                return Some(k + 1 - i);
            }
            let filler = WAIT_FILLER.iter().any(|f| w.is(f)) || w.is_label() || w.is("to");
            if !filler {
                break;
            }
            k += 1;
        }
        // "wait for both", "wait for them" (not "wait for the _SUCCESS flag")
        let ends = tokens.get(k).is_none_or(|t| {
            [",", ".", ";", "，", "。", "；", "then", "and", "before"]
                .iter()
                .any(|w| t.is(w))
        });
        if tokens[i].is("wait") && k > i + open && ends {
            return Some(k - i);
        }
        return None;
    }
    if let Some(n) = named_again_done(tokens, i) {
        return Some(n);
    }
    if !(t.is("等") || t.is("在") || t.is("待") || t.is("当")) {
        return None;
    }
    let mut k = i + 1;
    while k < tokens.len() && k < i + 12 {
        for done in ["完成", "结束", "跑完", "做完", "执行完"] {
            if let Some(n) = phrase_at(tokens, k, done) {
                let after = ["之后", "以后", "后"]
                    .iter()
                    .find_map(|p| phrase_at(tokens, k + n, p))
                    .unwrap_or(0);
                return (k > i + 1).then_some(k + n + after - i);
            }
        }
        // "当训练完成后": the step it waits for, named by its kind.
        if let Some((_, 0, n)) = super::lexicon::kind_phrase(&tokens[k..])
            && tokens[k].class == Class::Cjk
        {
            k += n;
            continue;
        }
        let w = &tokens[k];
        let inside = w.is_label()
            || (w.class == Class::Cjk
                && "和与及、都全部所有上述前面的个两步骤任务它们这些均".contains(w.text.as_str()))
            || w.class == Class::Word;
        if !inside {
            return None;
        }
        k += 1;
    }
    None
}

/// "拉取成功后写入", "审批通过后部署", "训练完后评估": a step asked for
/// before, named again as done, says when the next one starts.
fn named_again_done(tokens: &[Token], i: usize) -> Option<usize> {
    use super::lexicon::kind_phrase;
    if tokens[i].class != Class::Cjk {
        return None;
    }
    // The kind of step, or the Chinese verb of one the library has no
    // template for ("审批").
    let step_at = |j: usize, end: usize| -> Option<(String, usize)> {
        match kind_phrase(&tokens[j..end]) {
            Some((k, 0, n)) => Some((k.to_string(), n)),
            _ => super::kinds::cjk_word_at(&tokens[..end], j)
                .filter(|(_, en)| !super::kinds::is_cjk_noun(en))
                .map(|(n, en)| (en.to_owned(), n)),
        }
    };
    let (kind, n) = step_at(i, tokens.len())?;
    let m = ["成功", "通过", "完成", "结束", "完", "好"]
        .iter()
        .find_map(|d| phrase_at(tokens, i + n, d))?;
    let after = ["之后", "以后", "后"]
        .iter()
        .find_map(|p| phrase_at(tokens, i + n + m, p))?;
    // (The step a clause asks for is its first kind: "部署到预发环境做冒烟
    // 测试" deploys, and a later "测试通过后" asks for the test.)
    let mut before = false;
    let mut start = 0;
    while start < i && !before {
        let end = (start..i)
            .find(|&k| tokens[k].class == Class::Punct)
            .unwrap_or(i);
        let first = kind_phrase(&tokens[start..end])
            .map(|(k, _, _)| k.to_string())
            .or_else(|| (start..end).find_map(|k| step_at(k, end).map(|(kind, _)| kind)));
        before = first.is_some_and(|k| k == kind);
        start = end + 1;
    }
    before.then_some(n + m + after)
}

/// "alice、bob、carol": the 、 at `i` (`n` tokens) is inside a list of
/// names, one phrase; so are Chinese names after "each" ("分别部署到北京、
/// 上海、新加坡三个机房").
pub(super) fn between_names(tokens: &[Token], i: usize, n: usize) -> bool {
    let name = |t: &Token| matches!(t.class, Class::Word | Class::Number);
    tokens[i].is("、")
        && i > 0
        && ((name(&tokens[i - 1]) && tokens.get(i + n).is_some_and(name))
            || each_before(tokens, i)
            || each_after(tokens, i))
}

/// "对用户、商品、店铺三类实体分别计算特征": the things listed are counted
/// or given a run each after `i`, in its clause.
fn each_after(tokens: &[Token], i: usize) -> bool {
    // ("APP 日志清洗、Web 日志清洗…这三个任务并行跑": steps, listed.)
    let start = tokens[..i]
        .iter()
        .rposition(|t| t.class == Class::Punct)
        .map_or(0, |p| p + 1);
    if super::lexicon::kind_phrase(&tokens[start..i]).is_some() {
        return false;
    }
    let end = tokens[i..]
        .iter()
        .position(|t| t.class == Class::Punct && !t.is("、"))
        .map_or(tokens.len(), |p| i + p);
    (i..end).any(|k| {
        ["分别", "各自"]
            .iter()
            .any(|w| phrase_at(tokens, k, w).is_some())
            || super::lexicon::integer_at(tokens, k, true).is_some_and(|(v, n)| {
                v >= 2
                    && tokens
                        .get(k + n)
                        .is_some_and(|c| super::lexicon::CLASSIFIERS.iter().any(|w| c.is(w)))
            })
    })
}

/// "分别部署到北京、上海…": "each" comes before `i` in its clause.
fn each_before(tokens: &[Token], i: usize) -> bool {
    let start = tokens[..i]
        .iter()
        .rposition(|t| t.class == Class::Punct && !t.is("、"))
        .map_or(0, |p| p + 1);
    (start..i).any(|k| phrase_at(tokens, k, "分别").is_some())
}

/// "训练完直接部署", "清洗完再聚合": a step's verb, then "完", opening a
/// clause when no step of that kind came before: it is a step of its own,
/// and what follows runs after it. Its verb's and its marker's lengths.
/// (Once a step of that kind was asked for, "训练完" names it again.)
pub(super) fn done_first(tokens: &[Token], i: usize) -> Option<(usize, usize)> {
    use super::lexicon::kind_phrase;
    let (kind, 0, n) = kind_phrase(&tokens[i..])? else {
        return None;
    };
    if tokens[i].class != Class::Cjk {
        return None;
    }
    let m = ["完成", "完了", "完"]
        .iter()
        .find_map(|d| phrase_at(tokens, i + n, d))?;
    let after = ["之后", "以后", "后"]
        .iter()
        .find_map(|p| phrase_at(tokens, i + n + m, p))
        .unwrap_or(0);
    // Something to do after it, in the same clause.
    let rest = tokens.get(i + n + m + after)?;
    let asked = (0..i).any(|k| matches!(kind_phrase(&tokens[k..i]), Some((x, 0, _)) if x == kind));
    (rest.class == Class::Cjk && !asked).then_some((n, m + after))
}

/// An order word orders steps only next to a step's name ("after
/// cleaning", "训练之前", "after build_segments"), not in "retry after
/// failures".
pub(super) fn names_step(tokens: &[Token], at: usize, width: usize, order: Order) -> bool {
    const NEAR: usize = 4;
    let near = match order {
        Order::PrecedesPrevious => &tokens[at.saturating_sub(NEAR)..at],
        Order::Before | Order::After => &tokens[at + width..(at + width + NEAR).min(tokens.len())],
    };
    super::lexicon::kind(near).is_some()
        || near.first().is_some_and(|t| t.is_label() || t.is_task_id())
}

/// "通过了再训练", "三项都通过才注册", "没问题后再全量": after a word
/// saying the step before passed or failed, "再" and "才" (with "了" or
/// "后" before them) say what runs on that outcome, as "就" does; how many
/// tokens say it. (Not when the clause so far, `current`, asks for a step:
/// "等人工审批通过后再部署" waits for the approval, then deploys.)
pub(super) fn on_outcome(tokens: &[Token], i: usize, current: &[Token]) -> Option<usize> {
    let is = |k: usize, w: &str| tokens.get(k).is_some_and(|t| t.is(w));
    let n = if is(i, "再") || is(i, "才") {
        1
    } else if (is(i, "了") || is(i, "后")) && (is(i + 1, "再") || is(i + 1, "才")) {
        2
    } else {
        return None;
    };
    let before: String = tokens[i.saturating_sub(4)..i]
        .iter()
        .map(|t| t.text.as_str())
        .collect();
    (super::lexicon::PASS
        .iter()
        .chain(super::lexicon::FAIL)
        .any(|w| w.chars().next().is_some_and(super::scan::is_cjk) && before.ends_with(w))
        // (Read last: the segmenter asks at every token.)
        && super::clause::read(current).kind.is_none())
    .then_some(n)
}
