//! The words the offline planner knows, in English and Chinese.

use super::scan::{Class, Token, phrase_at};
use crate::decompose::TaskKind;

pub use super::kinds::{KINDS, MODELS};

pub const PARALLEL: &[&str] = &[
    "in parallel",
    "parallel",
    "concurrently",
    "simultaneously",
    "at the same time",
    "side by side",
    "meanwhile",
    "in the meantime",
    "both",
    "并行",
    "与此同时",
    "同时",
    "并发",
    // "（两个一起拉）": together, of running; "一起合并" stays one step.
    "两个一起",
    "三个一起",
    "一起跑",
    "一起拉",
    "一起执行",
    "一起运行",
];

pub const IF: &[&str] = &[
    "on success",
    "if successful",
    "if it succeeds",
    "if they pass",
    "if all tests pass",
    "only if",
    "if",
    "elif",
    "when",
    "provided that",
    "如果",
    "假如",
    "要是",
    "只有",
    "仅当",
    "只要",
    "若",
    "当",
];
pub const UNLESS: &[&str] = &["unless", "除非"];
/// "do NOT deploy", "skip evaluation", "不要发通知": what the user asks not
/// to have, at the start of a clause.
pub const NEGATION: &[&str] = &[
    "do not",
    "don't",
    "dont",
    "never",
    "no need to",
    "there is no need to",
    "skip",
    "we do not need to",
    "we don't need to",
    "不要",
    "不用",
    "别",
    "无需",
    "不需要",
    "跳过",
    "不必",
];
/// "otherwise do nothing", "没有差异就什么都不做", "不然就算了": a branch
/// that asks for nothing.
pub const NOTHING: &[&str] = &[
    "do nothing",
    "does nothing",
    "nothing happens",
    "nothing else",
    // ("otherwise keep the old one": nothing changes.)
    "keep the old one",
    "keep the current one",
    "keep the existing one",
    "keep the old model",
    "keep the current model",
    "keep the old version",
    "keep the current version",
    "leave it as is",
    "leave everything as is",
    "什么都不做",
    "什么也不做",
    "啥也不做",
    "啥都不做",
    "不做任何",
    "就算了",
    "算了",
    "不用管",
];
/// Words before a negation that do not change it: "just skip …", "也不用 …".
pub const BEFORE_NEGATION: &[&str] = &[
    "just", "and", "but", "please", "also", "so", "先", "也", "就", "但", "并且", "而且", "还",
];
pub const OTHERWISE: &[&str] = &["otherwise", "else", "if not", "否则", "不然", "要不然"];
/// "notify us whatever happens": an exit handler.
pub const ALWAYS: &[&str] = &[
    "whatever happens",
    "regardless of the outcome",
    "regardless of the result",
    "regardless of outcome",
    "regardless of success",
    "no matter the outcome",
    "whatever the outcome",
    "whatever the result",
    "whatever the status",
    "whatever its status",
    "either way",
    "pass or fail",
    "succeeds or fails",
    "whether or not it succeeds",
    "always",
    "on exit",
    "exit handler",
    "exit task",
    "exit step",
    "no matter what",
    "whether it succeeds or fails",
    "whether it succeeded or failed",
    "success or failure",
    "even if it fails",
    "even on failure",
    "when the run is over",
    "when the run finishes",
    "when the run ends",
    "when the workflow is done",
    "when everything is done",
    "at the very end",
    "不论成败",
    "无论成败",
    "不管成败",
    "无论结果如何",
    "不论结果如何",
    "不管结果如何",
    "无论成功或失败",
    "不管成功还是失败",
    "无论如何",
    "无论成功失败",
    "不管成功失败",
    "不论成功失败",
    "不论成功还是失败",
    "不论成功或失败",
    "无论成功还是失败",
    "不管成败与否",
    "finally 阶段",
    "in a finally block",
    "finally block",
    "regardless",
    "no matter",
    "in any case",
    "when it finishes",
    "when done",
    "when the workflow finishes",
    "when the pipeline finishes",
    "on failure",
    "if it fails",
    "if anything fails",
    "if any step fails",
    "even if a step fails",
    "even if anything fails",
    "even if something fails",
    "任何一步失败",
    "任何步骤失败",
    "任一步骤失败",
    "任何一个步骤失败",
    "任何任务失败",
    "有任何失败",
    "无论成功与否",
    "无论成功还是失败",
    "无论结果",
    "不管结果",
    "不管成功",
    "失败时",
    "结束后",
];

