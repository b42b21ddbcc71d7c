//! Results, artifacts and ordering between tasks.

use super::*;

#[test]
fn diamond_passes_results_through_task_params() {
    let (pipeline, run) = compiled(&example("diamond"));
    assert_eq!(pipeline["metadata"]["name"], "diamond-run-01abc-a1");
    assert_eq!(run["metadata"]["name"], "diamond-run-01abc-a1");
    assert_eq!(pipeline["metadata"]["labels"]["example"], "diamond");
    assert_eq!(task_names(&pipeline, "tasks"), ["a", "b", "c", "d"]);
    assert_eq!(
        pipeline["spec"]["params"],
        json!([{"name": "message", "type": "string", "default": "hello"}])
    );
    assert_eq!(
        run["spec"]["params"],
        json!([{"name": "message", "value": "hello"}])
    );
    let a = task(&pipeline, "a");
    assert_eq!(a["taskSpec"]["results"][0]["name"], "result");
    assert!(
        step_script(a).contains("tee \"$out\""),
        "a's stdout is captured"
    );
    assert_eq!(
        a["taskSpec"]["steps"][0]["args"],
        json!(["sh", "-c", "echo A says hello"])
    );
    let b = task(&pipeline, "b");
    assert_eq!(params(b)["step_a_result"], "$(tasks.a.results.result)");
    assert_eq!(
        b["taskSpec"]["steps"][0]["args"][2],
        "echo B got: $(params.step_a_result)"
    );
    // Result references order the tasks; no runAfter is needed.
    let d = task(&pipeline, "d");
    assert!(d.get("runAfter").is_none());
    assert_eq!(params(d).len(), 2);
    // d's output is read by nobody: it runs as written, unwrapped.
    assert_eq!(d["taskSpec"]["steps"][0]["command"], json!(["sh", "-c"]));
    assert!(d["taskSpec"].get("results").is_none());
}

#[test]
fn artifacts_travel_through_the_workspace() {
    let (pipeline, run) = compiled(&example("artifact-passing"));
    assert_eq!(
        pipeline["spec"]["workspaces"],
        json!([{"name": "artifacts"}])
    );
    let claim = &run["spec"]["workspaces"][0];
    assert_eq!(claim["name"], "artifacts");
    assert_eq!(
        claim["volumeClaimTemplate"]["spec"]["accessModes"],
        json!(["ReadWriteOnce"])
    );
    let produce = task(&pipeline, "produce");
    assert_eq!(
        produce["workspaces"],
        json!([{"name": "artifacts", "workspace": "artifacts"}])
    );
    assert!(
        step_script(produce).contains("cp -a /tmp/outputs/dataset.csv \"$ws/produce/dataset\"")
    );
    let consume = task(&pipeline, "consume");
    assert_eq!(
        consume["runAfter"],
        json!(["produce"]),
        "no result orders it"
    );
    assert!(step_script(consume).contains("cp -a \"$ws/produce/dataset\" /tmp/inputs/dataset.csv"));
    // The wrapper runs the step's own argv.
    assert_eq!(
        consume["taskSpec"]["steps"][0]["args"],
        json!(["sh", "-c", "wc -l < /tmp/inputs/dataset.csv"])
    );
}

#[test]
fn output_parameters_become_results() {
    let (pipeline, _) = compiled(&feature("script-outputs"));
    let produce = task(&pipeline, "produce");
    let results: Vec<&str> = produce["taskSpec"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["n", "result"]);
    let script = step_script(produce);
    assert!(script.contains("if [ -f /tmp/n ]; then v=$(cat /tmp/n); else v=0; fi"));
    assert!(
        script.contains("open(\"/tmp/n\", \"w\")"),
        "paths are the declared ones"
    );
    let consume = task(&pipeline, "consume");
    assert_eq!(
        params(consume)["step_produce_n"],
        "$(tasks.produce.results.n)"
    );
    assert_eq!(consume["runAfter"], Value::Null);

    let required = extras()
        .into_iter()
        .find(|(n, _)| n == "required-output")
        .unwrap()
        .1;
    let (pipeline, _) = compiled(&required);
    assert!(step_script(task(&pipeline, "produce")).contains("and has no default"));
}

#[test]
fn groups_and_depends_become_run_after() {
    let (pipeline, _) = compiled(&feature("depends-groups"));
    assert_eq!(task(&pipeline, "lstm")["runAfter"], json!(["prep"]));
    assert_eq!(task(&pipeline, "gru")["runAfter"], json!(["prep"]));
    assert_eq!(task(&pipeline, "pick")["runAfter"], json!(["lstm", "gru"]));
    assert_eq!(
        task(&pipeline, "lstm")["taskSpec"]["metadata"]["labels"]["couler.dev/group"],
        "trainers"
    );
}

#[test]
fn automl_reads_parallel_scores() {
    let (pipeline, _) = compiled(&example("automl"));
    let best = task(&pipeline, "select-best");
    assert_eq!(
        params(best)["step_xgboost_accuracy"],
        "$(tasks.xgboost.results.accuracy)"
    );
    assert_eq!(
        params(best)["step_lightgbm_accuracy"],
        "$(tasks.lightgbm.results.accuracy)"
    );
    assert_eq!(
        best["runAfter"],
        Value::Null,
        "the group is implied by the results"
    );
    let xgboost = &task(&pipeline, "xgboost")["taskSpec"]["steps"][0];
    assert_eq!(
        xgboost["computeResources"],
        json!({"requests": {"cpu": "2", "memory": "2Gi"}})
    );
    assert_eq!(
        task(&pipeline, "xgboost")["taskSpec"]["metadata"]["labels"]["couler.dev/group"],
        "train-models"
    );
}
