//! The wrapper around a step's command: inputs threaded through every
//! wrapper, stdout, defaults, env and exit status.

use super::*;

/// Per-item `when`, `{{item.FIELD}}`, env values with references, collected
/// outputs, and exit handlers reading main steps' outputs and the status.
#[test]
fn combined_features_thread_inputs_through_every_wrapper() {
    let (spec, _) = compiled(&compile_support::plan(KITCHEN_SINK));
    let main = component(&spec, "comp-exit-handler-1");

    // map.from an output, with a `when` per item inside the loop.
    let fan = task(main, "fan");
    assert_eq!(fan["componentRef"]["name"], "comp-for-loop-fan");
    assert_eq!(deps(fan), ["gen", "sizes"]);
    assert_eq!(
        fan["parameterIterator"]["items"]["inputParameter"],
        "pipelinechannel--sizes-result"
    );
    let per_item = task(component(&spec, "comp-for-loop-fan"), "fan");
    assert_eq!(
        per_item["triggerPolicy"]["condition"],
        "double(inputs.parameter_values['pipelinechannel--fan-loop-item-n']) > 2.0"
    );
    assert_eq!(
        per_item["inputs"]["parameters"]["pipelinechannel--fan-loop-item-tag"],
        json!({"componentInputParameter": "pipelinechannel--fan-loop-item", "parameterExpressionSelector": "parseJson(string_value)[\"tag\"]"})
    );
    // The env value with a reference is exported by the wrapper from an argument.
    let a = argv(&spec, "fan");
    assert!(a[2].starts_with("export LEVEL=\"$1\"; shift\n"), "{}", a[2]);
    assert_eq!(
        a[4],
        "level-{{$.inputs.parameters['pipelinechannel--gen-result']}}"
    );
    assert_eq!(
        a[7],
        "echo {{$.inputs.parameters['pipelinechannel--fan-loop-item-tag']}} $LEVEL"
    );
    assert!(container(&spec, "fan")["env"].is_null());

    // A `when` outside the loop, collected outputs read downstream.
    assert_eq!(
        task(main, "gated")["triggerPolicy"]["condition"],
        "(double(inputs.parameter_values['pipelinechannel--gen-result']) >= 3.0) && (!(inputs.parameter_values['pipelinechannel--gen-result'] in ['0']))"
    );
    assert_eq!(
        component(&spec, "comp-condition-gated")["outputDefinitions"]["parameters"]["pipelinechannel--gated-result"]
            ["parameterType"],
        "LIST"
    );
    assert_eq!(
        task(main, "after")["inputs"]["parameters"]["pipelinechannel--gated-result"]["taskOutputParameter"],
        json!({"outputParameterKey": "pipelinechannel--gated-result", "producerTask": "gated"})
    );

    // Exit handlers read main outputs through the main DAG's outputs.
    assert_eq!(
        main["dag"]["outputs"]["artifacts"]["pipelinechannel--gen-report"]["artifactSelectors"],
        json!([{"outputArtifactKey": "report", "producerSubtask": "gen"}])
    );
    assert_eq!(
        main["outputDefinitions"]["parameters"]["pipelinechannel--fan-result"]["parameterType"],
        "LIST"
    );
    let on_exit = task(&spec["root"], "on-exit");
    assert_eq!(
        on_exit["inputs"]["artifacts"]["pipelinechannel--gen-report"]["taskOutputArtifact"],
        json!({"outputArtifactKey": "pipelinechannel--gen-report", "producerTask": "exit-handler-1"})
    );
    let report = task(component(&spec, "comp-on-exit"), "report");
    assert_eq!(
        report["triggerPolicy"]["condition"],
        "inputs.parameter_values['pipelinechannel--workflow-status'] == 'failed'"
    );
    assert_eq!(
        report["inputs"]["artifacts"]["r"],
        json!({"componentInputArtifact": "pipelinechannel--gen-report"})
    );
}

/// The wrapper runs under `sh` as the KFP launcher would run it, with the
/// placeholders filled in: stdout is kept as `result` (and still logged),
/// defaults fill unwritten outputs, env values and the working directory
/// are set, and the exit status survives.
#[test]
fn the_wrapper_keeps_stdout_defaults_env_and_exit_status() {
    let plan = compile_support::plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: wrapper
steps:
  - {name: src, container: {image: alpine, command: [echo, world]}}
  - name: w
    container:
      image: alpine
      command: [sh, -c, 'echo "hello $WHO from $(pwd)"; echo; exit 3']
      env: [{name: WHO, value: '{{steps.src.outputs.result}}'}]
      workingDir: /
    outputs: {parameters: [{name: p, path: /tmp/p, default: "it's"}]}
  - {name: reader, container: {image: alpine, command: [echo, '{{steps.w.outputs.result}}']}}
"#,
    );
    let (spec, _) = compiled(&plan);
    let dir = fresh_dir("kfp-wrapper");
    let result = dir.join("outputs/result/data");
    let p = dir.join("outputs/p/data");
    let fill = |s: &str| {
        s.replace(
            "{{$.inputs.parameters['pipelinechannel--src-result']}}",
            "world",
        )
        .replace(
            "{{$.outputs.parameters['result'].output_file}}",
            result.to_str().unwrap(),
        )
        .replace(
            "{{$.outputs.parameters['p'].output_file}}",
            p.to_str().unwrap(),
        )
    };
    let argv: Vec<String> = argv(&spec, "w").iter().map(|s| fill(s)).collect();
    assert!(!argv.iter().any(|a| a.contains("{{")), "{argv:?}");
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hello world from /\n\n"
    );
    assert_eq!(
        std::fs::read_to_string(&result).unwrap(),
        "hello world from /"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "it's");
}
