//! Tokens and segments. English words, numbers, URLs and backquoted commands
//! become one token each; every CJK character is its own token, so Chinese
//! phrases are matched as character sequences. Segments are the stretches
//! between separators (punctuation, "then", "and", "然后", "和" …).

use crate::decompose::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Word,
    Number,
    Cjk,
    Punct,
    Url,
    /// A `backquoted` command; the text is what is inside the quotes.
    Code,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// Lowercased (code keeps its case).
    pub text: String,
    pub span: Span,
    pub class: Class,
    /// Written with a capital letter ("A", "Train").
    pub upper: bool,
}

impl Token {
    pub fn is(&self, s: &str) -> bool {
        self.text == s
    }

    /// A step named by a capital letter: "A", "B". "I" is the pronoun.
    pub fn is_label(&self) -> bool {
        self.class == Class::Word && self.upper && self.text.len() == 1 && self.text != "i"
    }

    /// "extract_users", "load_to_bq": a snake_case identifier; "step1",
    /// "task2": a numbered step.
    pub fn is_task_id(&self) -> bool {
        let numbered = ["step", "task", "job", "stage"].iter().any(|p| {
            self.text
                .strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        });
        numbered
            || (self.text.len() >= 3
                && self.text.contains('_')
                && !self.text.starts_with('_')
                && !self.text.ends_with('_')
                && self
                    .text
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
    }
}

/// How strongly a separator cuts: a sentence end separates more than a comma.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sep {
    /// The start of the text.
    Start,
    And,
    Comma,
    /// "then", "finally", "然后".
    Sequence,
    Sentence,
}

/// An order word before a segment: "X before Y", "Before Y, X",
/// "X after Y", "After Y, X", "Y之前X".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The segment names what another runs before.
    Before,
    /// The segment names what another runs after.
    After,
    /// The segment runs before the one before it ("训练之前清洗数据").
    PrecedesPrevious,
}

#[derive(Debug, Clone)]
pub struct Segment {
    pub sep: Sep,
    pub tokens: Vec<Token>,
    /// The order word right before the segment, if any.
    pub order: Option<Order>,
    /// A colon comes right before it: what precedes may be a heading.
    pub after_colon: bool,
    /// "就", "则", "那么" come right before it: what precedes is its
    /// condition ("正面就打印正面").
    pub after_then: bool,
    /// "||" comes right before it: it runs beside the segment before.
    pub beside: bool,
}

impl Segment {
    pub fn span(&self) -> Span {
        match (self.tokens.first(), self.tokens.last()) {
            (Some(a), Some(b)) => a.span.join(b.span),
            _ => Span::new(0, 0),
        }
    }
}

pub fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Where a URL or path that reaches `from` ends: at whitespace or CJK
/// text, without the punctuation of the sentence around it.
fn locator_end(chars: &[(usize, char)], from: usize) -> usize {
    let mut j = from;
    while j < chars.len() && !chars[j].1.is_whitespace() && !is_cjk(chars[j].1) {
        j += 1;
    }
    while j > from && matches!(chars[j - 1].1, '.' | ',' | ')' | ';' | '"' | '\'' | ':') {
        j -= 1;
    }
    j
}

