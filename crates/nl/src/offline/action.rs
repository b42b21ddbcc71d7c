//! Actions read from a clause's shape rather than its vocabulary: a verb
//! and its object ("frobnicate the widgets"), or a step named by a letter
//! ("A runs first", "then B"), whatever the verb; and step names made from
//! the user's own words, Chinese ones in English.

use super::kinds::{KINDS, cjk_word_at, is_cjk_noun};
use super::lexicon;
use super::scan::{Class, Token, find_any, phrase_at, tokenize};
use crate::decompose::{Subtask, TaskKind};
use cjk::{cjk, cjk_name, cjk_words};

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
#[rustfmt::skip]
const LEAD: &[&str] = &[
    "we", "i", "you", "then", "also", "please", "just", "simply", "need", "needs", "want", "wants",
    "to", "should", "must", "will", "can", "could", "would", "let", "lets", "let's", "us", "and",
    "next", "finally", "first", "now", "go", "ahead", "shall", "kindly", "quickly", "additionally",
    "separately", "lastly", "afterwards", "so", "later", "please,", "always", "pls", "plz", "but",
];

/// Words that cannot be the verb of an action: a clause starting with one
/// asks for no step ("This is a pipeline for …", "Hello there").
#[rustfmt::skip]
const NOT_VERBS: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "it", "its", "they", "them", "their",
    "there", "here", "what", "which", "who", "whom", "whose", "why", "how", "where", "when",
    "hello", "hi", "hey", "thanks", "thank", "ok", "okay", "yes", "no", "not", "all", "each",
    "every", "some", "any", "both", "our", "my", "your", "his", "her", "of", "in", "on", "at",
    "by", "for", "from", "with", "without", "into", "onto", "as", "is", "are", "was", "were", "be",
    "been", "being", "am", "do", "does", "did", "done", "but", "or", "nor", "if", "else",
    "otherwise", "very", "really", "only", "more", "most", "less", "step", "steps", "pipeline",
    "workflow", "dag", "goal", "objective", "purpose", "overview", "note", "notes", "input",
    "inputs", "outputs", "data", "dataset", "everything", "something", "nothing", "anything",
    "result", "results", "today", "tomorrow", "etc", "e.g", "i.e", "sure", "good", "great", "nice",
    "fine", "cool", "second", "third", "last", "final", "again", "same", "other", "another", "new",
    "old", "using", "via", "per", "about", "after", "before", "once", "until", "while", "during",
    "one", "two", "three", "model", "models", "job", "task", "tasks", "everyone", "team",
    "someone", "whole", "entire", "stage", "stages", "system", "like", "would", "want",
    "need", "please", "also", "then", "me", "us", "we", "i", "you", "use", "uses", "allocate", "request", "reserve", "give", "have", "has", "had", "wanted", "think", "thought", "guess", "hope", "wonder",
    "love", "feel", "suppose", "know", "mean",
];

/// Where an object ends: "dedupe the records from the CRM".
#[rustfmt::skip]
pub(super) const PREPOSITIONS: &[&str] = &[
    "from", "to", "into", "with", "on", "in", "for", "by", "at", "using", "via", "as", "per",
    "than", "so", "because", "if", "when", "then", "over", "across", "against", "onto", "through",
    "and", "or", "once", "after", "before", "until", "while", "every", "each", "within", "of",
];

/// Words a name leaves out.
#[rustfmt::skip]
pub(super) const NAME_STOP: &[&str] = &[
    "the", "a", "an", "it", "its", "them", "their", "this", "that", "these", "those", "our", "my",
    "your", "all", "some", "any", "one", "ones", "new", "latest", "up", "out", "s", "is", "are",
    "first", "again", "also", "both", "please", "step", "steps", "each", "every",
    "different", "em", "thx", "kthx", "pls", "too", "someone", "somebody", "anyone",
];

