//! Actions read from a clause's shape rather than its vocabulary: a verb
//! and its object ("frobnicate the widgets"), or a step named by a letter
//! ("A runs first", "then B"), whatever the verb; and step names made from
//! the user's own words, Chinese ones in English.

use super::kinds::{CJK_WORDS, KINDS, is_cjk_noun};
use super::lexicon::{self, CONTINUATION};
use super::scan::{Class, Token, inflects, phrase_at, tokenize};
use crate::decompose::{Subtask, TaskKind};

/// A step the library has no template for, as a clause asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// The step's name, from the user's words.
    pub name: String,
    /// Whether the words only name the step ("B", "step A"): a label.
    pub labelled: bool,
    /// Whether its words are off the topic of workflows ("make me a
    /// sandwich"): no step, but a refusal.
    pub off_topic: bool,
}

/// Words that open a clause without being its verb.
const LEAD: &[&str] = &[
    "we",
    "i",
    "you",
    "then",
    "also",
    "please",
    "just",
    "simply",
    "need",
    "needs",
    "want",
    "wants",
    "to",
    "should",
    "must",
    "will",
    "can",
    "could",
    "would",
    "let",
    "lets",
    "let's",
    "us",
    "and",
    "next",
    "finally",
    "first",
    "now",
    "go",
    "ahead",
    "shall",
    "kindly",
    "quickly",
    "additionally",
    "separately",
    "lastly",
    "afterwards",
    "so",
    "later",
    "please,",
    "always",
];

/// Words that cannot be the verb of an action: a clause starting with one
/// asks for no step ("This is a pipeline for …", "Hello there").
const NOT_VERBS: &[&str] = &[
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "they",
    "them",
    "their",
    "there",
    "here",
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "why",
    "how",
    "where",
    "when",
    "hello",
    "hi",
    "hey",
    "thanks",
    "thank",
    "ok",
    "okay",
    "yes",
    "no",
    "not",
    "all",
    "each",
    "every",
    "some",
    "any",
    "both",
    "our",
    "my",
    "your",
    "his",
    "her",
    "of",
    "in",
    "on",
    "at",
    "by",
    "for",
    "from",
    "with",
    "without",
    "into",
    "onto",
    "as",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "am",
    "do",
    "does",
    "did",
    "done",
    "but",
    "or",
    "nor",
    "if",
    "else",
    "otherwise",
    "very",
    "really",
    "only",
    "more",
    "most",
    "less",
    "step",
    "steps",
    "pipeline",
    "workflow",
    "dag",
    "goal",
    "objective",
    "purpose",
    "overview",
    "note",
    "notes",
    "input",
    "inputs",
    "outputs",
    "data",
    "dataset",
    "everything",
    "something",
    "nothing",
    "anything",
    "result",
    "results",
    "today",
    "tomorrow",
    "etc",
    "e.g",
    "i.e",
    "sure",
    "good",
    "great",
    "nice",
    "fine",
    "cool",
    "second",
    "third",
    "last",
    "final",
    "again",
    "same",
    "other",
    "another",
    "new",
    "old",
    "using",
    "via",
    "per",
    "about",
    "after",
    "before",
    "once",
    "until",
    "while",
    "during",
    "one",
    "two",
    "three",
    "model",
    "models",
    "job",
    "task",
    "tasks",
    "everyone",
    "team",
    "someone",
    "whole",
    "entire",
    "stage",
    "stages",
    "process",
    "system",
];

/// Where an object ends: "dedupe the records from the CRM".
const PREPOSITIONS: &[&str] = &[
    "from", "to", "into", "with", "on", "in", "for", "by", "at", "using", "via", "as", "per",
    "than", "so", "because", "if", "when", "then", "over", "across", "against", "onto", "through",
    "and", "or", "once", "after", "before", "until", "while", "every", "each", "within",
];

