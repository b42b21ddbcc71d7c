//! What a component carries: containers, scripts, outputs and artifacts.

use super::*;

#[test]
fn containers_carry_env_secrets_resources_hints_and_working_dir() {
    let (spec, platform) = compiled(&feature("container-args-env"));
    let c = container(&spec, "hello");
    assert_eq!(c["image"], "alpine:3.20");
    assert_eq!(c["env"], json!([{"name": "GREETING", "value": "hi"}]));
    // KFP has no working directory: the wrapper changes into it first.
    let a = argv(&spec, "hello");
    assert_eq!(&a[..2], ["sh", "-c"]);
    assert!(a[2].starts_with("cd \"$1\" || exit 1; shift\n"), "{}", a[2]);
    assert_eq!(&a[4..], ["/tmp", "sh", "-c", "echo hello world $GREETING"]);
    let r = &c["resources"];
    assert_eq!(r["cpuRequest"], 0.5);
    assert_eq!(r["cpuLimit"], 0.5);
    assert_eq!(r["resourceCpuLimit"], "500m");
    assert_eq!(r["memoryLimit"], 0.268435456);
    assert_eq!(r["resourceMemoryRequest"], "256Mi");
    assert_eq!(
        r["accelerator"],
        json!({"count": "1", "resourceCount": "1", "resourceType": "nvidia.com/gpu", "type": "nvidia.com/gpu"})
    );
    let k = k8s(&platform, "hello");
    assert_eq!(
        k["secretAsEnv"],
        json!([{
            "keyToEnv": [{"envVar": "TOKEN", "secretKey": "token"}],
            "optional": false,
            "secretName": "couler-secret-tnt-acme-creds",
            "secretNameParameter": {"runtimeValue": {"constant": "couler-secret-tnt-acme-creds"}}
        }])
    );
    assert_eq!(k["nodeSelector"], json!({"labels": {"pool": "gpu"}}));
    assert_eq!(
        k["tolerations"],
        json!([{"effect": "NoSchedule", "key": "gpu", "operator": "Exists"}])
    );
    // Labels that needed no sanitizing need no annotation.
    assert!(k["podMetadata"]["annotations"].is_null());
}

#[test]
fn scripts_outputs_and_artifacts_are_wired_through_placeholders() {
    let (spec, _) = compiled(&feature("script-outputs"));
    let produce = component(&spec, "comp-produce");
    assert_eq!(
        produce["outputDefinitions"]["parameters"],
        json!({"n": {"parameterType": "STRING"}, "result": {"parameterType": "STRING"}})
    );
    assert_eq!(
        produce["outputDefinitions"]["artifacts"]["data"]["artifactType"]["schemaTitle"],
        "system.Artifact"
    );
    let a = argv(&spec, "produce");
    // The wrapper tees stdout into `result` and writes the default of `n`.
    let wrapper = &a[2];
    assert!(wrapper.contains("tee \"$o/s\" < \"$o/p\" &"), "{wrapper}");
    assert!(wrapper.contains("f=\"{{$.outputs.parameters['result'].output_file}}\"; mkdir"));
    assert!(wrapper.contains(
        "f=\"{{$.outputs.parameters['n'].output_file}}\"; [ -e \"$f\" ] || { mkdir -p \"${f%/*}\"; printf '%s' '0' > \"$f\"; }"
    ));
    // Then the script runner: the source as $0, the interpreter after it.
    assert_eq!(
        a[4..7],
        [
            "sh",
            "-ec",
            "program=\"$(mktemp -d)/script\"\nprintf '%s' \"$0\" > \"$program\"\nexec \"$@\" \"$program\"\n"
        ]
    );
    assert_eq!(
        a[7],
        "open(\"{{$.outputs.parameters['n'].output_file}}\", \"w\").write(\"3\")\nopen(\"{{$.outputs.artifacts['data'].path}}\", \"w\").write(\"a,b\\n\")\n"
    );
    assert_eq!(a[8], "python3");

    let consume = task(&spec["root"], "consume");
    assert_eq!(deps(consume), ["produce"]);
    assert_eq!(
        consume["inputs"]["artifacts"]["data"],
        json!({"taskOutputArtifact": {"outputArtifactKey": "data", "producerTask": "produce"}})
    );
    assert_eq!(
        consume["inputs"]["parameters"]["pipelinechannel--produce-n"],
        json!({"taskOutputParameter": {"outputParameterKey": "n", "producerTask": "produce"}})
    );
    assert_eq!(
        argv(&spec, "consume")[2],
        "cat {{$.inputs.artifacts['data'].path}}; echo {{$.inputs.parameters['pipelinechannel--produce-n']}} {{$.inputs.parameters['pipelinechannel--produce-result']}}"
    );
    assert_eq!(
        consume["cachingOptions"],
        json!({}),
        "Couler caches, not KFP"
    );
}
