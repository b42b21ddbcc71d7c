//! What one run of tokens says: the kind of subtask it asks for and every
//! modifier (models, parallelism, fan-out, condition, retry, resources,
//! schedule, target, command). Tokens no reader used are kept so that what
//! was not understood can be reported.

use super::action;
use super::lexicon::{self, integer_at};
use super::reader::Reader;
use super::scan::{Class, Token, find_any, phrase_at};
use super::schedule;
use super::shape::{behind_preposition, branches, model_count, preamble, refine};
use crate::decompose::{Comparison, ConditionSpec, FanOut, ResourceSpec, Span, TaskKind};

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
    /// "pick either branch_a or branch_b": the alternatives, each a step
    /// that runs if it was picked.
    pub branches: Vec<String>,
    /// "train the two models", "两个模型": how many, when none is named.
    pub model_count: Option<u32>,
    /// "do NOT deploy", "skip evaluation", "不要发通知": no step, and none
    /// of its kind either.
    pub negated: bool,
    /// Tokens no reader used and that are not filler.
    pub leftover: Vec<Span>,
}

impl Clause {
    /// Says something, but asks for no subtask.
    pub fn is_modifier(&self) -> bool {
        self.modifies_step() || self.always
    }

    /// Says something about a step, other than that it runs at the end.
    pub fn modifies_step(&self) -> bool {
        !self.models.is_empty()
            || self.parallel
            || self.fan_out.is_some()
            || self.condition.is_some()
            || self.retry.is_some()
            || !self.resources.is_empty()
            || self.target.is_some()
            || self.command.is_some()
            || self.distributed
    }
}

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
    if let Some((i, n)) = find_any(tokens, lexicon::NOTHING) {
        r.mark(i, n);
        // ("otherwise keep the old one and ping #recsys": the ping is asked.)
        let more = tokens
            .iter()
            .zip(&r.used)
            .any(|(t, &u)| !u && !lexicon::is_filler(t));
        if !more {
            c.negated = true;
            r.mark(0, tokens.len());
            c.leftover.clear();
            return c;
        }
    }
    // "we're just benchmarking", "i am only testing": why, not a step.
    let words: Vec<&Token> = tokens.iter().filter(|t| t.class != Class::Punct).collect();
    // ("we're" is read as "we", "re".)
    let subject = match words.as_slice() {
        [we, be, ..]
            if (we.is("we") && (be.is("are") || be.is("re")))
                || (we.is("i") && (be.is("am") || be.is("m"))) =>
        {
            2
        }
        _ => 0,
    };
    let doing: Vec<&&Token> = words
        .iter()
        .skip(subject)
        .filter(|t| {
            !["just", "only", "simply", "here", "now"]
                .iter()
                .any(|w| t.is(w))
        })
        .collect();
    if subject > 0 && matches!(doing.as_slice(), [ing] if ing.text.ends_with("ing")) {
        c.negated = true;
        r.mark(0, tokens.len());
        c.leftover.clear();
        return c;
    }
    // "(one preprocessing step is fine)": a remark on how, no step.
    if let Some((open, n)) = remark(tokens) {
        r.mark(open, n);
    }
    // "just skip evaluation", "也不用发通知": asks for no step.
    let mut at = start;
    while let Some(n) = lexicon::BEFORE_NEGATION
        .iter()
        .find_map(|p| phrase_at(tokens, at, p))
    {
        at += n;
    }
    if let Some(n) = lexicon::NEGATION
        .iter()
        .find_map(|p| phrase_at(tokens, at, p))
    {
        c.negated = true;
        r.mark(start, at + n - start);
    }
    // Every "whatever happens" phrase: "at the very end, regardless of …".
    let mut from = 0;
    // ("if anything fails, page the on-call": at the end, on failure only.)
    let mut on_failure = false;
    while let Some((i, n)) = find_any(&tokens[from..], lexicon::ALWAYS) {
        c.always = true;
        on_failure |= find_any(&tokens[from + i..from + i + n], lexicon::ON_FAILURE).is_some();
        r.mark(from + i, n);
        from += i + n;
    }
    // "whether it passed or not", "whether it worked or failed".
    if let Some(i) = tokens.iter().position(|t| t.is("whether"))
        && let Some(k) = (i + 1..tokens.len().min(i + 8)).find(|&k| tokens[k].is("or"))
        && tokens
            .get(k + 1)
            .is_some_and(|t| t.is("not") || t.text.ends_with("ed") || t.is("fail") || t.is("fails"))
    {
        c.always = true;
        r.mark(i, k + 2 - i);
    }
    // "Build a pipeline that …", "I need a workflow to …": the pipeline is
    // what is asked for, its steps are what follows.
    if let Some(n) = preamble(tokens, start) {
        r.mark(start, n);
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
    if let Some(read) = super::condition::read(&mut r, start) {
        c.condition = Some(read.condition);
        c.condition_first = read.first;
        c.bad_condition = read.unreadable;
    }
    retry(&mut r, &mut c);
    if c.retry.is_some() {
        // "retry it twice if it fails" is no exit handler.
        c.always = false;
    }
    if on_failure && c.always && c.condition.is_none() {
        c.condition = Some(ConditionSpec {
            metric: "quality".into(),
            operator: Comparison::Eq,
            value: "fail".into(),
        });
    }
    resources(&mut r, &mut c);
    c.fan_out = super::fanout::read(&mut r);
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
    if let Some((mut kind, mut at, mut n)) = lexicon::kind_phrase(&free)
        && !behind_preposition(&free, at)
        && !action::object_of_verb(&free, at)
    {
        // "训练完评估一下": once training is done, the step evaluates.
        let done = ["完", "后", "之后", "以后"]
            .iter()
            .any(|p| phrase_at(&free, at + n, p).is_some());
        if done && let Some((later, k, m)) = lexicon::kind_phrase(&free[at + n..]) {
            r.mark(at, n + 1);
            (kind, at, n) = (later, at + n + k, m);
        }
        // "选最好的注册": picking the best is what the later verb acts on.
        // ("keep whichever scores best": the later verb is the relative
        // clause's.)
        let relative = free[at..at + n].iter().any(|t| t.is("whichever"));
        // ("pick the best by validation loss": a metric, no later step.)
        let metric = |k: usize| {
            free[at + n..at + n + k].iter().any(|t| {
                [
                    "by",
                    "on",
                    "with",
                    "based",
                    "according",
                    "using",
                    "in",
                    "of",
                ]
                .iter()
                .any(|w| t.is(w))
            })
        };
        if kind == TaskKind::Select
            && !relative
            && let Some((later, k, m)) = lexicon::kind_phrase(&free[at + n..])
            && !metric(k)
        {
            r.mark(at, n);
            (kind, at, n) = (later, at + n + k, m);
        }
        // "训练失败最多重试 2 次", "if training fails, retry": the step is
        // referred to, not asked for again.
        let fails = ["失败", "fails", "failed", "fail"]
            .iter()
            .any(|p| phrase_at(tokens, at + n, p).is_some());
        if c.retry.is_some() && fails {
            c.refers_to = Some(kind);
            r.mark(at, n + 1);
        } else {
            r.mark(at, n);
            c.kind = Some(kind);
        }
    }
    // "run k-means with k = 2..6", "fit a GAM": a model run is trained.
    if c.kind.is_none()
        && !c.models.is_empty()
        && free
            .iter()
            .find(|t| t.class == Class::Word)
            .is_some_and(|t| ["run", "fit", "try"].iter().any(|w| t.is(w)))
    {
        c.kind = Some(TaskKind::Train);
    }
    // "do 5-fold cross validation of an SVM": a model trained per fold
    // ("transcribe each of 20 episodes with whisper" is no training).
    if c.kind.is_none()
        && !c.models.is_empty()
        && matches!(&c.fan_out, Some(f) if matches!(f.values, crate::decompose::FanOutValues::Count(_)) && ["fold", "seed", "split"].contains(&f.parameter.as_str()))
    {
        c.kind = Some(TaskKind::Train);
    }
    if let Some((i, n)) = find_any(
        &free,
        &[
            "for each",
            "for every",
            "each of",
            "every one of",
            "对每个",
            "针对每个",
        ],
    )
    .or_else(|| super::fanout::each_in(&free))
    {
        c.opens_list = c.fan_out.is_none();
        // "for each of the numbers": the words up to what varies.
        let n = n + tokens[i + n..]
            .iter()
            .take_while(|t| {
                ["of", "the", "these", "those", "all"]
                    .iter()
                    .any(|w| t.is(w))
            })
            .count();
        r.mark(i, n);
    }
    if c.kind.is_none() && c.command.is_some() {
        c.kind = Some(TaskKind::Shell);
    }
    if let Some(kind) = c.kind {
        c.kind = Some(refine(kind, &free));
    }
    // "once the features are computed": a step named in the passive is
    // referred to, not asked for.
    if c.kind.is_none()
        && let Some(kind) = passive(&free)
    {
        c.refers_to = Some(kind);
        r.mark(0, tokens.len());
    }
    if c.kind.is_none()
        && c.refers_to.is_none()
        && let Some(a) = action::generic(tokens, &r.used, c.condition.is_some())
    {
        c.kind = Some(TaskKind::Shell);
        c.generic = true;
        // "Weather forecasting with an LSTM" is about a model, so on topic.
        c.off_topic = a.off_topic && c.models.is_empty();
        c.name = Some(a.name);
        // "读数据": the English of a Chinese verb may be a kind ("read").
        let chinese = free
            .iter()
            .find(|t| !t.text.is_empty())
            .is_some_and(|t| t.class == Class::Cjk);
        let verb = c
            .name
            .as_deref()
            .and_then(|n| n.split('-').next())
            .unwrap_or("");
        let english = Token {
            text: verb.to_owned(),
            span: Span::new(0, 0),
            class: Class::Word,
            upper: false,
        };
        if chinese
            && !a.labelled
            && let Some((kind, 0, _)) = lexicon::kind_phrase(std::slice::from_ref(&english))
        {
            c.kind = Some(kind);
            c.generic = false;
        }
        for (i, t) in tokens.iter().enumerate() {
            if t.class != Class::Url {
                r.mark(i, 1);
            }
        }
    }
    if c.kind == Some(TaskKind::Train) && (c.distributed || c.resources.workers.is_some()) {
        c.kind = Some(TaskKind::DistributedTrain);
    }
    // "send the top 500 users to the CRM team by email", "post the result
    // to #ads on Slack": sending something over a channel notifies.
    if (c.kind.is_none() || c.generic) && sends_over_channel(&free) {
        c.kind = Some(TaskKind::Notify);
        c.generic = false;
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
    // "the workflow should keep going even if `exit 1` fails": how the
    // workflow behaves, no step of it.
    if about_the_workflow(tokens) {
        c.kind = None;
        c.command = None;
        c.generic = false;
        c.condition = None;
        c.always = false;
        r.mark(0, tokens.len());
    }
    c.branches = branches(tokens);
    c.model_count = model_count(tokens);
    c.leftover = tokens
        .iter()
        .zip(&r.used)
        .filter(|(t, u)| !**u && !lexicon::is_filler(t) && !is_cjk_filler(t))
        .map(|(t, _)| t.span)
        .collect();
    c
}

/// A sending verb first and a channel anywhere in the clause.
fn sends_over_channel(free: &[Token]) -> bool {
    const SEND: &[&str] = &[
        "send", "post", "share", "forward", "deliver", "mail", "发", "发送",
    ];
    const CHANNELS: &[&str] = &[
        "email",
        "e-mail",
        "mail",
        "slack",
        "teams",
        "webhook",
        "sms",
        "邮件",
        "钉钉",
        "飞书",
        "企业微信",
        "短信",
    ];
    let Some(first) = free
        .iter()
        .position(|t| !t.text.is_empty() && !lexicon::is_filler(t))
    else {
        return false;
    };
    SEND.iter().any(|w| phrase_at(free, first, w).is_some())
        && (0..free.len()).any(|i| CHANNELS.iter().any(|w| phrase_at(free, i, w).is_some()))
}

/// "the features are computed", "the data has been cleaned": the kind of
/// the step the words name in the passive.
fn passive(free: &[Token]) -> Option<TaskKind> {
    let words: Vec<&Token> = free.iter().filter(|t| !t.text.is_empty()).collect();
    let be = words
        .iter()
        .position(|t| ["is", "are", "was", "were", "been"].iter().any(|w| t.is(w)))?;
    let participle = words.get(be + 1)?;
    if !(participle.text.ends_with("ed") || participle.text.ends_with("en")) || be == 0 {
        return None;
    }
    let word = |text: String| Token {
        text,
        span: Span::new(0, 0),
        class: Class::Word,
        upper: false,
    };
    let mut probe = vec![word(action::lemma(&participle.text))];
    probe.extend(
        words[..be]
            .iter()
            .filter(|t| {
                ![
                    "the", "a", "an", "has", "have", "all", "once", "when", "after", "until",
                ]
                .iter()
                .any(|w| t.is(w))
            })
            .map(|t| word(t.text.clone())),
    );
    lexicon::kind_phrase(&probe).map(|(kind, _, _)| kind)
}

/// "The workflow should …", "the pipeline must …": a statement about the
/// whole run.
fn about_the_workflow(tokens: &[Token]) -> bool {
    let at = usize::from(tokens.first().is_some_and(|t| t.is("the")));
    let subject = tokens.get(at).is_some_and(|t| {
        ["workflow", "pipeline", "dag", "run"]
            .iter()
            .any(|w| t.is(w))
    });
    let modal = tokens.get(at + 1).is_some_and(|t| {
        ["should", "must", "shall", "will", "needs", "has"]
            .iter()
            .any(|w| t.is(w))
    });
    subject && modal
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

fn retry(r: &mut Reader, c: &mut Clause) {
    let t = r.t;
    // ("失败重跑3次" retries; "分别重跑 Spark 任务" runs it again.)
    let rerun = |i: usize| {
        phrase_at(t, i, "重跑").is_some()
            && ((i.saturating_sub(3)..i).any(|k| phrase_at(t, k, "失败").is_some())
                || (i + 2..(i + 4).min(t.len())).any(|k| t[k].class == Class::Number))
    };
    let Some(at) = (0..t.len()).find(|&i| {
        !r.used[i]
            && (t[i].class == Class::Word && lexicon_retry(&t[i].text)
                || phrase_at(t, i, "重试").is_some()
                || rerun(i))
    }) else {
        return;
    };
    let width = if t[at].class == Class::Cjk { 2 } else { 1 };
    r.mark(at, width);
    // The count is near: "retry up to 5 times", "3 retries", "重试5次".
    // "retry the dbt run up to 2 times": a count of times first, a little
    // further on; else any number near.
    let times = (at + width..(at + width + 10).min(t.len()))
        .take_while(|&i| !t[i].is(";") && !t[i].is("；") && !t[i].is("."))
        .filter(|&i| !r.used[i])
        .find_map(|i| {
            integer_at(t, i, true)
                .filter(|&(_, n)| r.is(i + n, &["times", "time", "次", "遍"]))
                .map(|(v, n)| (i, v, n))
        });
    let after = at + width..(at + width + 5).min(t.len());
    let before = (at.saturating_sub(3)..at).rev();
    let near = times.or_else(|| {
        after
            .chain(before)
            .filter(|&i| !r.used[i] && !t[i].is("a") && !t[i].is("an"))
            .find_map(|i| integer_at(t, i, true).map(|(v, n)| (i, v, n)))
    });
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
        let Some((v, n)) = integer_at(t, i, true).filter(|_| {
            !t[i].is("a")
                || r.is(
                    i + 1,
                    &[
                        "gpu", "a100", "h100", "v100", "t4", "l4", "a10", "a10g", "tpu",
                    ],
                )
        }) else {
            i += 1;
            continue;
        };
        // Skip measure words and "x": "4块GPU", "4 x GPUs".
        let mut u = i + n;
        while r.is(u, &["块", "张", "个", "台", "颗", "x", "×", "nvidia"]) {
            u += 1;
        }
        // "8 A100s", "8张A100", "4 x H100 GPUs": the accelerator names the unit.
        let accelerators = [
            "a100", "a100s", "h100", "h100s", "v100", "v100s", "t4", "t4s", "l4", "l4s", "a10",
            "a10g", "h800", "a800", "rtx", "4090", "3090", "tpu", "tpus",
        ];
        if r.is(u, &accelerators) {
            u += 1;
            if !r.is(u, &["gpu", "gpus", "卡"]) {
                c.resources.gpus = Some(v);
                r.mark(i, u - i);
                i = u;
                continue;
            }
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
            // ("10张核心表": core tables, no cores.)
            "核" if r.is(u + 1, &["心"]) => 0,
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

/// A remark in brackets that something "is fine" or "is enough", with no
/// count in it ("(1 GPU is enough)" asks for one GPU): where it starts and
/// how many tokens it has.
fn remark(tokens: &[Token]) -> Option<(usize, usize)> {
    let open = tokens.iter().position(|t| t.is("(") || t.is("（"))?;
    let close = open
        + tokens[open..]
            .iter()
            .position(|t| t.is(")") || t.is("）"))?;
    let inner = &tokens[open + 1..close];
    let fine = matches!(
        inner,
        [.., be, fine] if (be.is("is") || be.is("be"))
            && ["fine", "ok", "okay", "enough"].iter().any(|w| fine.is(w))
    );
    (fine && inner.iter().all(|t| t.class == Class::Word)).then_some((open, close + 1 - open))
}