/// Words a name leaves out.
const NAME_STOP: &[&str] = &[
    "the",
    "a",
    "an",
    "it",
    "its",
    "them",
    "their",
    "this",
    "that",
    "these",
    "those",
    "our",
    "my",
    "your",
    "all",
    "some",
    "any",
    "one",
    "ones",
    "new",
    "latest",
    "up",
    "out",
    "s",
    "is",
    "are",
    "runs",
    "run",
    "first",
    "again",
    "also",
    "both",
    "please",
    "step",
    "steps",
    "each",
    "every",
    "different",
];

/// Common verbs of data and ops work: a clause starting with one is an
/// action even without an object ("dedupe", "sleep for 10 seconds").
const VERBS: &[&str] = &[
    "add",
    "aggregate",
    "alert",
    "analyze",
    "annotate",
    "append",
    "apply",
    "archive",
    "assemble",
    "audit",
    "augment",
    "average",
    "backfill",
    "backup",
    "benchmark",
    "bootstrap",
    "build",
    "bundle",
    "bump",
    "cache",
    "calculate",
    "calibrate",
    "call",
    "capture",
    "categorize",
    "celebrate",
    "check",
    "classify",
    "clone",
    "cluster",
    "collect",
    "combine",
    "commit",
    "compare",
    "compile",
    "compress",
    "compute",
    "concatenate",
    "configure",
    "consume",
    "convert",
    "copy",
    "count",
    "crawl",
    "create",
    "crop",
    "cry",
    "decode",
    "decompress",
    "decrypt",
    "dedupe",
    "deduplicate",
    "delete",
    "derive",
    "detect",
    "display",
    "distill",
    "divide",
    "download",
    "draw",
    "drop",
    "dump",
    "echo",
    "embed",
    "emit",
    "encode",
    "encrypt",
    "enrich",
    "estimate",
    "explain",
    "export",
    "extract",
    "fail",
    "fetch",
    "filter",
    "finalize",
    "find",
    "flag",
    "flatten",
    "flip",
    "forward",
    "gather",
    "generate",
    "geocode",
    "greet",
    "group",
    "hash",
    "index",
    "infer",
    "insert",
    "inspect",
    "install",
    "invoke",
    "join",
    "label",
    "launch",
    "lint",
    "list",
    "log",
    "lookup",
    "mask",
    "match",
    "merge",
    "migrate",
    "mine",
    "monitor",
    "move",
    "multiply",
    "open",
    "optimize",
    "output",
    "package",
    "parse",
    "partition",
    "patch",
    "persist",
    "pivot",
    "plot",
    "poll",
    "populate",
    "post",
    "print",
    "produce",
    "profile",
    "prune",
    "publish",
    "push",
    "quantize",
    "rank",
    "rebuild",
    "recompute",
    "record",
    "reduce",
    "refresh",
    "reindex",
    "remove",
    "rename",
    "render",
    "repartition",
    "replace",
    "replicate",
    "resample",
    "reset",
    "resize",
    "restart",
    "restore",
    "retrieve",
    "reverse",
    "rollback",
    "rotate",
    "round",
    "sample",
    "sanitize",
    "say",
    "scale",
    "scan",
    "search",
    "segment",
    "send",
    "serialize",
    "shard",
    "shuffle",
    "simulate",
    "sleep",
    "snapshot",
    "sort",
    "square",
    "stream",
    "subtract",
    "sum",
    "swap",
    "sync",
    "tag",
    "tidy",
    "toss",
    "touch",
    "trace",
    "transcode",
    "transcribe",
    "translate",
    "transpose",
    "trigger",
    "trim",
    "truncate",
    "unpack",
    "update",
    "upsert",
    "verify",
    "vote",
    "wait",
    "warm",
    "watch",
    "whalesay",
    "zip",
];

/// What follows a verb that has an object: "frobnicate the widgets",
/// "flip a coin", "add 2 numbers".
const OBJECT_START: &[&str] = &[
    "the", "a", "an", "all", "it", "them", "our", "my", "this", "these", "those", "each", "every",
    "some", "two", "three", "both", "their", "its", "your",
];