/// Common verbs of data and ops work: a clause starting with one is an
/// action even without an object ("dedupe", "sleep for 10 seconds").
#[rustfmt::skip]
const VERBS: &[&str] = &[
    "add", "aggregate", "alert", "analyze", "annotate", "append", "apply", "archive", "assemble",
    "audit", "augment", "average", "backfill", "backup", "benchmark", "bootstrap", "build",
    "bundle", "bump", "cache", "calculate", "calibrate", "call", "capture", "categorize",
    "celebrate", "check", "checksum", "classify", "clone", "cluster", "collect", "combine", "commit",
    "compare", "compile", "compress", "compute", "concatenate", "configure", "consume", "convert",
    "copy", "count", "crawl", "create", "crop", "cry", "decode", "decompress", "decrypt", "dedupe",
    "deduplicate", "delete", "derive", "detect", "display", "distill", "divide", "download",
    "draw", "drop", "dump", "echo", "embed", "emit", "encode", "encrypt", "enrich", "estimate",
    "explain", "export", "extract", "fail", "fetch", "filter", "finalize", "find", "flag",
    "flatten", "flip", "forward", "gather", "generate", "geocode", "greet", "group", "hash",
    "index", "infer", "insert", "inspect", "install", "invoke", "join", "label", "launch", "lint",
    "list", "log", "lookup", "mask", "match", "merge", "migrate", "mine", "monitor", "move",
    "multiply", "open", "optimize", "output", "package", "parse", "partition", "patch", "persist",
    "pivot", "plot", "poll", "populate", "post", "print", "produce", "profile", "prune", "publish",
    "push", "quantize", "rank", "rebuild", "recompute", "record", "reduce", "refresh", "reindex",
    "remove", "rename", "render", "repartition", "replace", "replicate", "resample", "reset",
    "resize", "restart", "restore", "retrieve", "reverse", "rollback", "rotate", "round", "sample",
    "sanitize", "say", "scale", "scan", "search", "segment", "send", "serialize", "shard",
    "shuffle", "simulate", "sleep", "snapshot", "sort", "square", "stream", "subtract", "sum",
    "swap", "sync", "tag", "tidy", "toss", "touch", "trace", "transcode", "transcribe",
    "translate", "transpose", "trigger", "trim", "truncate", "unpack", "update", "upsert",
    "verify", "vote", "wait", "warm", "watch", "whalesay", "zip", "roll", "grab", "get", "make",
    "note", "remind", "pick", "choose", "decide", "bake", "cook", "materialize", "promote",
    "retire", "wipe", "sweep", "finetune", "pretrain", "notify", "upload", "train", "evaluate",
    "deploy", "register", "format", "impute", "preprocess", "read", "load", "transform", "clean",
    "tokenize", "dedup", "serve", "release", "schedule", "smoke", "score", "predict", "import",
    "ingest", "query", "scrape", "reconcile", "retrain", "redeploy", "rollout", "page", "ping",
    "email", "tweet", "store", "save", "write", "validate", "test", "assert", "summarize", "total",
    "review", "approve", "replay", "diff", "chunk", "anonymize", "pseudonymize", "redact", "strip",
    "vectorize", "compact", "vacuum", "deskew", "denoise", "binarize", "standardize", "normalize",
];

/// What follows a verb that has an object: "frobnicate the widgets",
/// "flip a coin", "add 2 numbers".
#[rustfmt::skip]
const OBJECT_START: &[&str] = &[
    "the", "a", "an", "all", "it", "them", "our", "my", "this", "these", "those", "each", "every",
    "some", "two", "three", "both", "their", "its", "your", "last", "yesterday", "today", "latest",
    "new", "old", "raw", "any",
];

/// Objects no workflow step acts on: a request about them is refused.
#[rustfmt::skip]
const OFF_TOPIC: &[&str] = &[
    "sandwich", "sandwiches", "cake", "pizza", "coffee", "tea", "dinner", "lunch", "breakfast",
    "meal", "recipe", "poem", "song", "joke", "jokes", "weather", "flight", "hotel", "vacation",
    "taxi", "laundry", "homework", "essay", "haircut", "groceries", "蛋糕", "三明治", "咖啡", "披萨", "饭",
    "诗", "笑话", "天气", "机票", "酒店", "歌",
];

/// Words that say something about the user, not the workflow: "just
/// wanted to say your docs are great".
const SPEECH: &[&str] = &[
    "wanted", "want", "think", "thought", "guess", "hope", "wonder", "love", "like", "feel", "mean",
];

