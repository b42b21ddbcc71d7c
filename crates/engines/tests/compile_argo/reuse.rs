//! Steps the optimizer reuses are left out, their outputs written in.

use super::*;

#[test]
fn reused_steps_are_left_out_and_their_outputs_written_in() {
    let wf = Wf::of(&cached_diamond());
    assert!(!wf.has_template("a"));
    assert!(wf.tasks("main").iter().all(|t| t["name"] != "a"));
    // The recorded result is written into the consumers' text.
    assert_eq!(
        wf.template("b")["container"]["args"],
        json!(["echo B got: A says it's cached"])
    );
    assert!(wf.task("main", "b").get("depends").is_none());
    assert_eq!(
        wf.task("main", "d")["depends"],
        "b.Succeeded && c.Succeeded"
    );

    let wf = Wf::of(&cached_artifact("s3://couler/cas/ab/abcd"));
    assert_eq!(
        wf.task("main", "consume")["arguments"]["artifacts"],
        json!([{"name": "dataset", "s3": {"bucket": "couler", "key": "cas/ab/abcd"}}])
    );
    let wf = Wf::of(&cached_artifact("https://store.example/abcd"));
    assert_eq!(
        wf.task("main", "consume")["arguments"]["artifacts"][0]["http"]["url"],
        "https://store.example/abcd"
    );

    // A reused `when` input is compared as a literal.
    let wf = Wf::of(&reused_skip());
    assert_eq!(wf.task("main", "tails")["when"], "'tails' == 'tails'");
}

#[test]
fn a_step_behind_a_reused_skip_is_skipped() {
    let wf = Wf::of(&reused_skip());
    assert!(!wf.has_template("heads") && !wf.has_template("flip"));
    assert_eq!(wf.task("main", "after-heads")["when"], "false");
}

#[test]
fn when_everything_is_reused_nothing_runs() {
    let wf = Wf::of(&all_reused());
    let tasks = wf.tasks("main");
    assert_eq!(tasks.len(), 1);
    assert_eq!(
        wf.template(tasks[0]["template"].as_str().unwrap())["suspend"],
        json!({"duration": "0"})
    );
}
