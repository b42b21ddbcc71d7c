//! Steps the optimizer reuses become literals.

use super::*;

#[test]
fn reused_steps_become_literals_and_keep_the_order() {
    let (pipeline, _) = compiled(&reused_chain());
    assert_eq!(task_names(&pipeline, "tasks"), ["p", "r"]);
    let r = task(&pipeline, "r");
    assert_eq!(
        r["taskSpec"]["steps"][0]["command"],
        json!(["echo", "cached q"])
    );
    assert_eq!(
        r["runAfter"],
        json!(["p"]),
        "r still waits for what q waited for"
    );
    assert!(task(&pipeline, "p")["taskSpec"].get("results").is_none());

    // A cached producer whose artifact another step needs cannot be fed.
    let mut p = example("artifact-passing");
    reuse(&mut p, "produce", StepOutputs::default());
    let message = unsupported(&p);
    assert!(
        message.contains("`consume`") && message.contains("reused"),
        "{message}"
    );

    // A reused step that recorded no result cannot be read.
    let mut p = example("diamond");
    reuse(&mut p, "a", StepOutputs::default());
    match compile(&p) {
        Err(EngineError::Other(m)) => {
            assert!(m.contains("step `b`") && m.contains("recorded none"), "{m}")
        }
        other => panic!("expected an error, got {other:?}"),
    }

    // Nothing left to run.
    let mut p = feature("map-items");
    reuse(&mut p, "train", StepOutputs::default());
    assert!(matches!(compile(&p), Err(EngineError::Other(m)) if m.contains("nothing")));
}