/// Objects no workflow step acts on: a request about them is refused.
const OFF_TOPIC: &[&str] = &[
    "sandwich",
    "sandwiches",
    "cake",
    "pizza",
    "coffee",
    "tea",
    "dinner",
    "lunch",
    "breakfast",
    "meal",
    "recipe",
    "poem",
    "song",
    "joke",
    "jokes",
    "weather",
    "flight",
    "hotel",
    "vacation",
    "taxi",
    "laundry",
    "homework",
    "essay",
    "haircut",
    "groceries",
    "蛋糕",
    "三明治",
    "咖啡",
    "披萨",
    "饭",
    "诗",
    "笑话",
    "天气",
    "机票",
    "酒店",
    "歌",
];

/// The generic action a clause asks for, when no library kind matched:
/// `used` marks tokens other readers took (conditions, schedules …).
pub fn generic(tokens: &[Token], used: &[bool]) -> Option<Action> {
    let free: Vec<&Token> = tokens
        .iter()
        .zip(used)
        .filter(|(t, u)| !**u && t.class != Class::Punct)
        .map(|(t, _)| t)
        .collect();
    let off_topic = free.iter().any(|t| OFF_TOPIC.iter().any(|w| t.is(w)))
        || tokens
            .iter()
            .any(|t| t.class == Class::Cjk && off_topic_cjk(tokens, t));
    let first_cjk = free.iter().position(|t| t.class == Class::Cjk);
    let first_word = free.iter().position(|t| t.class == Class::Word);
    if let Some(c) = first_cjk
        && first_word.is_none_or(|w| c < w || !free[w].is_label())
    {
        return cjk(&free[c..], off_topic);
    }
    let mut i = 0;
    while i < free.len() && !free[i].is_label() && LEAD.iter().any(|w| free[i].is(w)) {
        i += 1;
    }
    let rest = &free[i..];
    let first = rest.first()?;
    if let Some(name) = label(rest) {
        return Some(Action {
            name,
            labelled: true,
            off_topic,
        });
    }
    let verb_like = first.class == Class::Word
        && first.text.len() >= 2
        && first
            .text
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '-')
        && !NOT_VERBS.iter().any(|w| first.is(w))
        && !CONTINUATION.iter().any(|w| first.is(w))
        && !lexicon::is_filler(first);
    let has_object = rest
        .get(1)
        .is_some_and(|t| t.class == Class::Number || OBJECT_START.iter().any(|w| t.is(w)))
        || rest.get(1).is_some_and(|t| t.class == Class::Url);
    let known = VERBS.iter().any(|v| inflects(&first.text, v));
    if !verb_like || !(known || has_object || off_topic) {
        return None;
    }
    let mut words = vec![first.text.clone()];
    words.extend(object(&rest[1..]));
    Some(Action {
        name: slug(&words),
        labelled: false,
        off_topic,
    })
}

fn off_topic_cjk(tokens: &[Token], t: &Token) -> bool {
    let i = tokens.iter().position(|x| std::ptr::eq(x, t)).unwrap_or(0);
    OFF_TOPIC.iter().any(|w| {
        w.chars().next().is_some_and(super::scan::is_cjk) && phrase_at(tokens, i, w).is_some()
    })
}

/// "B", "step A", "task 3", "run A", "A runs": the step's own name.
fn label(rest: &[&Token]) -> Option<String> {
    let is = |k: usize, words: &[&str]| rest.get(k).is_some_and(|t| words.iter().any(|w| t.is(w)));
    let mut k = 0;
    if is(
        k,
        &[
            "run", "execute", "start", "launch", "trigger", "do", "perform", "call",
        ],
    ) {
        k += 1;
    }
    if is(k, &["step", "task", "node", "job", "stage"])
        && let Some(t) = rest.get(k + 1)
    {
        return match t.class {
            Class::Number => Some(format!("step-{}", t.text)),
            _ if t.is_label() => Some(t.text.clone()),
            Class::Word if t.text.len() <= 12 && !NAME_STOP.iter().any(|w| t.is(w)) => {
                Some(slug(&[t.text.clone()]))
            }
            _ => None,
        };
    }
    rest.get(k).filter(|t| t.is_label()).map(|t| t.text.clone())
}

