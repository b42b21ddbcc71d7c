//! Canonical form and hashes: stable under key order, whitespace, quoting
//! and YAML-vs-JSON; sensitive to anything that changes execution.

use couler_ir::hash::{canonical_json, hashes, step_digest};
use couler_ir::{Format, Workflow, load};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A random valid workflow: a DAG whose steps read earlier steps' outputs.
fn workflow() -> impl Strategy<Value = Value> {
    let step = (
        prop::sample::select(vec!["alpine:3.20", "python:3.12-slim", "busybox"]),
        prop::collection::vec("[a-z0-9 =.-]{0,12}", 0..4),
        prop::option::of(1u64..100_000),
        prop::option::of(0u32..5),
        prop::option::of("[a-z0-9]{1,6}"),
        prop::collection::vec(any::<prop::sample::Index>(), 0..3),
        any::<bool>(),
    );
    prop::collection::vec(step, 1..12).prop_map(|steps| {
        let mut out = Vec::new();
        for (i, (image, args, timeout, retries, version, deps, read_prev)) in
            steps.into_iter().enumerate()
        {
            let mut args: Vec<Value> = args.into_iter().map(Value::from).collect();
            if read_prev && i > 0 {
                args.push(json!(format!(
                    "--in={{{{steps.s{}.outputs.result}}}}",
                    i - 1
                )));
            }
            let mut step = json!({
                "name": format!("s{i}"),
                "container": {"image": image, "command": ["sh", "-c"], "args": args,
                              "env": [{"name": "P", "value": "{{workflow.parameters.p}}"}]},
                "outputs": {"parameters": [{"name": "out", "path": "/tmp/out"}]},
            });
            if i > 0 && !deps.is_empty() {
                let d: Vec<String> = deps.iter().map(|x| format!("s{}", x.index(i))).collect();
                step["depends"] = json!(d);
            }
            if let Some(t) = timeout {
                step["timeout"] = json!(t);
            }
            if let Some(r) = retries {
                step["retry"] = json!({"limit": r, "backoff": {"duration": "5s", "factor": 2}});
            }
            if let Some(v) = version {
                step["cache"] = json!({"version": v, "ttl": "1d"});
            }
            out.push(step);
        }
        json!({
            "apiVersion": "couler.dev/v1alpha1",
            "name": "generated",
            "labels": {"team": "a", "env": "dev"},
            "parameters": [{"name": "p", "default": 3}],
            "steps": out,
        })
    })
}

/// Writes `value` as JSON with object keys in an order chosen by `seed`
/// and whitespace sprinkled between tokens.
fn scrambled_json(value: &Value, seed: &mut u64, out: &mut String) {
    fn next(seed: &mut u64) -> usize {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 33) as usize
    }
    let space = |n: usize| [" ", "", "\n  ", "\t"][n % 4];
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            for i in (1..entries.len()).rev() {
                entries.swap(i, next(seed) % (i + 1));
            }
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(space(next(seed)));
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push(':');
                out.push_str(space(next(seed)));
                scrambled_json(v, seed, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                scrambled_json(v, seed, out);
            }
            out.push(']');
        }
        other => out.push_str(&serde_json::to_string(other).unwrap()),
    }
}

fn load_value(v: &Value) -> Workflow {
    load(&serde_json::to_string(v).unwrap(), Format::Json).unwrap_or_else(|p| panic!("{p}\n{v:#}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn hashes_ignore_syntax(doc in workflow(), seed in any::<u64>()) {
        let reference = hashes(&load_value(&doc));

        let mut s = seed;
        let mut json_text = String::new();
        scrambled_json(&doc, &mut s, &mut json_text);
        let from_json = load(&json_text, Format::Json).unwrap();
        prop_assert_eq!(&hashes(&from_json), &reference);

        // The same scrambled text read as YAML (JSON is a YAML subset).
        let from_yaml_flow = load(&json_text, Format::Yaml).unwrap();
        prop_assert_eq!(&hashes(&from_yaml_flow), &reference);

        // Block-style YAML with a different key order.
        let yaml_text = couler_ir::hash::canonical_yaml(&from_json);
        let from_yaml = load(&yaml_text, Format::Yaml).unwrap();
        prop_assert_eq!(&hashes(&from_yaml), &reference);

        // The canonical form is a fixed point.
        let canonical = canonical_json(&from_json);
        prop_assert_eq!(canonical_json(&load(&canonical, Format::Json).unwrap()), canonical);
    }

    #[test]
    fn hashes_follow_execution_changes(doc in workflow(), pick in any::<prop::sample::Index>(), which in 0usize..6) {
        let before = load_value(&doc);
        let mut changed = doc.clone();
        let n = changed["steps"].as_array().unwrap().len();
        let i = pick.index(n);
        let step = &mut changed["steps"][i];
        match which {
            0 => step["container"]["image"] = json!("alpine@sha256:0000"),
            1 => step["container"]["args"].as_array_mut().unwrap().push(json!("--extra")),
            2 => step["container"]["env"][0]["value"] = json!("literal"),
            3 => step["cache"] = json!({"version": "bumped-version"}),
            4 => step["timeout"] = json!("999999s"),
            _ => step["container"]["command"] = json!(["bash", "-c"]),
        }
        let after = load_value(&changed);
        let (h0, h1) = (hashes(&before), hashes(&after));
        prop_assert_ne!(h0.workflow, h1.workflow);
        for (j, ((_, d0), (_, d1))) in h0.steps.iter().zip(&h1.steps).enumerate() {
            if j == i {
                prop_assert_ne!(d0, d1, "the changed step's digest must change");
            } else {
                prop_assert_eq!(d0, d1, "other steps' digests must not change");
            }
        }
    }
}

#[test]
fn equivalent_spellings_hash_alike() {
    let a = "apiVersion: couler.dev/v1alpha1\nname: w\nparameters: [{name: n, default: 3}]\nsteps:\n  - name: s\n    timeout: 30m\n    container: {image: a}\n    resources: {cpu: 0.5, memory: 1Gi}\n";
    let b = r#"{"steps":[{"resources":{"memory":"1024Mi","cpu":"500m"},"container":{"image":"a"},"timeout":1800,"name":"s"}],"parameters":[{"default":"3","name":"n"}],"name":"w","apiVersion":"couler.dev/v1alpha1"}"#;
    let (wa, wb) = (
        load(a, Format::Yaml).unwrap(),
        load(b, Format::Json).unwrap(),
    );
    assert_eq!(hashes(&wa), hashes(&wb));
    assert_eq!(step_digest(&wa.steps[0]), step_digest(&wb.steps[0]));
}

#[test]
fn digests_are_hex_and_distinct_per_kind() {
    let wf = load(
        "apiVersion: couler.dev/v1alpha1\nname: w\nsteps: [{name: s, container: {image: a}}]\n",
        Format::Yaml,
    )
    .unwrap();
    let h = hashes(&wf);
    assert_eq!(h.workflow.to_hex().len(), 64);
    assert_ne!(h.workflow, h.steps[0].1);
}
