//! What one run of tokens says: the kind of subtask it asks for and every
//! modifier (models, parallelism, fan-out, condition, retry, resources,
//! schedule, target, command). Tokens no reader used are kept so that what
//! was not understood can be reported.

use super::action;
use super::lexicon::{self, integer_at, number_at};
use super::scan::{Class, Token, find_any, phrase_at};
use super::schedule;
use crate::decompose::{
    Comparison, ConditionSpec, FanOut, FanOutValues, ResourceSpec, Span, TaskKind,
};

#[derive(Debug, Clone, Default)]
pub struct Clause {
    pub kind: Option<TaskKind>,
    pub models: Vec<String>,
    pub parallel: bool,
    pub fan_out: Option<FanOut>,
    pub condition: Option<ConditionSpec>,
    /// The clause opens with its condition ("if …, deploy").
    pub condition_first: bool,
    /// An "if" whose condition could not be read.
    pub bad_condition: Option<Span>,
    pub otherwise: bool,
    pub retry: Option<u32>,
    /// "retry every step …"
    pub retry_all: bool,
    pub resources: ResourceSpec,
    pub distributed: bool,
    pub schedule: Option<(String, Span)>,
    pub target: Option<String>,
    pub command: Option<String>,
    /// Runs whatever happens (an exit handler).
    pub always: bool,
    /// "… for training": the kind the modifiers are about.
    pub refers_to: Option<TaskKind>,
    /// "for each region in …": the following segments are list items.
    pub opens_list: bool,
    /// The step's name, when the words name it ("B", "step A") or the
    /// action is one the library does not know.
    pub name: Option<String>,
    /// An action the library has no template for: a generic step.
    pub generic: bool,
    /// An action no workflow runs ("make me a sandwich").
    pub off_topic: bool,
    /// Tokens no reader used and that are not filler.
    pub leftover: Vec<Span>,
}

impl Clause {
    /// Says something, but asks for no subtask.
    pub fn is_modifier(&self) -> bool {
        !self.models.is_empty()
            || self.parallel
            || self.fan_out.is_some()
            || self.condition.is_some()
            || self.retry.is_some()
            || !self.resources.is_empty()
            || self.target.is_some()
            || self.command.is_some()
            || self.always
            || self.distributed
    }
}

struct Reader<'a> {
    t: &'a [Token],
    used: Vec<bool>,
}

impl Reader<'_> {
    fn mark(&mut self, i: usize, n: usize) {
        for u in &mut self.used[i..(i + n).min(self.t.len())] {
            *u = true;
        }
    }
    fn is(&self, i: usize, words: &[&str]) -> bool {
        self.t.get(i).is_some_and(|t| words.iter().any(|w| t.is(w)))
    }
}

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

const FILLER_CJK: &str =
    "请帮我们想要需的把一下谢进行个吧做完成将对使用用于时才所有并且在中里上这那它其并后再和与及以";