/// Verbs that only say a step runs: "A runs first", "run step B".
#[rustfmt::skip]
const TRIVIAL: &[&str] = &[
    "run", "runs", "execute", "executes", "start", "starts", "go", "goes", "happen", "happens",
    "begin", "begins", "kick", "kicks", "is", "are", "has", "needs", "finish", "finishes",
    "complete", "completes", "come", "comes",
];

/// Verbs that lead a step named by what follows: "run the GPU smoke test".
#[rustfmt::skip]
const LEADING_VERBS: &[&str] = &[
    "run", "do", "perform", "compute", "calculate", "write", "send", "get", "make", "create",
    "produce", "generate", "build", "publish", "execute", "trigger", "kick", "launch", "start",
];

/// The generic action a clause asks for, when no library kind matched:
/// `used` marks tokens other readers took (conditions, schedules …).
///
/// `conditional`: the clause has a condition, so "switch traffic to green
/// if they pass" is an action even though "traffic" starts no object.
pub fn generic(tokens: &[Token], used: &[bool], conditional: bool) -> Option<Action> {
    let free: Vec<&Token> = tokens
        .iter()
        .zip(used)
        .filter(|(t, u)| !**u && t.class != Class::Punct)
        .map(|(t, _)| t)
        .collect();
    // ("weather data", "天气数据": data about it is on topic.)
    const DATA: &[&str] = &[
        "data", "dataset", "features", "feature", "api", "records", "数据", "特征",
    ];
    let data_after = |i: usize| {
        tokens.get(i).is_some_and(|t| {
            DATA.iter()
                .any(|w| phrase_at(tokens, i, w).is_some() || t.is(w))
        })
    };
    let off_topic = tokens.iter().enumerate().any(|(i, t)| {
        !used.get(i).copied().unwrap_or(false)
            && t.class != Class::Punct
            && OFF_TOPIC.iter().any(|w| t.is(w))
            && !data_after(i + 1)
    }) || (0..tokens.len()).any(|i| {
        OFF_TOPIC.iter().any(|w| {
            w.chars().next().is_some_and(super::scan::is_cjk)
                && phrase_at(tokens, i, w).is_some_and(|n| !data_after(i + n))
        })
    });
    let first_cjk = free.iter().position(|t| t.class == Class::Cjk);
    let first_word = free.iter().position(|t| t.class == Class::Word);
    if let Some(c) = first_cjk
        && first_word.is_none_or(|w| c < w || !free[w].is_label())
    {
        return cjk(&free, off_topic);
    }
    let mut i = 0;
    while i < free.len() && !free[i].is_label() && LEAD.iter().any(|w| free[i].is(w)) {
        i += 1;
    }
    // "keep flipping a coin": the verb is the one kept at; "finish by
    // printing done", "start with cleaning it": the one it starts or ends
    // with.
    if free.get(i).is_some_and(|t| t.is("keep"))
        && free.get(i + 1).is_some_and(|t| t.text.ends_with("ing"))
    {
        i += 1;
    } else if free.get(i).is_some_and(|t| {
        ["finish", "start", "begin", "end", "conclude", "wrap"]
            .iter()
            .any(|w| t.is(w))
    }) && free.get(i + 1).is_some_and(|t| t.is("by") || t.is("with"))
        && free
            .get(i + 2)
            .is_some_and(|t| t.text.len() > 5 && t.text.ends_with("ing"))
    {
        i += 2;
    }
    // ("start from our SFT checkpoint, generate 4 responses": where things
    // begin, then the step.)
    if free.get(i).is_some_and(|t| t.is("start") || t.is("begin"))
        && free.get(i + 1).is_some_and(|t| t.is("from"))
        && let Some(v) = (i + 2..free.len()).find(|&k| {
            free[k].class == Class::Word && VERBS.contains(&lemma(&free[k].text).as_str())
        })
    {
        i = v;
    }
    // The first known verb leads, past modifiers before it ("of the
    // outcome, print …").
    // ("retry the push 3 times": after an article it is a noun.)
    if let Some(v) = (i..free.len()).find(|&k| {
        free[k].class == Class::Word
            && VERBS.contains(&lemma(&free[k].text).as_str())
            && !(k > 0 && (free[k - 1].is("for") || free[k - 1].is("during")))
            && !(k > 0 && ["the", "a", "an"].iter().any(|w| free[k - 1].is(w)))
    }) && v > i
        && (NOT_VERBS.iter().any(|w| free[i].is(w))
            || free[i].text.ends_with("ly")
            || !free[i].text.chars().all(|c| c.is_ascii_alphabetic()))
        && !free[i].is_label()
        && !free[i..v]
            .iter()
            .any(|t| t.is_label() || SPEECH.iter().any(|w| t.is(w)))
    {
        i = v;
    }
    let rest = &free[i..];
    let first = rest.first()?;
    if names_tasks(rest) {
        return None;
    }
    // ("- dbt_seed": a task id alone in its clause; "dbt_test on
    // everything": or saying what it acts on, not a parameter's values as
    // in "num_round from 50 to 100".)
    let mut words: Vec<&Token> = tokens.iter().filter(|t| t.class != Class::Punct).collect();
    // ("step3 one after another": how the list runs, said after its last.)
    for tail in lexicon::IN_TURN {
        let tail: Vec<&str> = tail.split(' ').collect();
        let n = words.len();
        if n > tail.len()
            && words[n - tail.len()..]
                .iter()
                .zip(&tail)
                .all(|(t, w)| t.is(w))
        {
            words.truncate(n - tail.len());
        }
    }
    let acts_on = [
        "on", "for", "against", "into", "to", "in", "across", "over", "with", "using", "via",
    ];
    let alone = words.len() == 1
        || (words.len() >= 3
            && words[0].is_task_id()
            && acts_on.iter().any(|p| words[1].is(p))
            && words[2].class == Class::Word
            && !words[2].is_task_id());
    if let Some(name) = label(rest, alone) {
        return Some(Action {
            name,
            labelled: true,
            off_topic,
        });
    }
    let verb_like = verb_like(first);
    let has_object = rest.get(1).is_some_and(|t| {
        matches!(t.class, Class::Number | Class::Url) || OBJECT_START.iter().any(|w| t.is(w))
    });
    // ("load-test green": a verb of two joined words.)
    let joined = first.text.contains('-')
        && first
            .text
            .rsplit('-')
            .next()
            .is_some_and(|last| VERBS.contains(&lemma(last).as_str()));
    // "run sentiment analysis", "perform entity resolution".
    // ("start from our SFT checkpoint" says where things begin.)
    let known = VERBS.contains(&lemma(&first.text).as_str())
        || joined
        || phrasal(rest).is_some()
        || (LEADING_VERBS.iter().any(|w| first.is(w))
            && rest.len() >= 2
            && !PREPOSITIONS.iter().any(|w| rest[1].is(w)));
    let phrase = conditional
        && rest.get(1).is_some_and(|t| t.class == Class::Word)
        && rest
            .get(2)
            .is_some_and(|t| PREPOSITIONS.iter().any(|w| t.is(w)));
    if !verb_like || !(known || has_object || off_topic || phrase) {
        return None;
    }
    Some(Action {
        name: verb_first_name(rest),
        labelled: false,
        off_topic,
    })
}

