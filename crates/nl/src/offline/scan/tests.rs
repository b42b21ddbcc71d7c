//! The tokenizer and the segmenter.

use super::*;

fn texts(s: &str) -> Vec<String> {
    segments(&tokenize(s))
        .iter()
        .map(|seg| seg.span().of(s).to_owned())
        .collect()
}

#[test]
fn tokens_keep_urls_numbers_and_cjk_apart() {
    let t = tokenize("Load s3://b/x.csv, 32GB 并行训练 `make all`");
    let classes: Vec<Class> = t.iter().map(|t| t.class).collect();
    assert_eq!(t[1].text, "s3://b/x.csv");
    assert_eq!(t[1].class, Class::Url);
    assert_eq!(t[3].text, "32");
    assert_eq!(t[4].text, "gb");
    assert!(classes.contains(&Class::Cjk));
    assert_eq!(t.last().unwrap().class, Class::Code);
    assert_eq!(t.last().unwrap().text, "make all");
    for path in ["/data/sales.csv", "./x.csv", "~/d/x.parquet"] {
        let t = tokenize(&format!("load {path}, then train"));
        assert_eq!((t[1].text.as_str(), t[1].class), (path, Class::Url));
    }
    // Not paths: "and/or", "2/3", a lone "/".
    let t = tokenize("train and/or evaluate 2/3 / x");
    assert!(t.iter().all(|t| t.class != Class::Url), "{t:?}");
    // Scientific notation is one number; "3e" and "2e-x" are not.
    let t = tokenize("lr 1e-3, 2E+4 and 5e6 on 3eggs 2e-x");
    let numbers: Vec<&str> = t
        .iter()
        .filter(|t| t.class == Class::Number)
        .map(|t| t.text.as_str())
        .collect();
    assert_eq!(numbers, ["1e-3", "2E+4", "5e6", "3", "2"]);
}

#[test]
fn separators_cut_in_both_languages() {
    assert_eq!(
        texts("load the data, then clean it and train a model."),
        ["load the data", "clean it", "train a model"]
    );
    assert_eq!(
        texts("加载数据，然后并行训练模型"),
        ["加载数据", "并行训练模型"]
    );
    let segs = segments(&tokenize("load it. then train"));
    assert_eq!(segs[1].sep, Sep::Sentence);
}

#[test]
fn inflections() {
    assert!(inflects("training", "train"));
    assert!(inflects("evaluation", "evaluate"));
    assert!(inflects("notifies", "notify"));
    assert!(inflects("fine-tuned", "fine-tune") && inflects("pre-trained", "pre-train"));
    assert!(!inflects("ready", "read"));
}