/// Exit handlers that run only when the run failed.
pub const ON_FAILURE: &[&str] = &[
    "on failure",
    "if it fails",
    "if anything fails",
    "if any step fails",
    "失败时",
];

pub const METRICS: &[(&str, &[&str])] = &[
    (
        "accuracy",
        &["accuracy", "acc", "准确率", "精度", "正确率", "准确度"],
    ),
    ("auc", &["auc", "roc-auc", "roc auc"]),
    ("f1", &["f1", "f1-score", "f1 score"]),
    ("precision", &["precision", "精确率"]),
    ("recall", &["recall", "召回率"]),
    ("loss", &["loss", "损失"]),
    ("error_rate", &["error rate", "错误率", "失败率", "出错率"]),
    ("rmse", &["rmse", "mae", "mse", "error", "误差"]),
    ("score", &["score", "metric", "分数", "得分", "指标"]),
    (
        "quality",
        &[
            "quality",
            "check",
            "checks",
            "数据质量",
            "质量",
            "检查",
            "校验",
        ],
    ),
];

use crate::decompose::Comparison;

/// Comparison words; the longer phrases come first.
pub const COMPARISONS: &[(Comparison, &[&str])] = &[
    (
        Comparison::Ge,
        &[
            "at least",
            "no less than",
            "not below",
            "greater than or equal to",
            ">=",
            "≥",
            "不低于",
            "不少于",
            "至少",
            "大于等于",
            "大于或等于",
        ],
    ),
    (
        Comparison::Le,
        &[
            "at most",
            "no more than",
            "not above",
            "less than or equal to",
            "<=",
            "≤",
            "不高于",
            "不超过",
            "至多",
            "小于等于",
            "小于或等于",
        ],
    ),
    (
        Comparison::Gt,
        &[
            "above", "over", "exceeds", "exceed", "greater", "higher", "more", "better", ">",
            "大于", "高于", "超过", "多于", "优于",
        ],
    ),
    (
        Comparison::Lt,
        &[
            "below",
            "under",
            "less",
            "fewer",
            "lower",
            "worse",
            "<",
            "小于",
            "低于",
            "少于",
            "不到",
            "不足",
            "未达到",
            "没达到",
        ],
    ),
    (Comparison::Eq, &["equals", "equal to", "=", "等于"]),
];
pub const PASS: &[&str] = &[
    "passes",
    "pass",
    "passed",
    "succeeds",
    "is ok",
    "is clean",
    "通过",
    "合格",
    "没问题",
    "没有问题",
    "正常",
];
/// What a step that failed did, said before a retry ("失败的话重试 3 次",
/// "挂了就重跑两次"): broader than `FAIL`, since "挂了" is no condition.
pub const FAILED_BEFORE_RETRY: &[&str] = &["失败", "失败了", "挂了", "出错", "报错"];
#[rustfmt::skip]
pub const FAIL: &[&str] = &[
    "fails", "fail", "failed", "不通过", "没通过", "不合格", "失败", "有问题", "出问题", "不正常",
    "异常",
];

/// Words that carry no request of their own.
pub const FILLER: &[&str] = &[
    "please", "i", "we", "you", "want", "would", "like", "need", "to", "the", "a", "an", "it",
    "them", "this", "that", "these", "those", "and", "then", "can", "could", "should", "also",
    "do", "me", "us", "our", "my", "for", "of", "on", "in", "with", "step", "steps", "data",
    "dataset", "model", "models", "workflow", "pipeline", "is", "are", "be", "so", "thanks", "run",
    "thank", "请", "帮我", "我", "我们", "想", "要", "需要", "的", "把", "一下", "谢谢", "进行",
    "数据", "模型", "个", "下", "吧", "。",
];

/// Words that continue the previous segment's phrase rather than start a
/// new request ("…, a GRU and an SVM").
pub const CONTINUATION: &[&str] = &[
    "a",
    "an",
    "the",
    "with",
    "using",
    "on",
    "in",
    "for",
    "from",
    "to",
    "by",
    "into",
    "of",
    "at",
    "as",
    "its",
    "their",
    "our",
    "my",
    "this",
    "that",
    "these",
    "those",
    "each",
    "every",
    "all",
    "both",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "accuracy",
    "precision",
    "recall",
    "f1",
    "auc",
    "loss",
    "rmse",
    "mae",
    "it",
    "them",
    "store",
    "save",
    "write",
    "log",
    "keep",
];