/// Splits text into tokens. Whitespace separates; other characters become
/// punctuation tokens.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let end_of = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        if c.is_whitespace() && c != '\n' {
            i += 1;
            continue;
        }
        if c == '`' {
            let close = (i + 1..chars.len()).find(|&j| chars[j].1 == '`');
            if let Some(j) = close {
                let inner = &text[end_of(i + 1)..chars[j].0];
                out.push(Token {
                    text: inner.trim().to_owned(),
                    span: Span::new(start, end_of(j + 1)),
                    class: Class::Code,
                    upper: false,
                });
                i = j + 1;
                continue;
            }
        }
        // A quoted phrase is one word: "print 'first'" prints, it is no
        // order word; "it's" opens no quote.
        let opens_quote = matches!(c, '\'' | '"' | '‘' | '“')
            && (i == 0 || chars[i - 1].1.is_whitespace() || matches!(chars[i - 1].1, '(' | ','));
        if opens_quote {
            let closer = match c {
                '‘' => '’',
                '“' => '”',
                other => other,
            };
            let close = (i + 1..chars.len().min(i + 60)).find(|&j| chars[j].1 == closer);
            if let Some(j) = close
                && j > i + 1
                && chars[i + 1..j]
                    .iter()
                    .all(|&(_, x)| x.is_ascii() && x != '\n')
                && chars
                    .get(j + 1)
                    .is_none_or(|&(_, n)| !n.is_ascii_alphanumeric())
            {
                let inner = &text[end_of(i + 1)..chars[j].0];
                out.push(Token {
                    text: inner.trim().to_ascii_lowercase(),
                    span: Span::new(start, end_of(j + 1)),
                    class: Class::Word,
                    upper: false,
                });
                i = j + 1;
                continue;
            }
        }
        // A file path where a word starts: "/data/sales.csv", "./x.csv".
        let word_start = i == 0 || chars[i - 1].1.is_whitespace() || is_cjk(chars[i - 1].1);
        let path_start = match c {
            '/' => chars
                .get(i + 1)
                .is_some_and(|n| is_word_char(n.1) || n.1 == '.'),
            '.' | '~' => chars.get(i + 1).is_some_and(|n| n.1 == '/'),
            _ => false,
        };
        if word_start && path_start {
            let j = locator_end(&chars, i + 1);
            out.push(Token {
                text: text[start..end_of(j)].to_owned(),
                span: Span::new(start, end_of(j)),
                class: Class::Url,
                upper: false,
            });
            i = j;
            continue;
        }
        if c.is_ascii_digit() {
            let mut j = i;
            while j < chars.len()
                && (chars[j].1.is_ascii_digit()
                    || (chars[j].1 == '.'
                        && chars.get(j + 1).is_some_and(|n| n.1.is_ascii_digit())))
            {
                j += 1;
            }
            // "1e-3", "2e-5", "1e4": a number in scientific notation.
            let at = |k: usize| chars.get(k).map(|n| n.1);
            if matches!(at(j), Some('e' | 'E')) {
                let digits = j + 1 + usize::from(matches!(at(j + 1), Some('-' | '+')));
                let mut k = digits;
                while at(k).is_some_and(|c| c.is_ascii_digit()) {
                    k += 1;
                }
                if k > digits && !at(k).is_some_and(is_word_char) {
                    j = k;
                }
            }
            if chars.get(j).is_some_and(|n| n.1 == '%') {
                j += 1;
            }
            out.push(Token {
                text: text[start..end_of(j)].to_owned(),
                span: Span::new(start, end_of(j)),
                class: Class::Number,
                upper: false,
            });
            i = j;
            // "1..45" is a range, as "1 to 45" is.
            let dots = chars.get(i).is_some_and(|n| n.1 == '.')
                && chars.get(i + 1).is_some_and(|n| n.1 == '.')
                && chars.get(i + 2).is_some_and(|n| n.1.is_ascii_digit());
            if dots {
                out.push(Token {
                    text: "to".into(),
                    span: Span::new(end_of(i), end_of(i + 2)),
                    class: Class::Word,
                    upper: false,
                });
                i += 2;
            }
            continue;
        }
        if c.is_ascii_alphabetic() {
            let mut j = i;
            while j < chars.len() && is_word_char(chars[j].1) {
                j += 1;
            }
            let is_url = text[end_of(j)..].starts_with("://");
            if is_url {
                let j = locator_end(&chars, j);
                out.push(Token {
                    text: text[start..end_of(j)].to_owned(),
                    span: Span::new(start, end_of(j)),
                    class: Class::Url,
                    upper: false,
                });
                i = j;
                continue;
            }
            // Inner `-` and `.` join words: "fine-tune", "data-quality", "3.12".
            while j + 1 < chars.len()
                && matches!(chars[j].1, '-' | '.')
                && is_word_char(chars[j + 1].1)
            {
                j += 1;
                while j < chars.len() && is_word_char(chars[j].1) {
                    j += 1;
                }
            }
            out.push(Token {
                text: text[start..end_of(j)].to_ascii_lowercase(),
                span: Span::new(start, end_of(j)),
                class: Class::Word,
                upper: c.is_ascii_uppercase(),
            });
            i = j;
            continue;
        }
        let class = if is_cjk(c) { Class::Cjk } else { Class::Punct };
        out.push(Token {
            text: c.to_string(),
            span: Span::new(start, end_of(i + 1)),
            class,
            upper: false,
        });
        i += 1;
    }
    out
}