/// A step's name from the clause's verb on, the verb in its base form ("a
/// pipeline that pulls …, forecasts the demand" → "forecast-demand").
fn verb_first_name(rest: &[&Token]) -> String {
    if let Some(joined) = phrasal(rest) {
        let mut words = vec![joined.to_owned()];
        words.extend(content_words(&rest[2..], 3));
        return slug(&words);
    }
    let mut words = content_words(rest, 4);
    if let Some(verb) = words.first_mut() {
        *verb = third_person_base(verb);
    }
    slug(&words)
}

/// "back up the database", "tear down the cluster": a verb of two words,
/// as one.
fn phrasal<T: std::borrow::Borrow<Token>>(rest: &[T]) -> Option<&'static str> {
    const PHRASAL: &[(&str, &str, &str)] = &[
        ("back", "up", "back-up"),
        ("roll", "back", "roll-back"),
        ("tear", "down", "tear-down"),
        ("spin", "up", "spin-up"),
        ("shut", "down", "shut-down"),
        ("set", "up", "set-up"),
        ("sign", "off", "sign-off"),
    ];
    let [verb, particle, ..] = rest else {
        return None;
    };
    PHRASAL
        .iter()
        .find(|(v, p, _)| verb.borrow().is(v) && particle.borrow().is(p))
        .map(|(.., joined)| *joined)
}

