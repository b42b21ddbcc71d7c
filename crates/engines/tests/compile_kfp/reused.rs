//! Steps the optimizer reuses are omitted and their outputs injected.

use super::*;

#[test]
fn reused_steps_are_omitted_and_their_outputs_injected() {
    let mut plan = feature("script-outputs");
    reuse(
        &mut plan,
        "produce",
        ReuseStatus::Cached,
        StepOutputs {
            result: Some("done".into()),
            parameters: Named::from_iter([("n".into(), "7".into())]),
            artifacts: Named::from_iter([(
                "data".into(),
                ArtifactRef {
                    digest: "ab".repeat(32),
                    size: 4,
                    location: "s3://couler-cas/ab/abab".into(),
                },
            )]),
        },
    );
    let (spec, _) = compiled(&plan);
    let tasks = spec["root"]["dag"]["tasks"].as_object().unwrap();
    assert!(!tasks.contains_key("produce"));
    assert!(spec["components"].get("comp-produce").is_none());
    assert_eq!(
        argv(&spec, "consume")[2],
        "cat {{$.inputs.artifacts['data'].path}}; echo 7 done"
    );
    // The stored artifact comes in through an importer.
    let consume = task(&spec["root"], "consume");
    assert_eq!(deps(consume), ["importer-produce-data"]);
    assert_eq!(
        consume["inputs"]["artifacts"]["data"]["taskOutputArtifact"],
        json!({"outputArtifactKey": "artifact", "producerTask": "importer-produce-data"})
    );
    let importer = &spec["deploymentSpec"]["executors"]["exec-importer-produce-data"]["importer"];
    assert_eq!(importer["artifactUri"], json!({"runtimeParameter": "uri"}));
    assert_eq!(importer["metadata"]["couler.dev/digest"], "ab".repeat(32));
    assert_eq!(
        task(&spec["root"], "importer-produce-data")["inputs"]["parameters"]["uri"],
        json!({"runtimeValue": {"constant": "s3://couler-cas/ab/abab"}})
    );

    // Behind a step an earlier attempt skipped, a step is skipped too.
    let mut plan = feature("depends-groups");
    reuse(
        &mut plan,
        "prep",
        ReuseStatus::Skipped,
        StepOutputs::default(),
    );
    let (spec, _) = compiled(&plan);
    let lstm = task(&spec["root"], "lstm");
    assert_eq!(lstm["triggerPolicy"]["condition"], "false");
    assert!(deps(lstm).is_empty());

    // Every main step reused: exit handlers run alone, the run succeeded.
    let mut plan = feature("exit-handler");
    reuse(
        &mut plan,
        "work",
        ReuseStatus::Succeeded,
        StepOutputs::default(),
    );
    let (spec, _) = compiled(&plan);
    assert!(task(&spec["root"], "notify").is_object());
    assert_eq!(argv(&spec, "notify")[2], "echo run succeeded");

    // With exit handlers, an importer sits in the DAG of the step reading it.
    let (spec, _) = compiled(&kitchen_sink_with_gen_reused());
    let main = component(&spec, "comp-exit-handler-1");
    assert!(main["dag"]["tasks"].get("importer-gen-report").is_none());
    let exit = component(&spec, "comp-on-exit");
    assert!(task(exit, "importer-gen-report").is_object());
    assert_eq!(deps(task(exit, "report")), ["importer-gen-report"]);
    assert_eq!(
        task(main, "gated")["triggerPolicy"]["condition"],
        "(double('4') >= 3.0) && (!('4' in ['0']))"
    );
    // A literal env value is set on the container, not by the wrapper.
    assert_eq!(
        container(&spec, "fan")["env"],
        json!([{"name": "LEVEL", "value": "level-4"}])
    );
    let a = argv(&spec, "fan");
    assert!(!a[2].contains("export LEVEL"), "{}", a[2]);
    assert_eq!(a[4], "sh", "the step's own command follows the wrapper");

    // Nothing left to run: KFP needs a task.
    let mut plan = feature("map-items");
    reuse(
        &mut plan,
        "train",
        ReuseStatus::Cached,
        StepOutputs::default(),
    );
    assert!(unsupported(&plan).contains("no task"));
}
