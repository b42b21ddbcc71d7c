//! `couler generate` against a real API: a draft, then feedback on it.

mod common;
use common::*;

#[tokio::test]
async fn generate_asks_the_api_and_feedback_revises_the_draft() {
    let api = TestApi::start().await;
    let (_, editor) = api.tenant("acme").await;
    let out = api
        .couler(
            &editor,
            &[
                "generate",
                "load the data from https://example.com/d.csv, then train an xgboost model",
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let first = couler_ir::load(&stdout(&out), couler_ir::Format::Yaml).expect("valid IR");
    assert_eq!(first.steps.len(), 2);
    let err = stderr(&out);
    let id = err
        .split_whitespace()
        .find(|w| w.starts_with("gen_"))
        .unwrap_or_else(|| panic!("no generation id in {err}"))
        .to_owned();
    assert!(err.contains("draft 1 by the offline planner"), "{err}");

    let out = api
        .couler(
            &editor,
            &["generate", "--feedback", &id, "use 4 GPUs for training"],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("draft 2"), "{}", stderr(&out));
    assert!(stdout(&out).contains("gpu: 4"), "{}", stdout(&out));
    let generation = api.get(&format!("/v1/generations/{id}"), &editor).await;
    assert_eq!(generation["history"].as_array().unwrap().len(), 2);

    // An action the library does not know is a generic step named from its
    // words, with a warning saying what to fill in (never refused).
    let out = api
        .couler(&editor, &["generate", "frobnicate the widgets thoroughly"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("frobnicate-widgets-thoroughly")
            && stderr(&out).contains("fill in its image and command"),
        "{}",
        stderr(&out)
    );

    // What no workflow step can do is refused, naming the words.
    let out = api
        .couler(&editor, &["generate", "bake a cake for the whole team"])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("could not understand"),
        "{}",
        stderr(&out)
    );
    api.stop().await;
}