/// A clause in a list of steps ("…, compact small files, and expire old
/// snapshots") that starts with a word that can be a verb and names what
/// it acts on: a generic step, whatever the verb.
///
/// `after_and`: the clause followed "and", where a bare noun phrase ("mask
/// the emails and phone numbers") is more objects, so the verb must be a
/// known one or be followed by an article.
pub fn listed(tokens: &[Token], after_and: bool) -> Option<Action> {
    let free: Vec<&Token> = tokens.iter().filter(|t| t.class != Class::Punct).collect();
    // ("otherwise revert to v6": the other branch's step.)
    let mut i = 0;
    while i < free.len() && LEAD.iter().chain(lexicon::OTHERWISE).any(|w| free[i].is(w)) {
        i += 1;
    }
    // ("as the exit task, print …": what runs at the end.)
    let plain: Vec<Token> = free.iter().map(|t| (*t).clone()).collect();
    if let Some((at, n)) = find_any(&plain, lexicon::ALWAYS)
        && free[i..at]
            .iter()
            .all(|t| ["as", "the", "an", "a"].iter().any(|w| t.is(w)))
    {
        i = at + n;
    }
    let rest = &free[i..];
    let first = rest.first()?;
    // ("…: test-unit, test-cov and test-e2e": a job named by a verb and
    // what it does, alone in its clause.)
    let job = rest.len() == 1
        && first.class == Class::Word
        && first.text.split_once('-').is_some_and(|(verb, what)| {
            is_verb(verb)
                && what.split('-').all(|p| {
                    !p.is_empty()
                        && p.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                })
        });
    if job {
        return Some(Action {
            name: slug(std::slice::from_ref(&first.text)),
            labelled: false,
            off_topic: false,
        });
    }
    let verb = verb_like(first)
        && first.text.len() >= 3
        && !first.text.ends_with("ly")
        && !PREPOSITIONS.iter().any(|w| first.is(w))
        && !SPEECH.iter().any(|w| first.is(w))
        && !TRIVIAL.iter().any(|w| first.is(w));
    // ("…; sessionize; …": a known verb alone is a step too.)
    let object = rest
        .get(1)
        .is_some_and(|t| matches!(t.class, Class::Word | Class::Number | Class::Code))
        || (rest.len() == 1 && is_verb(&first.text));
    let sure = VERBS.contains(&lemma(&first.text).as_str())
        || rest
            .get(1)
            .is_some_and(|t| OBJECT_START.iter().any(|w| t.is(w)));
    if !verb || !object || (after_and && !sure) || rest.iter().any(|t| t.class == Class::Cjk) {
        return None;
    }
    Some(Action {
        name: verb_first_name(rest),
        labelled: false,
        off_topic: false,
    })
}

/// "forecasts" → "forecast", "pushes" → "push" (a verb the lemmatiser
/// does not know; "process", "analysis" stay).
fn third_person_base(word: &str) -> String {
    if word.len() <= 3 || ["ss", "us", "is"].iter().any(|e| word.ends_with(e)) {
        return word.to_owned();
    }
    for e in ["shes", "ches", "xes"] {
        if let Some(stem) = word.strip_suffix(e) {
            return format!("{stem}{}", &e[..e.len() - 2]);
        }
    }
    word.strip_suffix('s').unwrap_or(word).to_owned()
}

/// A word that may be a verb: English letters, and none of the words that
/// cannot be.
fn verb_like(t: &Token) -> bool {
    t.class == Class::Word
        && t.text.len() >= 2
        && t.text.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
        && !NOT_VERBS.iter().any(|w| t.is(w))
}

