//! What a clause's shape says besides its kind: the alternatives of a
//! choice, a count of models, a pipeline preamble, a kind's phrase that is
//! only an object, the words that change a kind, and a condition on a
//! step's outcome.

use super::lexicon;
use super::scan::{Class, Token, find_any, phrase_at};
use crate::decompose::{Comparison, ConditionSpec, TaskKind};

/// "pick either branch_a or branch_b", "随机选择分支 a 或分支 b": the
/// alternatives of a choice.
pub(super) fn branches(t: &[Token]) -> Vec<String> {
    let choice = find_any(
        t,
        &[
            "choose", "pick", "select", "decide", "branch", "选择", "挑选", "决定", "选",
        ],
    )
    .is_some();
    if !choice {
        return Vec::new();
    }
    let or = (0..t.len()).find(|&i| {
        ["or", "或", "或者", "还是", "and"]
            .iter()
            .any(|w| t[i].is(w) || phrase_at(t, i, w).is_some())
            && i > 0
    });
    let Some(or) = or else { return Vec::new() };
    let width = ["或者", "还是"]
        .iter()
        .find_map(|w| phrase_at(t, or, w))
        .unwrap_or(1);
    let name = |k: usize| -> Option<String> {
        let x = t.get(k)?;
        (matches!(x.class, Class::Word | Class::Number)
            && !["the", "an", "either", "one", "branch"]
                .iter()
                .any(|w| x.is(w)))
        .then(|| x.text.clone())
    };
    // Past "分支" / "branch" after the "or".
    let mut after = or + width;
    while t
        .get(after)
        .is_some_and(|x| x.is("branch") || x.is("分") || x.is("支") || x.is("the"))
    {
        after += 1;
    }
    match (name(or - 1), name(after)) {
        (Some(a), Some(b)) if a != b => vec![a, b],
        _ => Vec::new(),
    }
}

/// "train the recall and ranking models", "两个模型": how many models.
pub(super) fn model_count(t: &[Token]) -> Option<u32> {
    (0..t.len()).find_map(|i| {
        let (n, k) = match t[i].text.as_str() {
            "two" | "both" => (2, 1),
            "three" => (3, 1),
            _ => match lexicon::integer_at(t, i, false) {
                Some((n, k)) if (2..=8).contains(&n) && t[i].class == Class::Cjk => (n, k),
                _ => return None,
            },
        };
        let rest = i + k + usize::from(t.get(i + k).is_some_and(|x| x.is("个")));
        ["models", "模型"]
            .iter()
            .any(|w| phrase_at(t, rest, w).is_some())
            .then_some(n)
    })
}

/// "build a pipeline that", "i need a workflow to", "帮我搭建一个流水线": how
/// many tokens at `start` only ask for the workflow itself.
pub(super) fn preamble(t: &[Token], start: usize) -> Option<usize> {
    let mut i = start;
    let skip = [
        "please", "can", "could", "you", "we", "i", "need", "want", "would", "like", "to", "let's",
        "lets", "let", "us", "build", "create", "make", "write", "set", "up", "define", "design",
        "give", "me", "generate", "draft", "a", "an", "the", "simple", "small", "new", "ml",
        "data", "training", "kubeflow", "argo", "airflow", "couler", "帮", "我", "们", "请", "搭",
        "建", "构", "创", "设", "计", "写", "一", "个", "条", "需", "要", "想",
    ];
    while t.get(i).is_some_and(|x| skip.iter().any(|w| x.is(w))) {
        i += 1;
    }
    let nouns = [
        "pipeline",
        "workflow",
        "dag",
        "flow",
        "流水线",
        "工作流",
        "管道",
        "管线",
    ];
    let n = nouns.iter().find_map(|p| phrase_at(t, i, p))?;
    i += n;
    let joins = [
        "that", "which", "to", "for", "with", "where", "in", "：", ":", "，", "来",
    ];
    if t.get(i).is_some_and(|x| joins.iter().any(|w| x.is(w))) {
        i += 1;
    }
    Some(i - start)
}

/// "generate a text file with the message hello world": the kind's phrase
/// sits behind a preposition after another verb, so it is no request of
/// its own; the clause is that verb's.
pub(super) fn behind_preposition(free: &[Token], at: usize) -> bool {
    let Some(first) = free[..at].iter().position(|t| t.class == Class::Word) else {
        return false;
    };
    super::action::is_verb(&free[first].text)
        && lexicon::kind(&free[first..first + 1]).is_none()
        && free[first + 1..at].iter().any(|t| {
            [
                "with", "from", "by", "using", "via", "that", "which", "for", "in",
            ]
            .iter()
            .any(|w| t.is(w))
        })
}

/// What the words around a kind's phrase change: a model written to
/// ONNX is an export, data loaded *into* a warehouse too, and models
/// combined are an ensemble.
/// What a data check acts on.
const DATA_WORDS: [&str; 14] = [
    "files", "file", "data", "dataset", "rows", "records", "schema", "parquet", "csv", "table",
    "tables", "events", "数据", "文件",
];

