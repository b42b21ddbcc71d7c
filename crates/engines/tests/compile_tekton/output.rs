//! The YAML itself: quoting, names and labels, determinism and scale.

use super::*;

#[test]
fn yaml_keeps_strings_that_look_like_other_scalars() {
    let p = extras()
        .into_iter()
        .find(|(n, _)| n == "yaml-11-strings")
        .unwrap()
        .1;
    let m = compile(&p).unwrap();
    let (pipeline, run) = objects(&m);
    let step = &task(&pipeline, "echo")["taskSpec"]["steps"][0];
    assert_eq!(
        step["command"],
        json!([
            "echo",
            "no",
            "true",
            "1.0",
            "0",
            "null",
            "~",
            "$(params.item)"
        ])
    );
    assert_eq!(step["env"][0]["value"], "on");
    assert_eq!(step["env"][1]["value"], "010");
    assert_eq!(
        task(&pipeline, "echo")["matrix"]["params"][0]["value"],
        json!(["1.0", "on", "yes"])
    );
    assert_eq!(run["spec"]["params"][0]["value"], "no");
    assert_eq!(run["metadata"]["labels"]["couler.dev/attempt"], "1");
    // Also for YAML 1.1 readers (kubectl, PyYAML): such strings are quoted.
    let text = &m.files[0].content;
    for quoted in ["'no'", "'on'", "'1.0'", "'true'", "'yes'"] {
        assert!(text.contains(quoted), "{quoted} is quoted");
    }
}

#[test]
fn names_and_labels_follow_the_run() {
    let plan = example("diamond");
    let run = RunSpec::new("tnt_ACME corp!", "run_01ABC", 2).stage("part-1");
    let m = couler_engines::compile::compile("tekton", &plan, &run).unwrap();
    let (pipeline, pr) = objects(&m);
    assert_eq!(pipeline["metadata"]["name"], "diamond-run-01abc-part-1-a2");
    assert_eq!(pr["metadata"]["name"], "diamond-run-01abc-part-1-a2");
    let labels = &pr["metadata"]["labels"];
    assert_eq!(labels["couler.dev/tenant"], "tnt_ACME-corp");
    assert_eq!(labels["couler.dev/stage"], "part-1");
    assert_eq!(labels["couler.dev/attempt"], "2");
    let long = RunSpec::new("tnt_acme", "run_".to_owned() + &"x".repeat(80), 1);
    let m = couler_engines::compile::compile("tekton", &plan, &long).unwrap();
    let name = objects(&m).0["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        name.len() <= 63 && name.starts_with("diamond-run-x"),
        "{name}"
    );
}

#[test]
fn output_is_deterministic() {
    for (name, plan) in compilable() {
        assert_eq!(compile(&plan).unwrap(), compile(&plan).unwrap(), "{name}");
    }
}

#[test]
fn a_ten_thousand_step_chain_compiles() {
    let steps: Vec<Value> = (0..10_000)
        .map(|i| {
            let mut step = json!({"name": format!("s{i}"), "container": {"image": "alpine:3.20", "command": ["echo", i.to_string()]}});
            if i > 0 {
                step["depends"] = json!([format!("s{}", i - 1)]);
            }
            if i % 1000 == 1 {
                step["container"]["command"][1] = json!(format!("{{{{steps.s{}.outputs.result}}}}", i - 1));
            }
            step
        })
        .collect();
    let doc = json!({"apiVersion": "couler.dev/v1alpha1", "name": "chain", "steps": steps});
    let workflow = couler_ir::load_value(doc, &couler_ir::Limits::default()).unwrap();
    let plan = Plan::new(workflow, BTreeMap::new());
    let mut fastest = std::time::Duration::MAX;
    let mut m = None;
    for _ in 0..3 {
        let started = std::time::Instant::now();
        m = Some(compile(&plan).unwrap());
        fastest = fastest.min(started.elapsed());
    }
    let m = m.unwrap();
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    eprintln!("10k-step chain: {fastest:?} ({build} build, fastest of 3)");
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! { max_nodes: 10_000_000 },
    };
    let pipeline: Value =
        serde_saphyr::from_str_with_options(&m.files[0].content, options).unwrap();
    let tasks = pipeline["spec"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 10_000);
    assert_eq!(tasks[9_999]["runAfter"], json!(["s9998"]));
    assert_eq!(
        tasks[1001].get("runAfter"),
        None,
        "ordered by the result it reads"
    );
    assert_eq!(
        params(&tasks[1001])["step_s1000_result"],
        "$(tasks.s1000.results.result)"
    );
}