pub fn read(tokens: &[Token]) -> Clause {
    let mut r = Reader {
        t: tokens,
        used: vec![false; tokens.len()],
    };
    let mut c = Clause::default();
    let mut start = 0;
    if let Some(n) = lexicon::OTHERWISE
        .iter()
        .find_map(|p| phrase_at(tokens, 0, p))
    {
        c.otherwise = true;
        r.mark(0, n);
        start = n;
    }
    if let Some((i, n)) = find_any(tokens, lexicon::ALWAYS) {
        c.always = true;
        r.mark(i, n);
    }
    // Schedule before conditions: "every day at 9" is no comparison.
    if let Some((cron, used)) = schedule::read(tokens) {
        let span = used
            .iter()
            .map(|&i| tokens[i].span)
            .reduce(Span::join)
            .unwrap_or(Span::new(0, 0));
        for i in used {
            r.mark(i, 1);
        }
        c.schedule = Some((cron, span));
    }
    condition(&mut r, &mut c, start);
    retry(&mut r, &mut c);
    resources(&mut r, &mut c);
    fan_out(&mut r, &mut c);
    if let Some((i, n)) = find_any(tokens, lexicon::PARALLEL) {
        c.parallel = true;
        r.mark(i, n);
    }
    if let Some((i, n)) = find_any(
        tokens,
        &[
            "distributed",
            "multi-node",
            "ddp",
            "horovod",
            "分布式",
            "多机",
        ],
    ) {
        c.distributed = true;
        r.mark(i, n);
    }
    for (i, t) in tokens.iter().enumerate() {
        match t.class {
            Class::Url if !r.used[i] && c.target.is_none() => {
                c.target = Some(t.text.clone());
                r.mark(i, 1);
            }
            Class::Code if c.command.is_none() => {
                c.command = Some(t.text.clone());
                r.mark(i, 1);
            }
            _ => {}
        }
    }
    // Kind and models only from what conditions and schedules left.
    let free: Vec<Token> = tokens
        .iter()
        .zip(&r.used)
        .map(|(t, &u)| if u { blank(t) } else { t.clone() })
        .collect();
    c.models = lexicon::models(&free);
    c.refers_to = lexicon::referenced_kind(&free);
    if let Some((kind, at)) = lexicon::kind(&free) {
        let n = lexicon::KINDS
            .iter()
            .filter(|(k, _)| *k == kind)
            .flat_map(|(_, ps)| ps.iter())
            .find_map(|p| phrase_at(&free, at, p))
            .unwrap_or(1);
        r.mark(at, n);
        c.kind = Some(kind);
    }
    if let Some((i, n)) = find_any(&free, &["for each", "for every", "对每个", "针对每个"]) {
        c.opens_list = c.fan_out.is_none();
        r.mark(i, n);
    }
    if c.kind.is_none() && c.command.is_some() {
        c.kind = Some(TaskKind::Shell);
    }
    if let Some(kind) = c.kind {
        c.kind = Some(refine(kind, &free));
    }
    if c.kind.is_none()
        && !c.opens_list
        && let Some(a) = action::generic(tokens, &r.used)
    {
        c.kind = Some(TaskKind::Shell);
        c.generic = true;
        c.off_topic = a.off_topic;
        c.name = Some(a.name);
        for i in 0..tokens.len() {
            if tokens[i].class != Class::Url {
                r.mark(i, 1);
            }
        }
    }
    if c.kind == Some(TaskKind::Train) && (c.distributed || c.resources.workers.is_some()) {
        c.kind = Some(TaskKind::DistributedTrain);
    }
    // Model names, metric words and known kinds are understood too.
    for i in 0..tokens.len() {
        if let Some(n) = lexicon::MODELS
            .iter()
            .flat_map(|(_, s)| s.iter())
            .chain(lexicon::KINDS.iter().flat_map(|(_, s)| s.iter()))
            .find_map(|p| phrase_at(&free, i, p))
        {
            r.mark(i, n);
        }
    }
    c.leftover = tokens
        .iter()
        .zip(&r.used)
        .filter(|(t, u)| !**u && !lexicon::is_filler(t) && !is_cjk_filler(t))
        .map(|(t, _)| t.span)
        .collect();
    c
}

/// What the words around a kind's phrase change: a model written to
/// ONNX is an export, data loaded *into* a warehouse too, and models
/// combined are an ensemble.
fn refine(kind: TaskKind, free: &[Token]) -> TaskKind {
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
        TaskKind::Load if has(&["into", "加载到", "写到", "导入到"]) => TaskKind::Export,
        TaskKind::Preprocess
            if has(&["models", "predictions", "the model", "模型"])
                && has(&["combine", "merge", "concatenate", "合并"]) =>
        {
            TaskKind::Ensemble
        }
        k => k,
    }
}

fn blank(t: &Token) -> Token {
    Token {
        text: String::new(),
        span: t.span,
        class: Class::Punct,
        upper: false,
    }
}

fn is_cjk_filler(t: &Token) -> bool {
    t.class == Class::Cjk
        && (FILLER_CJK.contains(t.text.as_str()) || "数据模型".contains(t.text.as_str()))
}

