//! What the builder fills into a placed template when the description
//! leaves a gap: data no step loads is read from a URL by the step itself,
//! and a generic step says what the user must fill in.

use serde_json::Value;

/// Where a data-reading template finds its input artifact.
const DATA_REFERENCE: &str = "{{inputs.artifacts.data.path}}";

/// Python that fetches `DATA_URL` (HTTP(S), S3, GCS or a path) into a
/// local CSV, for a step no earlier step loads data for.
const FETCH_DATA: &str = r#"def _couler_data():
    import os, shutil, subprocess, sys, urllib.request
    src, out = os.environ["DATA_URL"], "/tmp/inputs/data.csv"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if src.startswith(("http://", "https://")):
        urllib.request.urlretrieve(src, out)
    elif src.startswith(("s3://", "gs://")):
        plugin = "s3fs==2024.9.0" if src.startswith("s3://") else "gcsfs==2024.9.0"
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "fsspec==2024.9.0", plugin])
        import fsspec
        with fsspec.open(src, "rb") as f, open(out, "wb") as o:
            shutil.copyfileobj(f, o)
    else:
        shutil.copyfile(src, out)
    return out
"#;

/// Rewrites a step that reads the `data` input artifact to fetch its data
/// from `$DATA_URL` instead; false when the step reads no data.
pub fn read_data_from_url(step: &mut Value) -> bool {
    let quoted = format!("\"{DATA_REFERENCE}\"");
    let mut changed = false;
    let mut python = |code: &mut Value| {
        if let Some(text) = code.as_str().filter(|t| t.contains(DATA_REFERENCE)) {
            let body = text.replace(&quoted, "_couler_data()");
            *code = Value::String(format!("{FETCH_DATA}{body}"));
            changed = true;
        }
    };
    if let Some(source) = step.get_mut("script").and_then(|s| s.get_mut("source")) {
        python(source);
    }
    if let Some(args) = step
        .get_mut("job")
        .and_then(|j| j.get_mut("args"))
        .and_then(Value::as_array_mut)
    {
        args.iter_mut().for_each(&mut python);
    }
    if let Some(args) = step
        .get_mut("container")
        .and_then(|c| c.get_mut("args"))
        .and_then(Value::as_array_mut)
    {
        for arg in args.iter_mut() {
            if let Some(text) = arg.as_str().filter(|t| t.contains(DATA_REFERENCE)) {
                *arg = Value::String(text.replace(DATA_REFERENCE, "$DATA_URL"));
                changed = true;
            }
        }
    }
    changed
}

/// What a generic step's warning and its failure say.
pub fn todo_message(name: &str, words: &str, passes_data: bool) -> String {
    let io = if passes_data {
        " (it gets its input at /tmp/inputs/data.csv and must write its output to /tmp/outputs/data.csv)"
    } else {
        ""
    };
    let words = words.replace(['{', '}'], "");
    format!(
        "step {name} ({words:?}) has no library template: fill in its image and command{io}; until then it fails with this message"
    )
}