const EN_NUMBERS: &[(&str, u32)] = &[
    ("zero", 0),
    ("one", 1),
    ("a", 1),
    ("an", 1),
    ("single", 1),
    ("two", 2),
    ("twice", 2),
    ("three", 3),
    ("thrice", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("fifteen", 15),
    ("twenty", 20),
    ("thirty", 30),
    ("fifty", 50),
    ("hundred", 100),
];

fn cjk_digit(c: char) -> Option<u32> {
    Some(match c {
        '零' => 0,
        '一' => 1,
        '二' | '两' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        '十' => 10,
        '百' => 100,
        _ => return None,
    })
}

/// A number starting at token `i`: digits (`0.9`, `90%`), an English word,
/// or Chinese numerals (`五`, `十二`, `两`). Returns the value, whether it
/// was written as a percentage, and the number of tokens used.
pub fn number_at(tokens: &[Token], i: usize, words: bool) -> Option<(f64, bool, usize)> {
    let t = tokens.get(i)?;
    match t.class {
        Class::Number => {
            let (digits, percent) = match t.text.strip_suffix('%') {
                Some(d) => (d, true),
                None => (t.text.as_str(), false),
            };
            let value: f64 = digits.parse().ok()?;
            // "90 percent"
            let percent = percent
                || tokens
                    .get(i + 1)
                    .is_some_and(|n| n.is("percent") || n.is("%"));
            Some((value, percent, 1))
        }
        Class::Word if words => EN_NUMBERS
            .iter()
            .find(|(w, _)| t.is(w))
            .map(|(_, n)| (f64::from(*n), false, 1)),
        Class::Cjk => {
            let mut n = 0;
            let mut total: u32 = 0;
            let mut current: u32 = 0;
            while let Some(d) = tokens
                .get(i + n)
                .filter(|t| t.class == Class::Cjk)
                .and_then(|t| t.text.chars().next())
                .and_then(cjk_digit)
            {
                if d >= 10 {
                    total += current.max(1) * d;
                    current = 0;
                } else {
                    current = d;
                }
                n += 1;
            }
            (n > 0).then(|| (f64::from(total + current), false, n))
        }
        _ => None,
    }
}

/// An integer at `i` (see [`number_at`]).
pub fn integer_at(tokens: &[Token], i: usize, words: bool) -> Option<(u32, usize)> {
    let (v, _, n) = number_at(tokens, i, words)?;
    (v.fract() == 0.0 && (0.0..=1e6).contains(&v)).then_some((v as u32, n))
}

/// The model families named in `tokens`, in order, each once.
pub fn models(tokens: &[Token]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    // "a Faster R-CNN (ResNet-50 FPN backbone)": what brackets after a
    // model name are its parts, no model of their own.
    let mut depth = 0usize;
    let mut part = false;
    while i < tokens.len() {
        if tokens[i].is("(") || tokens[i].is("（") {
            depth += 1;
            part |= depth == 1 && !out.is_empty() && i > 0 && !tokens[i - 1].is(",");
        } else if (tokens[i].is(")") || tokens[i].is("）")) && depth > 0 {
            depth -= 1;
            part &= depth > 0;
        }
        if part {
            i += 1;
            continue;
        }
        let hit = MODELS
            .iter()
            .find_map(|(name, spellings)| {
                spellings
                    .iter()
                    .find_map(|s| phrase_at(tokens, i, s))
                    .map(|n| (*name, n))
            })
            .or_else(|| {
                let t = &tokens[i];
                (t.class == Class::Word)
                    .then(|| {
                        super::kinds::MODEL_PREFIXES
                            .iter()
                            .find(|(p, _)| t.text.starts_with(p) && t.text.len() > p.len())
                            .map(|(_, m)| (*m, 1))
                    })
                    .flatten()
            });
        match hit {
            Some((name, n)) => {
                if !out.iter().any(|m| m == name) {
                    out.push(name.to_owned());
                }
                i += n;
            }
            None => i += 1,
        }
    }
    out
}

/// A model's name starts at `i`.
fn names_model(tokens: &[Token], i: usize) -> bool {
    MODELS
        .iter()
        .flat_map(|(_, spellings)| spellings.iter())
        .any(|s| {
            s.split(' ')
                .enumerate()
                .all(|(k, w)| tokens.get(i + k).is_some_and(|t| t.text == w))
        })
}

/// The earliest kind phrase in `tokens` (the longest one there), skipping
/// mentions that only refer to a kind ("4 GPUs for training"); returns
/// the kind and its position.
pub fn kind(tokens: &[Token]) -> Option<(TaskKind, usize)> {
    kind_phrase(tokens).map(|(k, i, _)| (k, i))
}

/// [`kind`] with the number of tokens its phrase takes.
pub fn kind_phrase(tokens: &[Token]) -> Option<(TaskKind, usize, usize)> {
    for i in 0..tokens.len() {
        if is_reference(tokens, i) {
            continue;
        }
        // "a vanilla Transformer" names a model, no transforming ("cluster
        // with k-means" clusters).
        let model = names_model(tokens, i);
        // "send me the metrics by email": what is sent says nothing of
        // the step; where it goes does.
        if ["send", "post", "share", "forward"]
            .iter()
            .any(|w| tokens[i].is(w))
            && let Some(notify) = KINDS.iter().find(|(k, _)| *k == TaskKind::Notify)
            && (i + 1..tokens.len().min(i + 9))
                .any(|k| notify.1.iter().any(|p| phrase_at(tokens, k, p).is_some()))
        {
            return Some((TaskKind::Notify, i, 1));
        }
        let mut best: Option<(TaskKind, usize)> = None;
        for (kind, phrases) in KINDS {
            for p in *phrases {
                if let Some(n) = phrase_at(tokens, i, p)
                    && best.is_none_or(|(_, m)| n > m)
                    && (!model || p.starts_with(tokens[i].text.as_str()))
                {
                    best = Some((*kind, n));
                }
            }
        }
        if best.is_none() && picks_by_rank(tokens, i) {
            return Some((TaskKind::Select, i, 1));
        }
        // "compute WER on the test set", "算准确率": measuring a metric
        // evaluates.
        if let Some(n) = measures_metric(tokens, i) {
            return Some((TaskKind::Evaluate, i, n));
        }
        // "测试集" is a test set, "train/test split" a split: no steps.
        // "load tests" are tests.
        let compound = best.is_some_and(|(kind, n)| {
            tokens.get(i + n).is_some_and(|t| {
                t.is("集")
                    || t.is("环")
                    || t.is("/")
                    || (kind == TaskKind::Load && (t.is("tests") || t.is("test")))
                    || (kind.trains() && (t.is("rate") || t.is("rates")))
                    // "已经训练好的 LSTM": a model trained before.
                    || (kind.trains() && t.is("好") && tokens.get(i + n + 1).is_some_and(|x| x.is("的")))
                    || t.is("set")
                    || t.is("sets")
            }) || (i > 0 && tokens[i - 1].is("/"))
        });
        if compound {
            continue;
        }
        if let Some((kind, n)) = best {
            // "把导出加载到 …": after 把 comes the object, the verb later.
            let object = i > 0
                && (tokens[i - 1].is("把") || tokens[i - 1].is("将"))
                && kind_phrase(&tokens[i + n..]).is_some();
            if !object {
                return Some((kind, i, n));
            }
        }
    }
    None
}

/// A computing verb at `i` followed closely by a metric's name: the verb's
/// length.
fn measures_metric(tokens: &[Token], i: usize) -> Option<usize> {
    let n = ["compute", "calculate", "measure", "计算", "算"]
        .iter()
        .find_map(|w| phrase_at(tokens, i, w))?;
    let near = &tokens[i + n..tokens.len().min(i + n + 6)];
    (0..near.len()).any(|k| names_metric(near, k)).then_some(n)
}

/// A metric's name starts at `k`: "rmse", "NDCG@20", "准确率".
pub fn names_metric(tokens: &[Token], k: usize) -> bool {
    METRICS
        .iter()
        .flat_map(|(_, spellings)| spellings.iter())
        .chain(&[
            "wer",
            "cer",
            "bleu",
            "rouge",
            "dice",
            "iou",
            "perplexity",
            "map",
            "miou",
            "ndcg",
            "mrr",
            "ks",
            "r2",
            "psnr",
            "ssim",
            "fid",
            "mape",
            "silhouette",
            "logloss",
            "字错率",
            "困惑度",
            "轮廓系数",
        ])
        .any(|p| phrase_at(tokens, k, p).is_some())
}

/// "pick the run with the lowest rmse", "choose k by the highest
/// silhouette", "选效果好的那个": a choosing verb whose object is ranked
/// is a selection, whatever is ranked.
fn picks_by_rank(tokens: &[Token], i: usize) -> bool {
    const CHOOSE: &[&str] = &["pick", "choose", "select", "keep", "take", "选", "挑"];
    const RANK: &[&str] = &[
        "best", "highest", "lowest", "higher", "lower", "better", "top", "smallest", "largest",
        "winner", "winning", "maximum", "minimum", "最", "更", "好",
    ];
    CHOOSE.iter().any(|w| phrase_at(tokens, i, w).is_some())
        && tokens[i + 1..]
            .iter()
            .take(8)
            .take_while(|t| !t.is(",") && !t.is("，"))
            .any(|t| RANK.iter().any(|w| t.is(w)))
}

/// A kind phrase after "for"/"during"/"用于" names a stage, it asks for none.
pub fn is_reference(tokens: &[Token], i: usize) -> bool {
    let prev = |k: usize| i.checked_sub(k).and_then(|j| tokens.get(j));
    let by_word = prev(1).is_some_and(|t| t.is("for") || t.is("during") || t.is("用"))
        || (prev(1).is_some_and(|t| t.is("the")) && prev(2).is_some_and(|t| t.is("for")));
    let by_cjk = prev(2).is_some_and(|t| t.is("用")) && prev(1).is_some_and(|t| t.is("于"));
    by_word || by_cjk
}

/// The kind a segment refers to without asking for it ("for training").
pub fn referenced_kind(tokens: &[Token]) -> Option<TaskKind> {
    (0..tokens.len()).find_map(|i| {
        if !is_reference(tokens, i) {
            return None;
        }
        KINDS
            .iter()
            .find(|(_, phrases)| phrases.iter().any(|p| phrase_at(tokens, i, p).is_some()))
            .map(|(k, _)| *k)
    })
}

pub fn is_filler(t: &Token) -> bool {
    t.class == Class::Punct || FILLER.iter().any(|f| t.is(f))
}

/// The runs of tokens written without spaces between them, with the
/// indexes they span ("2024-01-31" is one).
pub fn joined_words(t: &[Token]) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, x) in t.iter().enumerate() {
        match out.last_mut() {
            Some((text, idx))
                if t[*idx.last().expect("a word has tokens")].span.end == x.span.start =>
            {
                text.push_str(&x.text);
                idx.push(i);
            }
            _ => out.push((x.text.clone(), vec![i])),
        }
    }
    out
}

/// Words that contain a separator character but are not separators.
pub const NOT_SEPARATORS: &[&str] = &[
    "finally block",
    "finally 阶段",
    "into train and test",
    "into training and test",
    "into train and validation",
    "into training and validation",
    "train and test sets",
    "training and test sets",
    "求和",
    "成功与否",
    "与否",
    "总和",
    "加和",
    "并行",
    "并发",
    "合并",
    "再次",
    "再训练",
    "后处理",
    "后台",
    "之后的",
    "再生成",
    "否则",
    // ("step1, step2 and step3 one after another": `IN_TURN`.)
    // "for the next 28 days", "the next day's data": no order.
    "the next",
    "next day",
    "next week",
    "next month",
];

/// How a list of steps runs, said after its last: "step1, step2 and step3
/// one after another". No order word, and no part of the last step.
pub const IN_TURN: &[&str] = &[
    "one after another",
    "one after the other",
    "one by one",
    "sequentially",
    "consecutively",
    "in turn",
];

/// Chinese classifiers: what follows a count of things ("5个城市",
/// "10张核心表", "三类实体").
pub const CLASSIFIERS: &[&str] = &[
    "个", "张", "类", "份", "条", "家", "种", "组", "台", "位", "只", "款", "套",
];