/// Up to two object words after the verb, up to a preposition.
fn object(after: &[&Token]) -> Vec<String> {
    after
        .iter()
        .take_while(|t| {
            matches!(t.class, Class::Word | Class::Cjk) && !PREPOSITIONS.iter().any(|w| t.is(w))
        })
        .filter(|t| t.class == Class::Word && !NAME_STOP.iter().any(|w| t.is(w)))
        .take(2)
        .map(|t| t.text.clone())
        .collect()
}

/// A Chinese action: its verb and up to two nouns in English, or the
/// letter it names ("运行A").
fn cjk(free: &[&Token], off_topic: bool) -> Option<Action> {
    let owned: Vec<Token> = free.iter().map(|t| (*t).clone()).collect();
    let words = cjk_words(&owned);
    if let Some(label) = owned.iter().find(|t| t.is_label()) {
        return Some(Action {
            name: label.text.clone(),
            labelled: true,
            off_topic,
        });
    }
    let verbs = words.iter().filter(|w| !is_cjk_noun(w)).count();
    if verbs == 0 && !off_topic {
        return None;
    }
    let verb = words.iter().position(|w| !is_cjk_noun(w));
    let name = match verb {
        Some(v) => {
            let mut parts = vec![words[v].clone()];
            parts.extend(
                words[v + 1..]
                    .iter()
                    .filter(|w| is_cjk_noun(w))
                    .take(2)
                    .cloned(),
            );
            slug(&parts)
        }
        None if !words.is_empty() => slug(&words[..words.len().min(2)]),
        None => "step".into(),
    };
    Some(Action {
        name,
        labelled: false,
        off_topic,
    })
}

/// The English words of the Chinese words in `tokens`, in order.
fn cjk_words(tokens: &[Token]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match CJK_WORDS
            .iter()
            .find_map(|(zh, en)| phrase_at(tokens, i, zh).map(|n| (n, *en)))
        {
            Some((n, en)) => {
                out.push(en.to_owned());
                i += n;
            }
            None => i += 1,
        }
    }
    out
}

/// The name of a step: the subtask's own name, or its verb (the kind
/// phrase that asked for it, or the first verb) and its object or model,
/// from the user's words.
pub fn step_name(task: &Subtask) -> String {
    if let Some(name) = &task.name {
        let name = slug(&[name.clone()]);
        if !name.is_empty() {
            return name;
        }
    }
    let tokens = tokenize(&task.text);
    let phrase = lexicon::kind_phrase(&tokens)
        .filter(|(k, _, _)| *k == task.kind || (k.trains() && task.kind.trains()));
    let mut words: Vec<String> = Vec::new();
    let mut after = 0;
    if let Some((kind, at, n)) = phrase {
        let spelled = KINDS
            .iter()
            .filter(|(k, _)| *k == kind)
            .flat_map(|(_, ps)| ps.iter())
            .filter(|p| phrase_at(&tokens, at, p) == Some(n))
            .max_by_key(|p| p.len())
            .copied()
            .unwrap_or_default();
        if spelled.chars().next().is_some_and(super::scan::is_cjk) {
            words.extend(cjk_words(&tokens[at..at + n]));
        } else {
            // The base form the lexicon spells, not "cleaning".
            words.extend(
                spelled
                    .split(' ')
                    .filter(|w| !NAME_STOP.contains(w))
                    .map(str::to_owned),
            );
        }
        after = at + n;
    }
    if words.is_empty() {
        return default_name(task);
    }
    match &task.model {
        Some(model) if task.kind.trains() => words.push(model.replace('_', "-")),
        _ if tokens.get(after).is_some_and(|t| t.class == Class::Cjk) => {
            let nouns: Vec<String> = cjk_words(&tokens[after..])
                .into_iter()
                .take_while(|w| is_cjk_noun(w))
                .take(2)
                .collect();
            words.extend(nouns);
        }
        _ => {
            let rest: Vec<&Token> = tokens[after..]
                .iter()
                .filter(|t| t.class != Class::Punct || t.is("'") || t.is("\""))
                .filter(|t| t.class != Class::Punct)
                .collect();
            let known = |t: &Token| {
                KINDS
                    .iter()
                    .flat_map(|(_, ps)| ps.iter())
                    .any(|p| inflects(&t.text, p))
            };
            words.extend(
                object(&rest)
                    .into_iter()
                    .filter(|w| !known(&tokenize(w)[0]))
                    .take(3usize.saturating_sub(words.len())),
            );
        }
    }
    let name = slug(&words);
    if name.is_empty() {
        default_name(task)
    } else {
        name
    }
}