/// "chunk the pages", "collect the scores": the plural kind word at `at`
/// is the object of the verb that opens the clause, not its action ("add a
/// quality check" still asks for a check).
pub fn object_of_verb(free: &[Token], at: usize) -> bool {
    let Some(first) = free
        .iter()
        .position(|t| !t.text.is_empty() && !LEAD.iter().any(|w| t.is(w)))
    else {
        return false;
    };
    let verb = &free[first];
    let verb_like = verb_like(verb)
        && ![TRIVIAL, LEADING_VERBS]
            .iter()
            .any(|list| list.iter().any(|w| verb.is(w)));
    let plural = free[at].text.len() > 3 && free[at].text.ends_with('s');
    // ("spin up a cluster", "tear down the cluster": what a verb of two
    // words acts on.)
    let after_phrasal = phrasal(&free[first..]).is_some()
        && first + 3 == at
        && OBJECT_START.iter().any(|w| free[first + 2].is(w));
    // ("pseudonymize the email", "scrape the page": a message word is what
    // a verb that sends nothing acts on.)
    // (Not a channel: "open a pagerduty incident" alerts.)
    let message = ["email", "e-mail", "page", "message"]
        .iter()
        .any(|w| free[at].is(w))
        && lexicon::kind(&free[first..=first]).is_none()
        && !SENDS.iter().any(|w| verb.is(w));
    (verb_like
        && (plural || message)
        && first + 2 == at
        && OBJECT_START.iter().any(|w| free[first + 1].is(w)))
        || after_phrasal
}

/// Verbs that send what they act on: "send the email", "post a message".
const SENDS: &[&str] = &[
    "send", "sends", "post", "posts", "write", "writes", "drop", "shoot", "fire", "forward",
    "deliver", "publish", "push", "share", "compose", "draft",
];

/// "run two tasks", "执行两个任务": words about the steps, not a step.
fn names_tasks(rest: &[&Token]) -> bool {
    let tasks = ["tasks", "jobs", "steps", "things", "任务", "步骤"];
    rest.len() <= 4
        && rest.iter().any(|t| tasks.iter().any(|w| t.is(w)))
        && rest.iter().any(|t| {
            t.class == Class::Number
                || ["two", "three", "both", "several", "these", "两"]
                    .iter()
                    .any(|w| t.is(w))
        })
}

/// "B", "step A", "task 3", "run A", "A prints hello": the step's own
/// name (with what it does, unless it only runs).
fn label(rest: &[&Token], alone: bool) -> Option<String> {
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
    let steps = [
        "step", "task", "node", "job", "stage", "steps", "tasks", "nodes", "jobs",
    ];
    let name = if is(k, &steps)
        && let Some(t) = rest.get(k + 1)
    {
        k += 2;
        if t.is_label() {
            t.text.clone()
        } else if let Some((n, _)) = lexicon::integer_at(std::slice::from_ref(*t), 0, true)
            .filter(|_| !t.is("a") && !t.is("an"))
        {
            format!("step-{n}")
        } else if t.class == Class::Word
            && t.text.len() <= 12
            && !NAME_STOP.iter().any(|w| t.is(w))
            && !PREPOSITIONS.iter().any(|w| t.is(w))
        {
            slug(std::slice::from_ref(&t.text))
        } else {
            return None;
        }
    } else if rest.get(k).is_some_and(|t| t.is_label()) {
        k += 1;
        rest[k - 1].text.clone()
    } else if rest.get(k).is_some_and(|t| {
        t.is_task_id()
            && (alone
                || t.text.split('_').next().is_some_and(|w| {
                    is_verb(w)
                        || TRIVIAL.contains(&w)
                        || KINDS.iter().any(|(_, ps)| ps.contains(&w))
                }))
    }) {
        // "extract_users >> transform", "- dbt_seed": an Airflow task id,
        // alone or naming its action first (not a parameter: "num_round
        // from 50 to 100").
        k += 1;
        slug(std::slice::from_ref(&rest[k - 1].text))
    } else {
        return None;
    };
    // "A prints hello": what it does is part of its name.
    let does = rest[k..]
        .first()
        .filter(|t| t.class == Class::Word && !TRIVIAL.iter().any(|w| t.is(w)) && !t.is_label())
        .filter(|t| VERBS.contains(&lemma(&t.text).as_str()) || t.text.ends_with('s'));
    match does {
        Some(_) => {
            let mut words = vec![name];
            words.extend(content_words(&rest[k..], 3));
            Some(slug(&words))
        }
        None => Some(name),
    }
}

