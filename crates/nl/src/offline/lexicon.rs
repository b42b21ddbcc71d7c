//! The words the offline planner knows, in English and Chinese.

use super::scan::{Class, Token, phrase_at};
use crate::decompose::TaskKind;

/// Phrases that ask for a kind of subtask. Within a segment the earliest
/// match wins ("deploy the best model" is a deployment).
pub const KINDS: &[(TaskKind, &[&str])] = &[
    (
        TaskKind::DistributedTrain,
        &[
            "distributed training",
            "distributed",
            "multi-node",
            "ddp",
            "horovod",
            "分布式训练",
            "分布式",
            "多机",
        ],
    ),
    (
        TaskKind::QualityCheck,
        &[
            "data quality",
            "data-quality",
            "quality check",
            "quality checks",
            "data validation",
            "validate the data",
            "validate the dataset",
            "sanity check",
            "schema check",
            "数据质量",
            "质量检查",
            "数据校验",
            "校验数据",
        ],
    ),
    (
        TaskKind::Select,
        &[
            "keep the best",
            "select the best",
            "pick the best",
            "choose the best",
            "keep the better",
            "pick the better",
            "select the better",
            "the best model",
            "the best one",
            "best-performing",
            "model selection",
            "compare",
            "选出最好",
            "选出最优",
            "选择最好",
            "选择最优",
            "选择最佳",
            "选出最佳",
            "挑选最优",
            "挑选最好",
            "保留最好",
            "保留最优",
            "最优模型",
            "最好的模型",
            "最佳模型",
            "比较",
        ],
    ),
    (
        TaskKind::Load,
        &[
            "load", "fetch", "download", "ingest", "import", "collect", "pull", "read", "scrape",
            "加载", "读取", "下载", "导入", "获取", "采集", "拉取", "收集",
        ],
    ),
    (
        TaskKind::Features,
        &[
            "feature engineering",
            "engineer features",
            "engineer the features",
            "extract features",
            "extract the features",
            "feature extraction",
            "compute features",
            "build features",
            "generate features",
            "featurize",
            "embed",
            "特征工程",
            "提取特征",
            "特征提取",
            "构造特征",
            "生成特征",
        ],
    ),
    (
        TaskKind::Preprocess,
        &[
            "preprocess",
            "pre-process",
            "clean",
            "cleanse",
            "normalize",
            "normalise",
            "transform",
            "tokenize",
            "deduplicate",
            "dedupe",
            "impute",
            "prepare the data",
            "prepare the dataset",
            "split",
            "预处理",
            "清洗",
            "清理",
            "归一化",
            "标准化",
            "去重",
            "切分",
        ],
    ),
    (
        TaskKind::Train,
        &[
            "train",
            "retrain",
            "fit",
            "fine-tune",
            "finetune",
            "learn",
            "训练",
            "微调",
            "拟合",
        ],
    ),
    (
        TaskKind::Evaluate,
        &[
            "evaluate",
            "assess",
            "validate",
            "test",
            "cross-validate",
            "benchmark",
            "score",
            "评估",
            "测试",
            "验证",
            "评测",
        ],
    ),
    (
        TaskKind::Register,
        &[
            "register",
            "model registry",
            "save the model",
            "store the model",
            "publish the model",
            "upload the model",
            "export the model",
            "注册",
            "保存模型",
            "存储模型",
        ],
    ),
    (
        TaskKind::Deploy,
        &[
            "deploy",
            "serve",
            "roll out",
            "ship",
            "部署",
            "上线",
            "发布模型",
        ],
    ),
    (
        TaskKind::Report,
        &[
            "report",
            "summarize",
            "summarise",
            "summary",
            "dashboard",
            "plot",
            "visualize",
            "visualise",
            "报告",
            "报表",
            "汇总",
            "总结",
            "可视化",
        ],
    ),
    (
        TaskKind::Notify,
        &[
            "notify",
            "notification",
            "alert",
            "email",
            "e-mail",
            "ping",
            "message",
            "slack",
            "webhook",
            "通知",
            "告警",
            "报警",
            "提醒",
            "邮件",
        ],
    ),
    (
        TaskKind::Shell,
        &[
            "run the command",
            "execute",
            "run the script",
            "执行命令",
            "运行命令",
            "执行脚本",
        ],
    ),
];

/// Model families: canonical name and how people write it.
pub const MODELS: &[(&str, &[&str])] = &[
    ("lstm", &["lstm", "lstms"]),
    ("gru", &["gru", "grus"]),
    ("rnn", &["rnn"]),
    ("svm", &["svm", "support vector machine", "支持向量机"]),
    ("xgboost", &["xgboost", "xgb"]),
    ("lightgbm", &["lightgbm", "lgbm"]),
    ("catboost", &["catboost"]),
    ("random_forest", &["random forest", "随机森林"]),
    ("logistic_regression", &["logistic regression", "逻辑回归"]),
    ("linear_regression", &["linear regression", "线性回归"]),
    (
        "gradient_boosting",
        &["gradient boosting", "gbdt", "梯度提升"],
    ),
    ("decision_tree", &["decision tree", "决策树"]),
    ("knn", &["knn", "k-nearest neighbors"]),
    ("naive_bayes", &["naive bayes", "朴素贝叶斯"]),
    ("mlp", &["mlp", "neural network", "神经网络"]),
    ("cnn", &["cnn", "卷积神经网络"]),
    ("resnet", &["resnet", "resnet50", "resnet-50"]),
    ("transformer", &["transformer"]),
    ("bert", &["bert"]),
];

pub const PARALLEL: &[&str] = &[
    "in parallel",
    "parallel",
    "concurrently",
    "simultaneously",
    "at the same time",
    "side by side",
    "both",
    "并行",
    "同时",
    "并发",
];

pub const IF: &[&str] = &[
    "only if",
    "if",
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
pub const OTHERWISE: &[&str] = &["otherwise", "else", "if not", "否则", "不然", "要不然"];
/// "notify us whatever happens": an exit handler.
pub const ALWAYS: &[&str] = &[
    "whatever happens",
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
    "无论成功与否",
    "无论成功还是失败",
    "无论结果",
    "不管结果",
    "不管成功",
    "失败时",
    "结束后",
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
            "below", "under", "less", "lower", "worse", "<", "小于", "低于", "少于",
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
];
pub const FAIL: &[&str] = &["fails", "fail", "failed", "不通过", "不合格", "失败"];

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
    while i < tokens.len() {
        let hit = MODELS.iter().find_map(|(name, spellings)| {
            spellings
                .iter()
                .find_map(|s| phrase_at(tokens, i, s))
                .map(|n| (*name, n))
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

/// The earliest kind phrase in `tokens`, skipping mentions that only refer
/// to a kind ("4 GPUs for training"); returns the kind and its position.
pub fn kind(tokens: &[Token]) -> Option<(TaskKind, usize)> {
    for i in 0..tokens.len() {
        for (kind, phrases) in KINDS {
            if phrases.iter().any(|p| phrase_at(tokens, i, p).is_some()) && !is_reference(tokens, i)
            {
                return Some((*kind, i));
            }
        }
    }
    None
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
