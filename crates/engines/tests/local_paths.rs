//! Declared container paths on the local engine, in the bubblewrap
//! sandbox: steps written for a container write and read their declared
//! paths directly (as the Couler SDK's do under `/mnt`), each try in a
//! fresh directory of its own there; paths the sandbox cannot show are
//! refused naming the step; without the sandbox the references still work
//! and a missing output says why.

#[allow(dead_code)]
mod contract;
mod local_setup;

use contract::{plan, run};
use couler_engines::local::Isolation;
use couler_engines::{EngineError, RunOutcome, StepPhase};
use local_setup::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_write_their_declared_output_paths_directly() {
    let (_tmp, h) = setup("declared-outputs");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: declared
steps:
  - name: produce
    container:
      image: x
      command:
        - sh
        - -c
        - |
          echo "empty:$(ls -A /mnt)"
          echo -n hello world > /mnt/hello_world.txt
          echo via-reference > {{outputs.parameters.both.path}}
          echo "direct:$(cat /mnt/both.txt)"
          mkdir -p /tmp/out && echo 42 > /tmp/out/answer
          echo top > /result.txt
          mkdir /mnt/model && echo weights > /mnt/model/w
    outputs:
      parameters:
        - {name: hello, path: /mnt/hello_world.txt}
        - {name: both, path: /mnt/both.txt}
        - {name: answer, path: /tmp/out/answer}
        - {name: top, path: /result.txt}
      artifacts:
        - {name: model, path: /mnt/model}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("declared"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let produce = r.last("produce");
    let value = |p: &str| produce.outputs.parameters.get(p).cloned();
    assert_eq!(value("hello").as_deref(), Some("hello world"));
    assert_eq!(value("both").as_deref(), Some("via-reference"));
    assert_eq!(value("answer").as_deref(), Some("42"));
    assert_eq!(value("top").as_deref(), Some("top"));
    assert_eq!(produce.outputs.artifacts.get("model").unwrap().size, 8);
    // /mnt starts empty, and the reference and the path are one file.
    assert_eq!(r.result("produce"), "empty:\ndirect:via-reference");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifacts_pass_between_steps_by_their_declared_paths() {
    let (_tmp, h) = setup("declared-artifacts");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: passing
steps:
  - name: a
    container: {image: x, command: [bash, -c, "echo -n hello world > /mnt/t1.txt"]}
    outputs: {artifacts: [{name: t1, path: /mnt/t1.txt}]}
  - name: b
    depends: [a]
    inputs: {artifacts: [{name: t1, from: "{{steps.a.outputs.artifacts.t1}}", path: /mnt/t1.txt}]}
    container:
      image: x
      command: [sh, -c, "cat /mnt/t1.txt; echo; cat {{inputs.artifacts.t1.path}}; echo; echo scratch > /mnt/new && cat /mnt/new"]
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("passing"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("b"), "hello world\nhello world\nscratch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_and_tries_never_see_each_others_declared_directories() {
    let (_tmp, h) = setup("declared-private");
    let s = h.scratch("private");
    // `left` and `right` run at once: each writes its /mnt/x, waits until
    // the other has written its own, then lists /mnt and reads /mnt/x.
    // `again` fails its first try after writing /mnt/seen; the retry must
    // start with an empty /mnt.
    let side = |me: &str, other: &str| {
        format!(
            r#"  - name: {me}
    container: {{image: x, command: [sh, -c, "echo {me} > /mnt/x; touch @S@/{me}; while [ ! -e @S@/{other} ]; do sleep 0.02; done; echo $(ls -A /mnt) $(cat /mnt/x)"]}}
    outputs: {{parameters: [{{name: x, path: /mnt/x}}]}}
"#
        )
    };
    let yaml = format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: private
steps:
{}{}  - name: again
    retry: {{limit: 1, on: always}}
    container: {{image: x, command: [sh, -c, "ls -A /mnt; touch /mnt/seen; if [ ! -e @S@/failed ]; then touch @S@/failed; exit 1; fi"]}}
    outputs: {{parameters: [{{name: seen, path: /mnt/seen}}]}}
"#,
        side("left", "right"),
        side("right", "left")
    );
    let r = run(
        &*(h.engine)(),
        &h.run_spec("private"),
        plan(&s.yaml(&yaml)),
        vec![],
    )
    .await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("left"), "x left");
    assert_eq!(r.result("right"), "x right");
    let left = r.last("left").outputs.parameters.get("x").cloned();
    assert_eq!(left.as_deref(), Some("left"));
    let again = r.last("again");
    assert_eq!((again.phase, again.attempt), (StepPhase::Succeeded, 2));
    assert_eq!(r.result("again"), "", "the retry saw the first try's /mnt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_paths_the_sandbox_cannot_show_are_refused_naming_the_step() {
    let (_tmp, h) = setup("declared-refused");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: refused
steps:
  - name: fine
    container: {image: x, command: ["true"]}
    outputs: {artifacts: [{name: conf, path: /mnt/conf}]}
  - name: config
    inputs: {artifacts: [{name: conf, from: "{{steps.fine.outputs.artifacts.conf}}", path: /etc/app/conf.yaml}]}
    container: {image: x, command: ["true"]}
    outputs: {parameters: [{name: pid, path: /proc/couler/pid}]}
"#,
    );
    let engine = (h.engine)();
    let refused = engine.start(&h.run_spec("refused"), plan, vec![]).await;
    let Err(EngineError::Unsupported { feature, .. }) = refused else {
        panic!(
            "expected a refusal, got {:?}",
            refused.map(|s| s.engine_ref)
        );
    };
    assert!(
        feature.contains(
            "step `config`: input artifact `conf` at /etc/app/conf.yaml: /etc/app is in /etc, the host's, shown read only"
        ),
        "{feature}"
    );
    assert!(
        feature.contains("step `config`: output parameter `pid` at /proc/couler/pid: /proc/couler is in /proc, the kernel's"),
        "{feature}"
    );
    assert!(!feature.contains("`fine`"), "{feature}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_sandbox_references_work_and_a_missing_output_says_why() {
    let (_tmp, h) = setup_with("declared-off", |c| {
        c.sandbox.isolation = Isolation::Off;
    });
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: off
steps:
  - name: by-reference
    container: {image: x, command: [sh, -c, "echo kept > {{outputs.parameters.p.path}}"]}
    outputs: {parameters: [{name: p, path: /couler-declared/p.txt}]}
  - name: silent
    container: {image: x, command: ["true"]}
    outputs: {parameters: [{name: p, path: /couler-declared/p.txt}]}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("off"), plan, vec![]).await;
    let kept = r.last("by-reference").outputs.parameters.get("p").cloned();
    assert_eq!(kept.as_deref(), Some("kept"));
    let silent = r.last("silent");
    assert_eq!(silent.phase, StepPhase::Failed);
    let message = silent.message.as_deref().unwrap_or_default();
    assert!(
        message.contains("was not written to {{outputs.parameters.p.path}}")
            && message.contains("local.sandbox.isolation = \"off\"")
            && message.contains("the declared path /couler-declared/p.txt is not read"),
        "{message}"
    );
}

/// The Couler SDK's parameter passing (its `parameter_passing_golden.yaml`,
/// whalesay image and all): imported, it runs unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_couler_sdk_program_writing_under_mnt_runs_as_imported() {
    let imported = couler_engines::import::argo(
        r#"
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: pytest-}
spec:
  entrypoint: pytest
  templates:
    - name: pytest
      dag:
        tasks:
          - name: A
            template: A
            arguments:
              parameters:
                - {name: para-A-0, value: 'echo -n A > /mnt/t1.txt && echo -n B > /mnt/t2.txt'}
          - name: B
            dependencies: [A]
            template: B
            arguments:
              parameters:
                - {name: para-B-0, value: '--input: x'}
                - {name: para-B-1, value: "{{tasks.A.outputs.parameters.output-id-208}}"}
                - {name: para-B-2, value: "{{tasks.A.outputs.parameters.output-id-211}}"}
    - name: A
      inputs: {parameters: [{name: para-A-0}]}
      container:
        image: docker/whalesay:latest
        command: [bash, -c]
        args: ["{{inputs.parameters.para-A-0}}"]
        volumeMounts: [{name: couler-out-dir-0, mountPath: /mnt}]
      outputs:
        parameters:
          - {name: output-id-208, valueFrom: {path: /mnt/t1.txt}}
          - {name: output-id-211, valueFrom: {path: /mnt/t2.txt}}
    - name: B
      inputs: {parameters: [{name: para-B-0}, {name: para-B-1}, {name: para-B-2}]}
      container:
        image: docker/whalesay:latest
        command: [echo]
        args: ["{{inputs.parameters.para-B-0}}", "{{inputs.parameters.para-B-1}}", "{{inputs.parameters.para-B-2}}"]
  volumes:
    - emptyDir: {}
      name: couler-out-dir-0
"#,
    )
    .expect("imports");
    let changing: Vec<_> = imported
        .unsupported
        .iter()
        .filter(|u| u.changes_run())
        .collect();
    assert!(changing.is_empty(), "{changing:#?}");
    let yaml = serde_json::to_string(&imported.workflow).unwrap();
    let (_tmp, h) = setup("declared-couler");
    let r = run(&*(h.engine)(), &h.run_spec("couler"), plan(&yaml), vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("b"), "--input: x A B");
}