/// A word that is a verb the planner knows, in any form.
pub fn is_verb(word: &str) -> bool {
    // "sessionize", "tokenise", "denormalize", "stratify": made verbs.
    let made = word.len() > 6
        && word.chars().all(|c| c.is_ascii_lowercase())
        && ["ize", "ise", "ify"].iter().any(|s| word.ends_with(s));
    made || VERBS.contains(&lemma(word).as_str())
}

/// The base form of a verb: "prints" → "print", "flipping" → "flip",
/// "deduplicated" → "deduplicate" (when the base is a known verb).
pub fn lemma(word: &str) -> String {
    let known =
        |w: &str| VERBS.contains(&w) || KINDS.iter().flat_map(|(_, ps)| ps.iter()).any(|p| *p == w);
    if known(word) {
        return word.to_owned();
    }
    let mut candidates: Vec<String> = Vec::new();
    for (suffix, add) in [
        ("ing", ""),
        ("ing", "e"),
        ("ed", ""),
        ("ed", "e"),
        ("ies", "y"),
        ("es", ""),
        ("s", ""),
        ("d", ""),
    ] {
        if let Some(stem) = word.strip_suffix(suffix) {
            candidates.push(format!("{stem}{add}"));
            // "flipping" → "flip"
            let b = stem.as_bytes();
            if add.is_empty() && b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2] {
                candidates.push(stem[..stem.len() - 1].to_owned());
            }
        }
    }
    if let Some(found) = candidates.iter().find(|c| known(c)) {
        return found.clone();
    }
    // "rolling" → "roll", "running" → "run": unknown verbs lose "-ing",
    // and a doubled last consonant (but not "ll", "ss"); nouns keep it
    // ("everything", "string", "morning").
    let noun = word.ends_with("thing")
        || [
            "string",
            "spring",
            "morning",
            "evening",
            "ceiling",
            "during",
            "padding",
            "embedding",
        ]
        .contains(&word);
    match word.strip_suffix("ing").filter(|_| !noun) {
        Some(stem) if stem.len() >= 3 => {
            let b = stem.as_bytes();
            let doubled = b[b.len() - 1] == b[b.len() - 2]
                && !matches!(b[b.len() - 1], b'l' | b's' | b'z' | b'f');
            if doubled {
                stem[..stem.len() - 1].to_owned()
            } else {
                stem.to_owned()
            }
        }
        _ => word.to_owned(),
    }
}

/// The words a name is made of, from a clause's verb on: content words up
/// to the first preposition, at most `max`, verbs in their base form.
fn content_words(tokens: &[&Token], max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t.class {
            Class::Word => {}
            Class::Number if !out.is_empty() => continue,
            Class::Cjk => {
                if let Some(w) = cjk_words(std::slice::from_ref(*t)).first() {
                    out.push(w.clone());
                }
                continue;
            }
            _ => continue,
        }
        if t.is_label() {
            out.push(t.text.clone());
            continue;
        }
        // "ask a human to approve it": what the step is for names it too.
        let purpose = t.is("to") && tokens.get(i + 1).is_some_and(|n| is_verb(&n.text));
        if purpose {
            continue;
        }
        // ("wait for someone to approve it": what is waited for names it.)
        // ("wait for 10 minutes": how long is no name.)
        let waited = t.is("for")
            && out.len() == 1
            && out[0] == "wait"
            && tokens.get(i + 1).is_some_and(|n| n.class == Class::Word);
        if waited {
            continue;
        }
        if !out.is_empty() && PREPOSITIONS.iter().any(|w| t.is(w)) {
            break;
        }
        if NAME_STOP.iter().any(|w| t.is(w)) || LEAD.iter().any(|w| t.is(w)) && out.is_empty() {
            continue;
        }
        let word = lemma(&t.text);
        if !out.contains(&word) {
            out.push(word);
        }
        if out.len() >= max {
            break;
        }
    }
    out
}

