//! Chinese actions: a verb and up to two nouns named in English, or the
//! letter a clause names ("运行A").

use super::*;

/// A Chinese action: its verb and up to two nouns in English, or the
/// letter it names ("运行A").
pub(super) fn cjk(free: &[&Token], off_topic: bool) -> Option<Action> {
    let owned: Vec<Token> = free.iter().map(|t| (*t).clone()).collect();
    if let Some(at) = owned.iter().position(|t| t.is_label()) {
        // "运行A" is A; "打印 A" prints A.
        let verb = cjk_words(&owned[..at])
            .into_iter()
            .find(|w| !is_cjk_noun(w) && !["run", "do"].contains(&w.as_str()));
        let name = match verb {
            Some(v) => slug(&[v, owned[at].text.clone()]),
            None => owned[at].text.clone(),
        };
        return Some(Action {
            name,
            labelled: true,
            off_topic,
        });
    }
    let text: String = owned.iter().map(|t| t.text.as_str()).collect();
    // "等 S3 上的 _SUCCESS 文件出现（后）": a wait for something to arrive.
    let arrives = [
        "出现",
        "到达",
        "到位",
        "就绪",
        "生成",
        "落地",
        "存在",
        "上传完",
    ];
    // ("先等…到达": after the word that orders it.)
    let waits = text.starts_with("等") || text.starts_with("先等") || text.starts_with("首先等");
    // "等2小时", "再等半小时": a wait for a while (the command it runs).
    let a_while =
        crate::offline::fill::literal_command(&text).is_some_and(|c| c.starts_with("sleep"));
    if a_while {
        return Some(Action {
            name: "wait".into(),
            labelled: false,
            off_topic,
        });
    }
    if waits && arrives.iter().any(|w| text.contains(w)) {
        let words = owned.iter().filter(|t| t.class == Class::Word);
        return named("wait".into(), words, off_topic);
    }
    let words = cjk_words(&owned);
    let verbs = words.iter().filter(|w| !is_cjk_noun(w)).count();
    let strong = words
        .iter()
        .filter(|w| !is_cjk_noun(w) && !["run", "do"].contains(&w.as_str()))
        .count();
    let counted = ["两个", "二个", "三个", "几个", "多个"]
        .iter()
        .any(|c| text.contains(c));
    if counted && strong == 0 && ["任务", "步骤"].iter().any(|w| text.contains(w)) {
        return None;
    }
    // "再 compute 每天的 DAU", "最后 shard 成 64 份写到 HDFS": an English
    // verb in a Chinese clause, before any Chinese one, is the action.
    let first_cjk_verb = (0..owned.len())
        .find(|&i| cjk_word_at(&owned, i).is_some_and(|(_, en)| !is_cjk_noun(en)))
        .unwrap_or(owned.len());
    if !off_topic
        && let Some(v) = owned[..first_cjk_verb]
            .iter()
            .position(|t| t.class == Class::Word && VERBS.contains(&lemma(&t.text).as_str()))
    {
        let words = owned[v + 1..]
            .iter()
            .filter(|t| t.class == Class::Word && !NAME_STOP.iter().any(|w| t.is(w)));
        return named(lemma(&owned[v].text), words, off_topic);
    }
    if verbs == 0 && !off_topic {
        return None;
    }
    Some(Action {
        name: cjk_name(&owned).unwrap_or_else(|| "step".into()),
        labelled: false,
        off_topic,
    })
}

/// A name from Chinese words: the English of its words from the first
/// verb on (and the English words among them), weak verbs ("运行", "做")
/// left out when a stronger word follows; at most three words.
/// An action named by `verb` and the first two of `words`.
fn named<'a>(
    verb: String,
    words: impl Iterator<Item = &'a Token>,
    off_topic: bool,
) -> Option<Action> {
    let mut name = vec![verb];
    name.extend(words.take(2).map(|t| t.text.clone()));
    Some(Action {
        name: slug(&name),
        labelled: false,
        off_topic,
    })
}

pub(super) fn cjk_name(tokens: &[Token]) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    let mut i = 0;
    let mut verb = false;
    while i < tokens.len() {
        let t = &tokens[i];
        // ("训练模型，失败重试两次": the name ends with its clause.)
        if verb && ["，", "。", "；", ",", ";"].iter().any(|p| t.is(p)) {
            break;
        }
        if let Some((n, en)) = cjk_word_at(tokens, i) {
            verb |= !is_cjk_noun(en);
            if verb && !words.iter().any(|w| w == en) {
                words.push(en.to_owned());
            }
            i += n;
            continue;
        }
        if verb && t.class == Class::Word && !NAME_STOP.iter().any(|w| t.is(w)) {
            words.push(t.text.clone());
        }
        i += 1;
    }
    let weak = |w: &String| ["run", "do"].contains(&w.as_str());
    if words.iter().any(|w| !weak(w)) {
        words.retain(|w| !weak(w));
    }
    words.truncate(3);
    (!words.is_empty()).then(|| slug(&words))
}

/// The English words of the Chinese words in `tokens`, in order.
pub(super) fn cjk_words(tokens: &[Token]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match cjk_word_at(tokens, i) {
            Some((n, en)) => {
                out.push(en.to_owned());
                i += n;
            }
            None => i += 1,
        }
    }
    out
}
