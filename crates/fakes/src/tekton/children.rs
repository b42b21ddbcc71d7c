//! What a PipelineRun creates and how its tasks depend on each other:
//! TaskRun objects (labels, owner, params, workspaces, pod template),
//! their names, and the parents a task waits for.

use super::vars;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The TaskRun for one pipeline task (one matrix combination of it),
/// as Tekton's PipelineRun reconciler writes it.
pub(super) fn taskrun(
    pr: &Value,
    pipeline: &str,
    task: &Value,
    run: &str,
    combo: Option<Vec<(String, String)>>,
    member_of: &str,
) -> Value {
    let (pr_name, uid) = (&pr["metadata"]["name"], &pr["metadata"]["uid"]);
    let namespace = pr["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = task["name"].as_str().unwrap_or_default();
    let mut labels = pr["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(l) = task["taskSpec"]["metadata"]["labels"].as_object() {
        labels.extend(l.clone());
    }
    for (k, v) in [
        (
            "tekton.dev/pipelineRun",
            pr_name.as_str().unwrap_or_default(),
        ),
        ("tekton.dev/pipelineTask", name),
        ("tekton.dev/pipeline", pipeline),
        ("tekton.dev/memberOf", member_of),
        (
            "tekton.dev/pipelineRunUID",
            uid.as_str().unwrap_or_default(),
        ),
    ] {
        labels.insert(k.into(), v.into());
    }
    let mut annotations = pr["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(a) = task["taskSpec"]["metadata"]["annotations"].as_object() {
        annotations.extend(a.clone());
    }
    let mut params: Vec<Value> = task["params"].as_array().cloned().unwrap_or_default();
    for (k, v) in combo.into_iter().flatten() {
        params.push(json!({"name": k, "value": v}));
    }
    let mut spec = json!({"params": params, "serviceAccountName": "default"});
    if task["taskSpec"].is_object() {
        spec["taskSpec"] = task["taskSpec"].clone();
        spec["taskSpec"]
            .as_object_mut()
            .map(|s| s.remove("metadata"));
    } else if task["taskRef"].is_object() {
        spec["taskRef"] = task["taskRef"].clone();
    }
    for field in ["timeout", "retries"] {
        if let Some(v) = task.get(field) {
            spec[field] = v.clone();
        }
    }
    let bindings = pr["spec"]["workspaces"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut workspaces = Vec::new();
    for w in task["workspaces"].as_array().into_iter().flatten() {
        let wanted = w["workspace"]
            .as_str()
            .or(w["name"].as_str())
            .unwrap_or_default();
        let Some(b) = bindings.iter().find(|b| b["name"] == wanted) else {
            continue;
        };
        let mut out = json!({"name": w["name"]});
        if b.get("volumeClaimTemplate").is_some() {
            let claim = format!(
                "pvc-{:010x}",
                fnv(&format!(
                    "{namespace}/{}/{wanted}",
                    pr_name.as_str().unwrap_or_default()
                )) & 0xff_ffff_ffff
            );
            out["persistentVolumeClaim"] = json!({"claimName": claim});
        } else if let Some(c) = b.get("persistentVolumeClaim") {
            out["persistentVolumeClaim"] = c.clone();
        } else {
            out["emptyDir"] = json!({});
        }
        let sub: Vec<&str> = [b["subPath"].as_str(), w["subPath"].as_str()]
            .into_iter()
            .flatten()
            .collect();
        if !sub.is_empty() {
            out["subPath"] = sub.join("/").into();
        }
        workspaces.push(out);
    }
    if !workspaces.is_empty() {
        spec["workspaces"] = workspaces.into();
    }
    if let Some(t) = pr["spec"]["taskRunSpecs"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["pipelineTaskName"] == name)
        && let Some(p) = t.get("podTemplate")
    {
        spec["podTemplate"] = p.clone();
    }
    json!({
        "apiVersion": "tekton.dev/v1",
        "kind": "TaskRun",
        "metadata": {
            "name": run,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [{
                "apiVersion": "tekton.dev/v1",
                "kind": "PipelineRun",
                "name": pr_name,
                "uid": uid,
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "spec": spec,
    })
}

/// The tasks a task waits for: `runAfter`, and those whose results it reads.
pub(super) fn parents(task: &Value) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = task["runAfter"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    out.extend(result_refs(task).into_iter().map(|(t, _)| t));
    out
}

/// `(task, result)` pairs read by `$(tasks.T.results.R…)` anywhere in a
/// pipeline task's params, `when` and `matrix`.
pub(super) fn result_refs(task: &Value) -> BTreeSet<(String, String)> {
    fn walk(v: &Value, out: &mut BTreeSet<(String, String)>) {
        match v {
            Value::String(s) => {
                for (_, r) in vars::references(s) {
                    let parts: Vec<&str> = r.key.splitn(4, '.').collect();
                    if let ["tasks", t, "results", res] = parts.as_slice() {
                        // `$(tasks.t.results.r.key)` reads an object result's key.
                        let res = res.split('.').next().unwrap_or(res);
                        out.insert(((*t).to_owned(), res.to_owned()));
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            Value::Object(m) => m.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for field in ["params", "when", "matrix"] {
        walk(&task[field], &mut out);
    }
    out
}

/// `<parent>-<suffix>`, shortened with a hash past 63 characters.
pub(super) fn child_name(parent: &str, suffix: &str) -> String {
    let name = format!("{parent}-{suffix}");
    if name.len() <= 63 {
        return name;
    }
    let hash = format!("{:016x}", fnv(&name));
    format!("{}-{hash}", &name[..63 - hash.len() - 1]).replace("--", "-")
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_come_from_run_after_and_result_references() {
        let task = json!({
            "name": "d",
            "runAfter": ["b"],
            "params": [{"name": "x", "value": "$(tasks.c.results.out) $(params.p)"}],
            "when": [{"input": "$(tasks.a.results.r)", "operator": "in", "values": ["y"]}],
            "matrix": {"params": [{"name": "item", "value": "$(tasks.e.results.list[*])"}]},
        });
        let p: Vec<String> = parents(&task).into_iter().collect();
        assert_eq!(p, ["a", "b", "c", "e"]);
    }

    #[test]
    fn child_names_stay_dns_labels() {
        assert_eq!(child_name("run", "task"), "run-task");
        let long = child_name(&"p".repeat(60), "task-0");
        assert!(long.len() <= 63, "{long}");
        assert_ne!(long, child_name(&"p".repeat(60), "task-1"));
    }
}
