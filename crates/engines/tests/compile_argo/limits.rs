//! What Argo cannot express is refused by name; names, determinism and scale.

use super::*;

fn unsupported(plan: &Plan) -> String {
    match compile("argo", plan, &run()) {
        Err(EngineError::Unsupported { engine, feature }) => {
            assert_eq!(engine, "argo");
            feature
        }
        Err(other) => panic!("expected Unsupported, got {other}"),
        Ok(m) => panic!("expected Unsupported, got\n{}", m.text()),
    }
}

#[test]
fn unsupported_features_are_refused_by_name() {
    let tune = std::fs::read_to_string(repo_root().join("examples/tune.yaml")).unwrap();
    let feature = unsupported(&plan(&tune));
    assert!(
        feature.contains("\"train\"") && feature.contains("tune") && feature.contains("stages"),
        "{feature}"
    );

    let feature = unsupported(&cached_artifact("file:///var/lib/couler/cas/ab/abcd"));
    assert!(
        feature.contains("\"consume\"") && feature.contains("file:///"),
        "{feature}"
    );

    let job_outputs = r#"
apiVersion: couler.dev/v1alpha1
name: job-outputs
steps:
  - name: train
    job: {framework: pytorch, image: x, replicas: {master: {count: 1}}}
    outputs: {parameters: [{name: acc, path: /tmp/acc}]}
"#;
    let feature = unsupported(&plan(job_outputs));
    assert!(
        feature.contains("\"train\"") && feature.contains("training job"),
        "{feature}"
    );

    let job_result = r#"
apiVersion: couler.dev/v1alpha1
name: job-result
steps:
  - name: train
    job: {framework: mpi, image: x, replicas: {launcher: {count: 1}, worker: {count: 1}}}
  - name: report
    container: {image: alpine, command: [echo, '{{steps.train.outputs.result}}']}
"#;
    let feature = unsupported(&plan(job_result));
    assert!(feature.contains("result of a training job"), "{feature}");

    let map_artifacts = r#"
apiVersion: couler.dev/v1alpha1
name: map-artifacts
steps:
  - name: shard
    map: {items: [1, 2]}
    container: {image: alpine, command: [sh, -c, 'echo {{item}} > /tmp/o']}
    outputs: {artifacts: [{name: out, path: /tmp/o}]}
  - name: join
    inputs: {artifacts: [{name: out, from: '{{steps.shard.outputs.artifacts.out}}', path: /in}]}
    container: {image: alpine, command: [cat, /in]}
"#;
    let feature = unsupported(&plan(map_artifacts));
    assert!(
        feature.contains("\"shard\"") && feature.contains("fanned-out"),
        "{feature}"
    );
}

#[test]
fn names_argo_accepts() {
    let wf = Wf::of(&plan(NAMES));
    // A step called `main` keeps its template; the entry DAG moves aside.
    assert_eq!(wf.spec()["entrypoint"], "main-2");
    assert!(wf.template("main")["container"].is_object());
    // Task names may not start with a digit once `depends` is used.
    let task = wf.task("main-2", "s1st");
    assert_eq!(task["template"], "1st");
    assert_eq!(wf.task("main-2", "main")["depends"], "s1st.Succeeded");
    assert_eq!(
        arg(wf.task("main-2", "main"), "1st-result"),
        "{{tasks.s1st.outputs.result}}"
    );
    // Long names are cut to Argo's limit, deterministically and distinctly.
    let long = "l".repeat(60);
    let fanout = wf.task("main-2", &long)["template"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(fanout.len() <= 63 && fanout != long, "{fanout}");
}

#[test]
fn same_plan_same_bytes() {
    for (name, plan) in all_plans() {
        assert_eq!(argo(&plan), argo(&plan), "{name}");
    }
    // Stages and attempts get names of their own.
    let plan = feature("when");
    let staged = compile("argo", &plan, &run().stage("p3")).unwrap();
    let wf = parse(&staged.files[0].content);
    assert!(wf["metadata"]["name"].as_str().unwrap().ends_with("-2-p3"));
    assert_eq!(wf["metadata"]["labels"]["couler.dev/stage"], "p3");
}

#[test]
fn ten_thousand_step_chain() {
    let n = 10_000;
    let mut steps = Vec::with_capacity(n);
    for i in 0..n {
        let args = if i == 0 {
            vec!["start".to_owned()]
        } else {
            vec![format!("{{{{steps.s{}.outputs.result}}}}", i - 1)]
        };
        steps.push(json!({"name": format!("s{i}"), "container": {"image": "alpine", "command": ["echo"], "args": args}}));
    }
    let doc = json!({"apiVersion": "couler.dev/v1alpha1", "name": "chain", "steps": steps});
    let workflow = couler_ir::load_value(doc, &couler_ir::Limits::default()).unwrap();
    let plan = Plan::new(workflow, BTreeMap::new());
    let started = std::time::Instant::now();
    let m = argo(&plan);
    eprintln!("compiled {n} steps in {:?}", started.elapsed());
    let wf = Wf(parse(&m.files[0].content));
    let tasks = wf.tasks("main");
    assert_eq!(tasks.len(), n);
    assert_eq!(wf.templates().len(), n + 1);
    let last = &tasks[n - 1];
    assert_eq!(last["depends"], format!("s{}.Succeeded", n - 2));
    assert_eq!(
        arg(last, &format!("s{}-result", n - 2)),
        format!("{{{{tasks.s{}.outputs.result}}}}", n - 2)
    );
}