/// The name of a step: the subtask's own name, or its words from the
/// verb that asked for it (a training step: the verb and its model).
pub fn step_name(task: &Subtask) -> String {
    if let Some(name) = &task.name {
        let name = slug(std::slice::from_ref(name));
        if !name.is_empty() {
            return name;
        }
    }
    let mut tokens = tokenize(&task.text);
    // ("push it to serving, but only if …": the condition names nothing.)
    if let Some(cut) = (1..tokens.len()).find(|&i| {
        tokens[i].is("but")
            || lexicon::IF
                .iter()
                .chain(lexicon::UNLESS)
                .any(|p| phrase_at(&tokens, i, p).is_some())
    }) && lexicon::kind_phrase(&tokens[..cut]).is_some()
    {
        tokens.truncate(cut);
    }
    // ("if the canary is healthy, promote it": nor does one before it.)
    let opens = lexicon::IF
        .iter()
        .chain(lexicon::UNLESS)
        .any(|p| phrase_at(&tokens, 0, p).is_some());
    if opens
        && let Some(comma) = tokens.iter().position(|t| t.is(",") || t.is("，"))
        && lexicon::kind_phrase(&tokens[comma + 1..]).is_some()
    {
        tokens.drain(..=comma);
    }
    // The user's verb names the step even when the words around it made
    // it another kind ("load the total into the database" is an export).
    let phrase = lexicon::kind_phrase(&tokens);
    let Some((kind, at, n)) = phrase else {
        return default_name(task);
    };
    let chinese = tokens[at].class == Class::Cjk;
    if task.kind.trains()
        && let Some(model) = &task.model
    {
        let verb = if chinese {
            cjk_words(&tokens[at..at + n]).join("-")
        } else {
            spelled(kind, &tokens, at, n)
        };
        return slug(&[verb, model.replace('_', "-")]);
    }
    if chinese {
        // From the clause's first verb: "检测数据漂移" detects.
        return cjk_name(&tokens)
            .or_else(|| cjk_name(&tokens[at..]))
            .unwrap_or_else(|| default_name(task));
    }
    // A verb just before the phrase leads: "run the GPU smoke test".
    let mut start = at;
    for back in (at.saturating_sub(4)..at).rev() {
        let t = &tokens[back];
        // ("push it to serving": past "it to", the verb leads.)
        let it_to = back >= 2
            && (tokens[back - 1].is("it") || tokens[back - 1].is("them"))
            && is_verb(&tokens[back - 2].text);
        // ("print the list of downloaded paths": past "of", the verb leads.)
        if t.class != Class::Word || (PREPOSITIONS.iter().any(|w| t.is(w)) && !t.is("of") && !it_to)
        {
            break;
        }
        if LEADING_VERBS.contains(&t.text.as_str()) || VERBS.contains(&lemma(&t.text).as_str()) {
            start = back;
        }
    }
    let from: Vec<&Token> = tokens[start..].iter().collect();
    let mut words = content_words(&from, 4);
    if start == at {
        // The lexicon's spelling of the phrase, not "cleaning" (nor "laod"),
        // but the user's own abbreviation: "dedup".
        let mut base = spelled(kind, &tokens, at, n);
        if n == 1 && base.starts_with(&tokens[at].text) && tokens[at].class == Class::Word {
            base = lemma(&tokens[at].text);
        }
        let taken = content_words(&from[..n.min(from.len())], 4).len();
        let mut named: Vec<String> = base
            .split('-')
            .filter(|w| !w.is_empty() && !NAME_STOP.contains(w))
            .map(str::to_owned)
            .collect();
        named.extend(words.into_iter().skip(taken));
        named.truncate(4);
        words = named;
    }
    if words.is_empty() {
        default_name(task)
    } else {
        slug(&words)
    }
}

/// How the lexicon spells the phrase matched at `at` (its base form).
fn spelled(kind: TaskKind, tokens: &[Token], at: usize, n: usize) -> String {
    KINDS
        .iter()
        .filter(|(k, _)| *k == kind)
        .flat_map(|(_, ps)| ps.iter())
        .filter(|p| phrase_at(tokens, at, p) == Some(n))
        .max_by_key(|p| p.len())
        .map(|p| p.replace(' ', "-"))
        // (A phrase read from the clause's shape: the user's own words.)
        .unwrap_or_else(|| {
            tokens[at..at + n]
                .iter()
                .map(|t| lemma(&t.text))
                .collect::<Vec<_>>()
                .join("-")
        })
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

mod cjk;
#[cfg(test)]
mod tests;