pub(super) fn refine(kind: TaskKind, free: &[Token]) -> TaskKind {
    let has = |words: &[&str]| find_any(free, words).is_some();
    let formats = [
        "onnx",
        "torchscript",
        "tflite",
        "tensorrt",
        "gguf",
        "safetensors",
        "coreml",
    ];
    match kind {
        TaskKind::Preprocess | TaskKind::Register | TaskKind::Load if has(&formats) => {
            TaskKind::Export
        }
        TaskKind::Preprocess | TaskKind::Evaluate | TaskKind::Load | TaskKind::Export
            if has(&[
                "into a report",
                "into a summary",
                "into a dashboard",
                "成报告",
                "成报表",
            ]) =>
        {
            TaskKind::Report
        }
        TaskKind::Load if has(&["into", "加载到", "写到", "导入到"]) => TaskKind::Export,
        // "从数据仓库导出用户行为": exporting from a source reads it.
        TaskKind::Export
            if free
                .iter()
                .find(|t| !t.text.is_empty())
                .is_some_and(|t| t.is("从")) =>
        {
            TaskKind::Load
        }
        // "validate the incoming parquet files": data is checked, no model.
        TaskKind::Evaluate
            if has(&["validate", "verify", "check", "校验", "检查"])
                && has(&DATA_WORDS)
                && !has(&["model", "models", "模型"]) =>
        {
            TaskKind::QualityCheck
        }
        TaskKind::Preprocess
            if has(&["models", "predictions", "the model", "模型"])
                && has(&["combine", "merge", "concatenate", "合并"]) =>
        {
            TaskKind::Ensemble
        }
        k => k,
    }
}

/// Verbs that link a subject to what it is: "the lift is significant",
/// "something looks anomalous".
const LINKING: &[&str] = &["is", "are", "was", "looks", "seems", "appears", "becomes"];

/// A step's outcome: "if it lands heads", "if the result is 'big'", "if
/// heads", "如果是正面": the `result` a generic step writes equals a word.
/// `strict`: only the "is …" forms ("when it is heads").
pub(super) fn read_outcome(t: &[Token], i: usize, strict: bool) -> Option<(ConditionSpec, usize)> {
    let mut j = i;
    let subject = [
        "it",
        "the result",
        "the outcome",
        "the coin",
        "the flip",
        "the output",
        "the answer",
        "the value",
        "its result",
        "its output",
        "结果",
        "它",
    ];
    let mut metric = "result".to_owned();
    if let Some(n) = subject.iter().find_map(|p| phrase_at(t, j, p)) {
        j += n;
    } else {
        // "if the lift is significant": the lift is what is read.
        let mut k = j + usize::from(
            ["the", "any", "its", "all", "every"]
                .iter()
                .any(|w| t.get(j).is_some_and(|x| x.is(w))),
        );
        while t
            .get(k + 1)
            .is_some_and(|x| x.class == Class::Word && !LINKING.iter().any(|w| x.is(w)))
            && k < j + 3
        {
            k += 1;
        }
        if t.get(k)
            .is_some_and(|x| x.class == Class::Word && !lexicon::is_filler(x))
            && t.get(k + 1)
                .is_some_and(|x| LINKING.iter().any(|w| x.is(w)))
        {
            metric = t[k].text.replace('-', "_");
            j = k + 1;
        }
    }
    while t.get(j).is_some_and(|x| x.is("'")) {
        j += 1;
    }
    let verbs = [
        "lands on",
        "comes up",
        "comes out",
        "turns up",
        "is",
        "was",
        "lands",
        "shows",
        "returns",
        "says",
        "equals",
        "'s",
        "s",
        "looks",
        "seems",
        "appears",
        "becomes",
        "是",
        "为",
        "等于",
    ];
    let verb = verbs.iter().find_map(|p| phrase_at(t, j, p));
    if strict && verb.is_none() {
        return None;
    }
    j += verb.unwrap_or(0);
    while t
        .get(j)
        .is_some_and(|x| x.class == Class::Punct && !x.is(",") && !x.is("，"))
    {
        j += 1;
    }
    // "if v7 is not worse": anything but that word.
    let not = t.get(j).is_some_and(|x| x.is("not"));
    j += usize::from(not);
    let first = t.get(j)?;
    let (value, end) = match first.class {
        Class::Word
            if !lexicon::is_filler(first)
                && lexicon::kind(std::slice::from_ref(first)).is_none() =>
        {
            (first.text.clone(), j + 1)
        }
        Class::Number => (first.text.clone(), j + 1),
        Class::Cjk => match super::kinds::cjk_word_at(t, j) {
            Some((n, en)) => (en.to_owned(), j + n),
            None => {
                let mut k = j;
                while k < j + 2
                    && t.get(k).is_some_and(|x| {
                        x.class == Class::Cjk && !"就则那么的话时".contains(x.text.as_str())
                    })
                {
                    k += 1;
                }
                let zh: String = t[j..k].iter().map(|x| x.text.as_str()).collect();
                (zh, k)
            }
        },
        _ => return None,
    };
    let end = end + usize::from(t.get(end).is_some_and(|x| x.is("'") || x.is("\"")));
    Some((
        ConditionSpec {
            metric,
            operator: if not { Comparison::Ne } else { Comparison::Eq },
            value,
        },
        end,
    ))
}