/// Whether `words` (space-separated; CJK phrases spelled as one string)
/// occur in `tokens` starting at `i`; returns how many tokens matched.
pub fn phrase_at(tokens: &[Token], i: usize, phrase: &str) -> Option<usize> {
    let mut n = 0;
    for word in phrase.split(' ') {
        if word.chars().next().is_some_and(is_cjk) {
            for c in word.chars() {
                let t = tokens.get(i + n)?;
                if t.text.len() != c.len_utf8() || !t.text.starts_with(c) {
                    return None;
                }
                n += 1;
            }
        } else {
            let t = tokens.get(i + n)?;
            if !inflects(&t.text, word) {
                return None;
            }
            n += 1;
        }
    }
    Some(n)
}

/// `word` is `base` or a regular inflection of it ("trains", "training",
/// "trained", "preprocessing", "evaluation").
pub fn inflects(word: &str, base: &str) -> bool {
    if word == base {
        return true;
    }
    // ("fine-tuned", "pre-trained": a joined base inflects at its end.)
    if base.len() < 3 || !base.chars().all(|c| c.is_ascii_alphabetic() || c == '-') {
        return false;
    }
    if typo_of(word, base) {
        return true;
    }
    let Some(rest) = word.strip_prefix(base) else {
        if let Some(stem) = base.strip_suffix('e') {
            return matches!(
                word.strip_prefix(stem),
                Some("ing" | "ed" | "ion" | "ions" | "ation" | "er" | "ers")
            );
        }
        if let Some(stem) = base.strip_suffix('y') {
            return matches!(word.strip_prefix(stem), Some("ies" | "ied" | "ication"));
        }
        return false;
    };
    matches!(
        rest,
        "s" | "es" | "ing" | "ed" | "d" | "ion" | "ions" | "ation" | "ment" | "er" | "ers"
    )
}

/// A slip of the keyboard: two neighbouring letters swapped ("laod",
/// "trian") or, in longer words, one letter left out ("preprocss",
/// "evalute"). Substitutions are not slips: "text" is no "test".
fn typo_of(word: &str, base: &str) -> bool {
    let (w, b) = (word.as_bytes(), base.as_bytes());
    if b.len() < 4 || !base.bytes().all(|c| c.is_ascii_lowercase()) {
        return false;
    }
    if w.len() == b.len() {
        let diff: Vec<usize> = (0..w.len()).filter(|&i| w[i] != b[i]).collect();
        return diff.len() == 2
            && diff[1] == diff[0] + 1
            && w[diff[0]] == b[diff[1]]
            && w[diff[1]] == b[diff[0]];
    }
    if w.len() + 1 == b.len() && b.len() >= 5 {
        let at = (0..w.len()).find(|&i| w[i] != b[i]).unwrap_or(w.len());
        return at > 0 && w[at..] == b[at + 1..];
    }
    // A doubled letter: "forrest", "modell".
    if w.len() == b.len() + 1 && b.len() >= 5 {
        let at = (0..b.len()).find(|&i| w[i] != b[i]).unwrap_or(b.len());
        return at > 0 && w[at] == w[at - 1] && w[at + 1..] == b[at..];
    }
    false
}

/// Finds the first phrase of `phrases` at any position of `tokens`.
pub fn find_any(tokens: &[Token], phrases: &[&str]) -> Option<(usize, usize)> {
    (0..tokens.len()).find_map(|i| {
        phrases
            .iter()
            .find_map(|p| phrase_at(tokens, i, p))
            .map(|n| (i, n))
    })
}

