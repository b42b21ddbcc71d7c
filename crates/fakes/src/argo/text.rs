//! Argo's names (node ids, v2 pod names) and `{{…}}` template tags.

use super::expr::{self, Val};
use std::collections::BTreeMap;

/// FNV-1a, 32 bits: how Argo hashes node names into ids and pod names.
pub fn fnv32a(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// A node's id: the workflow's name for the root node, else
/// `<workflow>-<fnv32a(node name)>`.
pub fn node_id(workflow: &str, node_name: &str) -> String {
    if node_name == workflow {
        workflow.to_owned()
    } else {
        format!("{workflow}-{}", fnv32a(node_name))
    }
}

/// The v2 pod name of a node: `<workflow>-<template>-<fnv32a(node name)>`,
/// the prefix cut to fit 253 characters with the hash.
pub fn pod_name(workflow: &str, template: &str, node_name: &str) -> String {
    const MAX_PREFIX: usize = 253 - 10 - 1;
    if node_name == workflow {
        return workflow.to_owned();
    }
    let mut prefix = format!("{workflow}-{template}");
    if prefix.len() > MAX_PREFIX {
        let mut cut = MAX_PREFIX;
        while !prefix.is_char_boundary(cut) {
            cut -= 1;
        }
        prefix.truncate(cut);
    }
    format!("{prefix}-{}", fnv32a(node_name))
}

/// What tags resolve to, by their dotted names (`inputs.parameters.x`,
/// `tasks.a.outputs.result`, `item`, `workflow.status` …).
pub type Scope = BTreeMap<String, String>;

/// Replaces `{{name}}` and `{{=expression}}` tags. A tag naming inputs,
/// tasks or items that are not there is an error (Argo fails the node);
/// other unknown tags stay as they are.
pub fn substitute(text: &str, scope: &Scope) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let tag = after[..end].trim();
        if let Some(expression) = tag.strip_prefix('=') {
            let value = expr::eval(expression, &environment(scope))
                .map_err(|e| format!("failed to evaluate expression {expression:?}: {e}"))?;
            out.push_str(&value.text());
        } else if let Some(value) = scope.get(tag) {
            out.push_str(value);
        } else if ["inputs.", "tasks.", "steps.", "item"]
            .iter()
            .any(|p| tag.starts_with(p))
        {
            return Err(format!("failed to resolve {{{{{tag}}}}}"));
        } else {
            out.push_str(&rest[start..start + 2 + end + 2]);
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The scope as nested maps, the way Argo expands dotted names for
/// expressions (`workflow.status` → `workflow` → `status`).
pub fn environment(scope: &Scope) -> BTreeMap<String, Val> {
    let mut root = BTreeMap::new();
    for (key, value) in scope {
        let parts: Vec<&str> = key.split('.').collect();
        insert(&mut root, &parts, value);
    }
    root
}

fn insert(map: &mut BTreeMap<String, Val>, parts: &[&str], value: &str) {
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    if rest.is_empty() {
        map.entry((*first).to_owned())
            .or_insert_with(|| Val::Str(value.to_owned()));
        return;
    }
    let entry = map
        .entry((*first).to_owned())
        .or_insert_with(|| Val::Map(BTreeMap::new()));
    // A name that is both a value and a prefix (`item` and `item.a`):
    // the longer names win.
    if !matches!(entry, Val::Map(_)) {
        *entry = Val::Map(BTreeMap::new());
    }
    if let Val::Map(inner) = entry {
        insert(inner, rest, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_argo() {
        assert_eq!(fnv32a("hello"), 1_335_831_723);
        assert_eq!(fnv32a("world"), 933_488_787);
        assert_eq!(node_id("wf", "wf"), "wf");
        assert_eq!(node_id("wf", "wf.a"), format!("wf-{}", fnv32a("wf.a")));
        assert_eq!(
            pod_name("wf", "a", "wf.a"),
            format!("wf-a-{}", fnv32a("wf.a"))
        );
        let long = "x".repeat(300);
        assert_eq!(
            pod_name("wf", &long, "wf.a").len(),
            242 + 1 + fnv32a("wf.a").to_string().len()
        );
    }

    #[test]
    fn tags_are_replaced() {
        let scope = Scope::from([
            ("inputs.parameters.a".to_owned(), "A".to_owned()),
            ("workflow.status".to_owned(), "Succeeded".to_owned()),
            ("item".to_owned(), r#"{"k":1}"#.to_owned()),
            ("item.k".to_owned(), "1".to_owned()),
        ]);
        assert_eq!(
            substitute(
                "x {{inputs.parameters.a}} {{ item.k }} {{workflow.other}}",
                &scope
            )
            .unwrap(),
            "x A 1 {{workflow.other}}"
        );
        assert_eq!(
            substitute("{{=workflow.status == 'Succeeded' ? 'ok' : 'no'}}", &scope).unwrap(),
            "ok"
        );
        assert!(substitute("{{inputs.parameters.b}}", &scope).is_err());
        assert_eq!(substitute("open {{ only", &scope).unwrap(), "open {{ only");
    }
}
