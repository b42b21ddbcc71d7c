//! Hostile input: the parser returns problems, never panics, never
//! overflows the stack.

use couler_ir::{Code, Format, load};
use proptest::prelude::*;

const VALID: &str = include_str!("../../../examples/market-trend.yaml");

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = load(&text, Format::Yaml);
        let _ = load(&text, Format::Json);
    }

    #[test]
    fn structured_noise_never_panics(text in "[{}\\[\\]:,\"' a-z0-9\\-\n{{}}*&!|>]{0,300}") {
        let _ = load(&text, Format::Yaml);
        let _ = load(&text, Format::Json);
    }

    #[test]
    fn mutated_documents_never_panic(cuts in prop::collection::vec((any::<prop::sample::Index>(), 0usize..40, "\\PC{0,6}"), 1..6)) {
        let mut text = VALID.to_owned();
        for (at, len, insert) in cuts {
            let mut start = at.index(text.len().max(1));
            while !text.is_char_boundary(start) { start -= 1; }
            let mut end = (start + len).min(text.len());
            while !text.is_char_boundary(end) { end -= 1; }
            text.replace_range(start..end, &insert);
        }
        let _ = load(&text, Format::Yaml);
    }
}

#[test]
fn deep_json_nesting_is_an_error() {
    let deep = format!(
        "{{\"apiVersion\":\"couler.dev/v1alpha1\",\"name\":\"w\",\"steps\":[{{\"name\":\"a\",\"container\":{{\"image\":\"a\"}},\"hints\":{{\"tolerations\":[{}{}]}}}}]}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let p = load(&deep, Format::Json).unwrap_err();
    assert!(!p.is_empty());
}

#[test]
fn deep_yaml_nesting_is_an_error() {
    let deep = format!(
        "apiVersion: couler.dev/v1alpha1\nname: w\nsteps: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let p = load(&deep, Format::Yaml).unwrap_err();
    assert_eq!(p.0[0].code, Code::Syntax, "{p}");
}

#[test]
fn alias_bombs_are_refused() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        bomb.push_str(&format!(
            "{}: &{} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n",
            (b'a' + i) as char,
            (b'a' + i) as char,
            p = (b'a' + i - 1) as char
        ));
    }
    let p = load(&bomb, Format::Yaml).unwrap_err();
    assert_eq!(p.0[0].code, Code::Syntax, "{p}");
}

#[test]
fn a_long_chain_of_100k_steps_validates() {
    let mut text =
        String::from("{\"apiVersion\":\"couler.dev/v1alpha1\",\"name\":\"chain\",\"steps\":[");
    for i in 0..100_000 {
        if i > 0 {
            text.push_str(&format!(
                ",{{\"name\":\"s{i}\",\"depends\":[\"s{}\"],\"container\":{{\"image\":\"a\"}}}}",
                i - 1
            ));
        } else {
            text.push_str("{\"name\":\"s0\",\"container\":{\"image\":\"a\"}}");
        }
    }
    text.push_str("]}");
    let wf = load(&text, Format::Json).unwrap();
    let dag = couler_ir::validate(&wf, &Default::default()).unwrap();
    assert_eq!(dag.steps.critical_path_len(), 100_000);
}

#[test]
fn a_long_cycle_is_found_without_recursion() {
    let n = 50_000;
    let mut text =
        String::from("{\"apiVersion\":\"couler.dev/v1alpha1\",\"name\":\"ring\",\"steps\":[");
    for i in 0..n {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            "{{\"name\":\"s{i}\",\"depends\":[\"s{}\"],\"container\":{{\"image\":\"a\"}}}}",
            (i + n - 1) % n
        ));
    }
    text.push_str("]}");
    let p = load(&text, Format::Json).unwrap_err();
    assert!(p.has(Code::Cycle));
}

#[test]
fn yaml_1_1_booleans_stay_strings() {
    let wf = load(
        "apiVersion: couler.dev/v1alpha1\nname: w\nparameters: [{name: n, default: no}, {name: on, default: 007}]\nsteps: [{name: y, container: {image: a}}]\n",
        Format::Yaml,
    )
    .unwrap();
    assert_eq!(wf.parameters[0].name, "n");
    assert_eq!(wf.parameters[0].default.as_ref().unwrap().as_str(), "no");
    assert_eq!(wf.parameters[1].default.as_ref().unwrap().as_str(), "007");
    assert_eq!(wf.steps[0].name, "y");
}
