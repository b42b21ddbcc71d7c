//! Markers that shape a list of clauses without being steps: the number
//! of a list item ("1.", "Step 2:", "第三步") and "once both are done" /
//! "等B和C都完成后", after which a clause waits for the ones before.

use super::scan::{Class, Token, phrase_at};

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
