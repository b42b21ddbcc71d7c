//! The DAG file itself: cached steps, determinism, ids and scale.

use super::*;

#[test]
fn cached_steps_are_omitted_and_their_outputs_inlined() {
    let mut plan = example("diamond");
    plan.steps[0].action = Action::Reuse {
        status: ReuseStatus::Cached,
        outputs: StepOutputs {
            result: Some("it's \"cached\" {{x}}".into()),
            ..Default::default()
        },
    };
    let dag = compile(&plan, &POD);
    assert!(!dag.contains("t_a = "), "the cached step is not emitted");
    has(
        task(&dag, "t_b"),
        "\"echo B got: {{ \\\"it's \\\\\\\"cached\\\\\\\" \\\\x7b\\\\x7bx\\\\x7d\\\\x7d\\\" }}\"",
    );
    assert!(!dag.contains("t_a >>"));
    has(&dag, "    [t_b, t_c] >> t_d\n");
}

#[test]
fn output_is_deterministic() {
    for (name, plan) in compile_support::examples().into_iter().chain(features()) {
        for options in [&POD, &BASH] {
            let run = run_spec("run_1");
            let a = airflow::compile_with(&plan, &run, options);
            let b = airflow::compile_with(&plan, &run, options);
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
                _ => panic!("{name}: one compile failed"),
            }
        }
    }
}

#[test]
fn dag_ids_carry_run_stage_and_attempt() {
    let plan = example("diamond");
    let mut run = RunSpec::new("tnt_acme", "run/x y", 2);
    run.stage = Some("part-1".into());
    let m = airflow::compile(&plan, &run).unwrap();
    assert_eq!(m.files[0].name, "couler_diamond_run_x_y_part-1_attempt2.py");
    has(
        &m.files[0].content,
        "dag_id=\"couler_diamond_run_x_y_part-1_attempt2\"",
    );
    has(&m.files[0].content, "\"couler.dev/run\": \"run-x-y\"");
}

fn chain_workflow(n: usize) -> Plan {
    let steps: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let mut s = serde_json::json!({
                "name": format!("s{i}"),
                "container": {"image": "alpine", "command": ["echo", format!("step {i}")]},
            });
            if i > 0 {
                s["container"]["args"] =
                    serde_json::json!([format!("{{{{steps.s{}.outputs.result}}}}", i - 1)]);
            }
            s
        })
        .collect();
    let wf: couler_ir::Workflow = serde_json::from_value(serde_json::json!({
        "apiVersion": "couler.dev/v1alpha1",
        "name": "chain",
        "steps": steps,
    }))
    .unwrap();
    Plan::new(wf, BTreeMap::new())
}

#[test]
fn a_ten_thousand_step_chain_compiles() {
    let n = 10_000;
    let dag = compile(&chain_workflow(n), &POD);
    assert_eq!(dag.matches("= KubernetesPodOperator(").count(), n);
    let edges = dag
        .lines()
        .filter(|l| l.starts_with("    t_") && l.contains(" >> "));
    assert_eq!(edges.count(), n - 1);
    has(&dag, "    t_s9998 >> t_s9999\n");
    has(
        task(&dag, "t_s9999"),
        "arguments=[\"{{ couler_output(ti, 's9998') }}\"]",
    );
    assert_eq!(dag.matches("do_xcom_push=True").count(), n - 1);
}