const SENTENCE: &[&str] = &[".", "。", ";", "；", "!", "！", "?", "？", "\n"];
const COMMA: &[&str] = &[",", "，", ":", "：", "- -", "—", "就", "则", "那么", "的话"];
const SEQUENCE: &[&str] = &[
    "- >",
    "= >",
    "> >",
    "→",
    "⟶",
    "➡",
    "and then",
    "after that",
    "afterwards",
    "afterward",
    "then",
    "next",
    "finally",
    "lastly",
    "subsequently",
    "once done",
    "first",
    "firstly",
    "接下来",
    "然后",
    "之后",
    "最后",
    "接着",
    "随后",
    // ("全部跑完后做一次数据质量检查": after all of them.)
    "全部完成后",
    "全部跑完后",
    "全部完成之后",
    "都完成后",
    "都跑完后",
    "完成后",
    "完成以后",
    "完成之后",
    "执行完以后",
    "执行完之后",
    "执行完后",
    "运行完以后",
    "运行完后",
    "跑完以后",
    "跑完后",
    "结束后",
    "结束以后",
    "结束之后",
    "首先",
    "再",
    "后",
];
const AND: &[&str] = &[
    // ("(train A || train B)": the two side by side; see `Segment::beside`.)
    "| |",
    "as well as",
    "and",
    "plus",
    "以及",
    "并且",
    "和",
    "与",
    "及",
    "、",
    "并",
];
/// Order words; they also separate like "then".
const ORDER: &[(&str, Order)] = &[
    ("prior to", Order::Before),
    ("before", Order::Before),
    ("after", Order::After),
    ("之前", Order::PrecedesPrevious),
    ("以前", Order::PrecedesPrevious),
];
/// Cuts the tokens into segments, each tagged with the strongest separator
/// before it.
pub fn segments(tokens: &[Token]) -> Vec<Segment> {
    use super::markers::{done_first, done_marker, list_marker, names_step};
    let mut out: Vec<Segment> = Vec::new();
    let mut current = Vec::new();
    let mut sep = Sep::Start;
    let mut pending = Sep::Start;
    let mut order = None;
    let mut colon = false;
    let mut after_colon = false;
    let mut next_item = 1;
    let mut depth = 0;
    let mut i = 0;
    let mut then = false;
    let mut after_then = false;
    // Inside an item of a numbered list ("2. normalize and augment the
    // images"), where one item is one step.
    let mut in_item = false;
    let mut push = |current: &mut Vec<Token>,
                    sep: Sep,
                    order: Option<Order>,
                    after_colon: bool,
                    after_then: bool| {
        if !current.is_empty() {
            out.push(Segment {
                sep,
                tokens: std::mem::take(current),
                order,
                after_colon,
                after_then,
                beside: false,
            });
        }
    };
    while i < tokens.len() {
        // "1.", "2)", "Step 3:", "第四步": one item of a list of steps.
        if let Some(n) = list_marker(tokens, i, current.is_empty(), next_item) {
            if !current.is_empty() {
                push(&mut current, sep, order.take(), after_colon, after_then);
            }
            next_item += 1;
            in_item = true;
            pending = pending.max(Sep::Sequence);
            sep = pending;
            i += n;
            continue;
        }
        if let Some((n, m)) = done_first(tokens, i).filter(|_| current.is_empty()) {
            current.extend_from_slice(&tokens[i..i + n]);
            push(&mut current, sep, order.take(), after_colon, after_then);
            (pending, sep) = (Sep::Start, Sep::Sequence);
            i += n + m;
            continue;
        }
        // "once both are done", "等B和C都完成后": what follows (or, at the
        // end of a clause, the clause itself) waits for what came before.
        if let Some(n) = done_marker(tokens, i) {
            if current.is_empty() {
                pending = pending.max(Sep::Sequence);
                sep = pending;
            } else {
                push(
                    &mut current,
                    sep.max(Sep::Sequence),
                    order.take(),
                    after_colon,
                    after_then,
                );
                pending = Sep::Start;
                sep = Sep::Comma;
            }
            i += n;
            // "D 在 B、C 都完成后执行": the verb after the marker only runs it.
            loop {
                let english = tokens.get(i).is_some_and(|t| {
                    [
                        "run", "runs", "execute", "executes", "start", "starts", "begin", "begins",
                    ]
                    .iter()
                    .any(|w| t.is(w))
                });
                if english {
                    i += 1;
                } else if let Some(n) = [
                    "再执行",
                    "再运行",
                    "才执行",
                    "才运行",
                    "再开始",
                    "执行",
                    "运行",
                    "开始",
                    "启动",
                ]
                .iter()
                .find_map(|p| phrase_at(tokens, i, p))
                {
                    i += n;
                } else {
                    break;
                }
            }
            continue;
        }
        // Inside brackets nothing cuts: "os (linux, darwin)", "（华东、华北）".
        // (Only a list of values after a name: not "-> (B, C in parallel)".)
        let listed = i > 0 && matches!(tokens[i - 1].class, Class::Word | Class::Cjk);
        if ((tokens[i].is("(") || tokens[i].is("（")) && (listed || depth > 0))
            || tokens[i].is("[")
            || tokens[i].is("{")
        {
            depth += 1;
        } else if (tokens[i].is(")")
            || tokens[i].is("）")
            || tokens[i].is("]")
            || tokens[i].is("}"))
            && depth > 0
        {
            depth -= 1;
        }
        // "并发邮件" sends mail; "并发" alone is concurrency.
        let sends = phrase_at(tokens, i, "并发").is_some()
            && tokens
                .get(i + 2)
                .is_some_and(|t| "邮消通送给短".contains(t.text.as_str()));
        if depth > 0
            || (!sends
                && super::lexicon::NOT_SEPARATORS
                    .iter()
                    .chain(super::lexicon::IN_TURN)
                    .any(|p| phrase_at(tokens, i, p).is_some()))
        {
            let n = super::lexicon::NOT_SEPARATORS
                .iter()
                .chain(super::lexicon::IN_TURN)
                .find_map(|p| phrase_at(tokens, i, p))
                .unwrap_or(1);
            if current.is_empty() {
                after_colon = std::mem::take(&mut colon);
                after_then = std::mem::take(&mut then);
            }
            current.extend_from_slice(&tokens[i..i + n]);
            i += n;
            continue;
        }
        let outcome = super::markers::on_outcome(tokens, i, &current);
        let found = outcome.map(|n| (Sep::Comma, n)).or_else(|| {
            [
                (Sep::Sentence, SENTENCE),
                (Sep::Sequence, SEQUENCE),
                (Sep::Comma, COMMA),
                (Sep::And, AND),
            ]
            .iter()
            .find_map(|(kind, list)| {
                list.iter()
                    .find_map(|p| phrase_at(tokens, i, p))
                    .map(|n| (*kind, n))
            })
        });
        let ordered = ORDER
            .iter()
            .find_map(|(p, o)| phrase_at(tokens, i, p).map(|n| (n, *o)))
            .filter(|&(n, o)| names_step(tokens, i, n, o));
        let (found, ordered) = match (found, ordered) {
            (None, Some((n, o))) => (Some((Sep::Sequence, n)), Some(o)),
            (found, _) => (found, None),
        };
        // "between branch_a and branch_b": one phrase.
        if tokens[i].is("and") && i >= 2 && tokens[i - 2].is("between") {
            current.push(tokens[i].clone());
            i += 1;
            continue;
        }
        // "0.1, 0.01 and 0.001": a list of numbers is one phrase.
        let between_numbers = |n: usize| {
            i > 0
                && tokens[i - 1].class == Class::Number
                && tokens.get(i + n).is_some_and(|t| t.class == Class::Number)
        };
        let between_names = |n: usize| super::markers::between_names(tokens, i, n);
        let found = match found {
            Some((Sep::Comma | Sep::And, n))
                if (between_numbers(n) || between_names(n)) && !tokens[i].is(":") =>
            {
                current.extend_from_slice(&tokens[i..i + n]);
                i += n;
                continue;
            }
            other => other,
        };
        // A "." inside a number or word was kept by the tokenizer; a lone
        // "-" or ":" between numbers (a range, a time) is not a separator.
        let found = match found {
            Some((Sep::Comma, 1))
                if tokens[i].is(":")
                    && i > 0
                    && tokens[i - 1].class == Class::Number
                    && tokens.get(i + 1).is_some_and(|t| t.class == Class::Number) =>
            {
                None
            }
            other => other,
        };
        // "train X; compute the features first": the clause runs before
        // the one it follows.
        // ("…, but pseudonymize the emails first (before the copy happens).")
        let first_at_end = (tokens[i].is("first") || tokens[i].is("beforehand"))
            && tokens
                .get(i + 1)
                .is_none_or(|t| SENTENCE.iter().any(|s| t.is(s)) || t.is("(") || t.is("（"));
        // "2. normalize and augment the images": two verbs of one object in
        // one list item are one step.
        let verbish = |t: &Token| {
            t.class == Class::Word
                && (super::action::is_verb(&t.text)
                    || super::lexicon::kind_phrase(std::slice::from_ref(t)).is_some())
        };
        let shared_object = in_item
            && matches!(found, Some((Sep::And, _)))
            && current.len() == 1
            && verbish(&current[0])
            && tokens.get(i + 1).is_some_and(verbish)
            && tokens.get(i + 2).is_some_and(|t| t.is("the"));
        let found = if shared_object { None } else { found };
        if matches!(found, Some((Sep::Sentence, _))) {
            in_item = false;
        }
        match found {
            Some((kind, n)) => {
                // "heads -> run the heads step": a lone word that is no step,
                // before an arrow, is an outcome, as in "heads: …".
                let arrow = ["- >", "= >", "→", "⟶", "➡"]
                    .iter()
                    .any(|p| phrase_at(tokens, i, p).is_some());
                // (Not a task id, nor a word between arrows: "a -> b -> c".)
                let chained = i >= 2 && [">", "→", "⟶", "➡"].iter().any(|a| tokens[i - 2].is(a));
                if arrow
                    && !chained
                    && matches!(current.as_slice(), [w] if w.class == Class::Word
                        && !w.is_label()
                        && !w.is_task_id()
                        && !super::action::is_verb(&w.text)
                        && super::lexicon::kind_phrase(std::slice::from_ref(w)).is_none())
                {
                    colon = true;
                }
                if first_at_end && sep != Sep::Start && order.is_none() {
                    order = Some(Order::PrecedesPrevious);
                }
                if !current.is_empty() {
                    push(&mut current, sep, order.take(), after_colon, after_then);
                    pending = Sep::Start;
                }
                if outcome.is_some()
                    || ["就", "则", "那么", "的话"]
                        .iter()
                        .any(|c| phrase_at(tokens, i, c).is_some())
                {
                    then = true;
                }
                if [":", "：", "—"].iter().any(|c| tokens[i].is(c))
                    || (tokens[i].is("-") && tokens.get(i + 1).is_some_and(|t| t.is("-")))
                {
                    colon = true;
                }
                order = ordered.or(order);
                pending = pending.max(kind);
                sep = pending;
                i += n;
            }
            None => {
                if current.is_empty() {
                    after_colon = std::mem::take(&mut colon);
                    after_then = std::mem::take(&mut then);
                }
                current.push(tokens[i].clone());
                i += 1;
            }
        }
    }
    push(&mut current, sep, order, after_colon, after_then);
    // Where each "||" is: the segment after it runs beside the one before.
    let bars: Vec<usize> = tokens
        .windows(2)
        .filter(|w| w[0].is("|") && w[1].is("|"))
        .map(|w| w[0].span.start)
        .collect();
    for k in 1..out.len() {
        if bars.is_empty() {
            break;
        }
        let (Some(before), Some(first)) = (out[k - 1].tokens.last(), out[k].tokens.first()) else {
            continue;
        };
        let (from, to) = (before.span.end, first.span.start);
        out[k].beside = bars.iter().any(|&at| at >= from && at < to);
    }
    out
}

#[cfg(test)]
mod tests;