/// A command the words spell out exactly, so a step needs no template:
/// "print done" and "打印“正面”" echo their words, "wait 2 hours" and
/// "再等半小时" sleep that long. None when the words say more than that
/// ("print the results" prints something a step made; "wait for the
/// approval" waits for something).
pub fn literal_command(text: &str) -> Option<String> {
    use super::scan::{Class, phrase_at, tokenize};
    const LEADS: &[&str] = &[
        "then", "finally", "lastly", "and", "also", "first", "先", "再", "然后", "最后", "接着",
    ];
    const PRINTS: &[&str] = &["print", "echo", "say", "打印", "输出"];
    const SLEEPS: &[&str] = &["sleep", "wait", "pause", "等待", "等", "休眠", "睡眠", "睡"];
    let t = tokenize(text);
    let mut i = 0;
    while let Some(n) = LEADS.iter().find_map(|w| phrase_at(&t, i, w)) {
        i += n;
    }
    // "if heads print 'you win'", "否则打印“反面”": past the branch's
    // condition, which the step's `when` says.
    let branch = [
        "if",
        "when",
        "otherwise",
        "else",
        "unless",
        "如果",
        "否则",
        "不然",
    ]
    .iter()
    .any(|w| phrase_at(&t, i, w).is_some());
    let verb_at = |k: usize| {
        PRINTS
            .iter()
            .chain(SLEEPS)
            .any(|w| phrase_at(&t, k, w).is_some())
    };
    if branch {
        i = (i..t.len()).find(|&k| verb_at(k))?;
    } else if let Some(k) = (i..t.len())
        .find(|&k| ["就", "则", "的话", ":", "："].iter().any(|w| t[k].is(w)) && verb_at(k + 1))
    {
        // "正面就打印“正面”", "heads: print 'win'".
        i = k + 1;
    }
    let verb = |words: &[&str]| words.iter().find_map(|w| phrase_at(&t, i, w));
    if let Some(n) = verb(PRINTS) {
        let rest = &t[i + n..];
        let original =
            |from: usize, to: usize| text[rest[from].span.start..rest[to].span.end].to_owned();
        let said = match rest {
            // "print 'you win'", "echo done", "打印 hello".
            [w] if matches!(w.class, Class::Word | Class::Number) => {
                let said = original(0, 0);
                let quoted = said.starts_with(['\'', '"', '‘', '“']);
                let vague = [
                    "it",
                    "them",
                    "this",
                    "that",
                    "results",
                    "result",
                    "everything",
                    "all",
                ]
                .iter()
                .any(|v| w.is(v));
                if quoted {
                    // ("‘you win’": quotes of more than one byte.)
                    let mut inner = said.chars();
                    inner.next();
                    inner.next_back();
                    inner.as_str().to_owned()
                } else if vague {
                    return None;
                } else {
                    said
                }
            }
            // "打印“正面”": Chinese in quotes.
            [open, .., close] if open.is("“") && close.is("”") && rest.len() > 2 => {
                text[open.span.end..close.span.start].to_owned()
            }
            _ => return None,
        };
        return Some(format!("echo '{}'", said.replace('\'', r"'\''")));
    }
    let n = verb(SLEEPS)?;
    let mut k = i + n;
    let mut article = false;
    while let Some(x) = t
        .get(k)
        .filter(|x| ["for", "another", "a", "an", "再"].iter().any(|w| x.is(w)))
    {
        article |= x.is("a") || x.is("an");
        k += 1;
    }
    let (value, used) = match super::lexicon::number_at(&t, k, true) {
        Some((v, _, used)) => (v, used),
        None if t.get(k).is_some_and(|x| x.is("半")) => (0.5, 1),
        None if article => (1.0, 0),
        None => return None,
    };
    k += used;
    const UNITS: &[(&str, u64)] = &[
        ("seconds", 1),
        ("second", 1),
        ("secs", 1),
        ("sec", 1),
        ("s", 1),
        ("minutes", 60),
        ("minute", 60),
        ("mins", 60),
        ("min", 60),
        ("hours", 3600),
        ("hour", 3600),
        ("hrs", 3600),
        ("hr", 3600),
        ("h", 3600),
        ("days", 86400),
        ("day", 86400),
        ("秒钟", 1),
        ("秒", 1),
        ("分钟", 60),
        ("个小时", 3600),
        ("小时", 3600),
        ("天", 86400),
    ];
    let (scale, n) = UNITS.iter().find_map(|(unit, scale)| {
        let n = if unit.is_ascii() {
            t.get(k).is_some_and(|x| x.text == *unit).then_some(1)
        } else {
            phrase_at(&t, k, unit)
        };
        n.map(|n| (*scale, n))
    })?;
    let seconds = (value * scale as f64).round() as u64;
    let alone = t[k + n..].iter().all(|x| x.class == Class::Punct);
    (alone && seconds >= 1).then(|| format!("sleep {seconds}"))
}

#[cfg(test)]
mod tests {
    use super::literal_command;

    #[test]
    fn literal_prints_and_waits_are_their_own_commands() {
        for (text, command) in [
            ("print done", "echo 'done'"),
            ("then print 'All Done'", "echo 'All Done'"),
            ("if heads print 'you win'", "echo 'you win'"),
            ("otherwise print \"it's over\"", r"echo 'it'\''s over'"),
            ("print ‘you win’", "echo 'you win'"),
            ("正面就打印“正面”", "echo '正面'"),
            ("sleep for 10 seconds", "sleep 10"),
            ("wait 2 hours", "sleep 7200"),
            ("wait another 20 seconds", "sleep 20"),
            ("pause for a minute", "sleep 60"),
            ("等2小时", "sleep 7200"),
            ("再等半小时", "sleep 1800"),
            ("休眠 30 秒", "sleep 30"),
        ] {
            assert_eq!(literal_command(text).as_deref(), Some(command), "{text}");
        }
        // What to print or wait for is something else's: no command.
        for text in [
            "print the list of downloaded paths",
            "print it",
            "print the results",
            "wait for someone to approve it",
            "wait 2 hours for the canary metrics",
            "check the logs and print done",
            "等人工审批",
        ] {
            assert_eq!(literal_command(text), None, "{text}");
        }
    }
}