fn default_name(task: &Subtask) -> String {
    match (task.kind, &task.model) {
        (TaskKind::Train, Some(m)) => format!("train-{}", m.replace('_', "-")),
        (TaskKind::DistributedTrain, _) => "train-distributed".into(),
        (TaskKind::Load, _) => "load-data".into(),
        (TaskKind::QualityCheck, _) => "check-data-quality".into(),
        (TaskKind::Select, _) => "select-best".into(),
        (TaskKind::Register, _) => "register-model".into(),
        (TaskKind::Shell, _) => "run".into(),
        (k, _) => k.as_str().replace('_', "-"),
    }
}

/// Words → a DNS-label name: lowercase ASCII letters, digits and dashes,
/// starting with a letter, at most 40 characters.
pub fn slug(words: &[String]) -> String {
    let joined = words.join("-").to_ascii_lowercase();
    let mut out = String::new();
    for c in joined.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.trim_matches('-').chars().take(40).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        out.insert_str(0, "step-");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(text: &str) -> Option<Action> {
        let t = tokenize(text);
        generic(&t, &vec![false; t.len()])
    }

    fn named(kind: TaskKind, text: &str, model: Option<&str>) -> String {
        let mut task = Subtask::new(kind, text);
        task.model = model.map(str::to_owned);
        step_name(&task)
    }

    #[test]
    fn actions_from_the_shape_of_a_clause() {
        let a = action("frobnicate the widgets").unwrap();
        assert_eq!((a.name.as_str(), a.labelled), ("frobnicate-widgets", false));
        assert_eq!(action("A runs").unwrap().name, "a");
        assert_eq!(action("then run step B").unwrap().name, "b");
        assert_eq!(action("print 'heads'").unwrap().name, "print-heads");
        assert_eq!(action("抛一枚硬币").unwrap().name, "flip-coin");
        assert_eq!(action("运行A").unwrap().name, "a");
        assert!(action("Make me a sandwich").unwrap().off_topic);
        assert_eq!(action("This is a pipeline for churn"), None);
        assert_eq!(action("hello there"), None);
        assert_eq!(action("a model"), None);
    }

    #[test]
    fn names_come_from_the_users_words() {
        assert_eq!(
            named(TaskKind::Preprocess, "clean the text", None),
            "clean-text"
        );
        assert_eq!(named(TaskKind::Preprocess, "去重", None), "dedupe");
        assert_eq!(
            named(TaskKind::Train, "train an LSTM", Some("lstm")),
            "train-lstm"
        );
        assert_eq!(
            named(
                TaskKind::Preprocess,
                "dedupe the records from the CRM",
                None
            ),
            "dedupe-records"
        );
        assert_eq!(named(TaskKind::Evaluate, "evaluate it", None), "evaluate");
        assert_eq!(named(TaskKind::Select, "keep the best", None), "keep-best");
        assert_eq!(named(TaskKind::Export, "导出模型", None), "export-model");
    }
}