fn condition(r: &mut Reader, c: &mut Clause, start: usize) {
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
        return;
    };
    let body = at + n;
    // "if needed", "if possible": no condition.
    if let Some(k) = [
        "needed",
        "necessary",
        "possible",
        "required",
        "applicable",
        "available",
        "any",
    ]
    .iter()
    .find_map(|p| phrase_at(t, body, p))
    {
        r.mark(at, n + k);
        return;
    }
    let strict = marker == "when" || marker == "当";
    match read_condition(t, body).or_else(|| read_outcome(t, body, strict)) {
        Some((mut cond, end)) => {
            if negated {
                cond = cond.negate();
            }
            r.mark(at, end - at);
            c.condition_first = at == start;
            c.condition = Some(cond);
        }
        // "when" is also just "at the time"; only a real "if" must parse.
        None if marker != "when" && marker != "当" => {
            let end = (body + 6).min(t.len()).max(at + n);
            c.bad_condition = Some(t[at].span.join(t[end - 1].span));
            r.mark(at, end - at);
        }
        None => {}
    }
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
            let end = j + n + usize::from(t.get(j + n).is_some_and(|x| x.is("percent")));
            return Some((
                ConditionSpec {
                    metric: metric.unwrap_or("score").to_owned(),
                    operator: op,
                    value: trim_number(value),
                },
                end,
            ));
        }
        j += 1;
    }
    None
}

/// A step's outcome: "if it lands heads", "if the result is 'big'", "if
/// heads", "如果是正面": the `result` a generic step writes equals a word.
/// `strict`: only the "is …" forms ("when it is heads").
fn read_outcome(t: &[Token], i: usize, strict: bool) -> Option<(ConditionSpec, usize)> {
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
    if let Some(n) = subject.iter().find_map(|p| phrase_at(t, j, p)) {
        j += n;
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
    let first = t.get(j)?;
    let (value, end) = match first.class {
        Class::Word
            if !lexicon::is_filler(first)
                && lexicon::kind(std::slice::from_ref(first)).is_none() =>
        {
            (first.text.clone(), j + 1)
        }
        Class::Number => (first.text.clone(), j + 1),
        Class::Cjk => match super::kinds::CJK_WORDS
            .iter()
            .find_map(|(zh, en)| phrase_at(t, j, zh).map(|n| (n, *en)))
        {
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
            metric: "result".into(),
            operator: Comparison::Eq,
            value,
        },
        end,
    ))
}

fn trim_number(v: f64) -> String {
    let s = format!("{v}");
    s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
}

fn retry(r: &mut Reader, c: &mut Clause) {
    let t = r.t;
    let Some(at) = (0..t.len()).find(|&i| {
        !r.used[i]
            && (t[i].class == Class::Word && lexicon_retry(&t[i].text)
                || phrase_at(t, i, "重试").is_some()
                || phrase_at(t, i, "重跑").is_some())
    }) else {
        return;
    };
    let width = if t[at].class == Class::Cjk { 2 } else { 1 };
    r.mark(at, width);
    // The count is near: "retry up to 5 times", "3 retries", "重试5次".
    let after = at + width..(at + width + 5).min(t.len());
    let before = (at.saturating_sub(3)..at).rev();
    let near = after
        .chain(before)
        .filter(|&i| !r.used[i] && !t[i].is("a") && !t[i].is("an"))
        .find_map(|i| integer_at(t, i, true).map(|(v, n)| (i, v, n)));
    let limit = match near {
        Some((i, v, n)) => {
            r.mark(i, n);
            if r.is(i + n, &["times", "time", "次", "遍"]) {
                r.mark(i + n, 1);
            }
            v
        }
        None => 3,
    };
    for (i, n) in [
        ("up to", 2),
        ("at most", 2),
        ("最多", 2),
        ("失败", 2),
        ("on failure", 2),
    ]
    .iter()
    .filter_map(|(p, _)| find_any(t, &[p]))
    {
        r.mark(i, n);
    }
    c.retry = Some(limit.min(100));
    c.retry_all = find_any(
        t,
        &[
            "each step",
            "every step",
            "all steps",
            "any step",
            "failed steps",
            "failing steps",
            "所有步骤",
            "每个步骤",
            "每一步",
            "失败的步骤",
        ],
    )
    .is_some();
}

fn lexicon_retry(w: &str) -> bool {
    matches!(
        w,
        "retry" | "retries" | "retried" | "retrying" | "re-run" | "rerun"
    )
}

fn resources(r: &mut Reader, c: &mut Clause) {
    let t = r.t;
    let mut i = 0;
    while i < t.len() {
        if r.used[i] {
            i += 1;
            continue;
        }
        let Some((v, n)) =
            integer_at(t, i, true).filter(|_| !t[i].is("a") || r.is(i + 1, &["gpu"]))
        else {
            i += 1;
            continue;
        };
        // Skip measure words and "x": "4块GPU", "4 x GPUs".
        let mut u = i + n;
        while r.is(
            u,
            &[
                "块", "张", "个", "台", "颗", "x", "×", "nvidia", "a100", "h100", "v100",
            ],
        ) {
            u += 1;
        }
        let unit = t.get(u).map(|t| t.text.as_str()).unwrap_or("");
        let took = match unit {
            "gpu" | "gpus" | "卡" => {
                c.resources.gpus = Some(v);
                1
            }
            "显" if r.is(u + 1, &["卡"]) => {
                c.resources.gpus = Some(v);
                2
            }
            "gb" | "gib" | "g" | "gi" => {
                c.resources.memory_gib = Some(v);
                if r.is(u + 1, &["of"]) && r.is(u + 2, &["memory", "ram"]) {
                    3
                } else {
                    1 + usize::from(r.is(u + 1, &["memory", "ram"]))
                }
            }
            "tb" | "tib" => {
                c.resources.memory_gib = Some(v.saturating_mul(1024));
                1
            }
            "cpus" | "cpu" | "cores" | "core" | "vcpus" | "vcpu" | "核" => {
                c.resources.cpus = Some(v);
                1
            }
            "workers" | "worker" | "nodes" | "node" | "replicas" | "machines" | "节" | "机" => {
                c.resources.workers = Some(v);
                if r.is(u, &["节", "机"]) { 2 } else { 1 }
            }
            _ => 0,
        };
        if took > 0 {
            r.mark(i, u - i + took);
            i = u + took;
        } else {
            i += 1;
        }
    }
    // "on a GPU", "use GPU", "用GPU": one GPU.
    if c.resources.gpus.is_none()
        && let Some(i) = (0..t.len()).find(|&i| !r.used[i] && (t[i].is("gpu") || t[i].is("gpus")))
    {
        c.resources.gpus = Some(1);
        r.mark(i, 1);
    }
    for (i, n) in [find_any(t, &["memory"]), find_any(t, &["内存"])]
        .into_iter()
        .flatten()
    {
        if c.resources.memory_gib.is_some() {
            r.mark(i, n);
        }
    }
}

fn fan_out(r: &mut Reader, c: &mut Clause) {
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
        c.fan_out = Some(FanOut {
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
        let u = i + n + usize::from(r.is(i + n, &["-"]));
        if let Some((noun, len)) = COUNT_NOUNS
            .iter()
            .find_map(|(w, p)| phrase_at(t, u, w).map(|len| (*p, len)))
            && v >= 2
        {
            c.fan_out = Some(FanOut {
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
            c.fan_out = Some(FanOut {
                parameter: parameter_before(t, i),
                values: FanOutValues::List(run.iter().map(|&j| t[j].text.clone()).collect()),
            });
            r.mark(i.saturating_sub(2), end - i.saturating_sub(2));
            return;
        }
        i += run.len().max(1);
    }
    // Words after "for each X in": "for each region in us, eu and asia".
    if let Some((at, n)) = find_any(t, &["for each", "for every"]) {
        let Some(inn) = (at + n..t.len()).find(|&j| r.is(j, &["in", "of", ":"])) else {
            return;
        };
        let values: Vec<String> = (inn + 1..t.len())
            .take_while(|&j| {
                t[j].class == Class::Word
                    && !lexicon::KINDS
                        .iter()
                        .any(|(_, ps)| ps.iter().any(|p| phrase_at(t, j, p).is_some()))
            })
            .filter(|&j| !matches!(t[j].text.as_str(), "and" | "or" | "the" | "a"))
            .map(|j| t[j].text.clone())
            .collect();
        if values.len() >= 2 {
            let used = inn + 1 + values.len() - at;
            c.fan_out = Some(FanOut {
                parameter: identifier(&t[at + n..inn]),
                values: FanOutValues::List(values),
            });
            r.mark(at, used);
        }
    }
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
