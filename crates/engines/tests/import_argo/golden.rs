//! The `couler-golden/` files, structurally equal after the round trip.

use super::*;

// ---------------------------------------------------------------------
// Structure of an Argo workflow: its steps flattened as the importer
// names them, and the dependency edges between them.

type Structure = (BTreeSet<String>, BTreeSet<(String, String)>);

fn norm(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().map(|c| c.to_ascii_lowercase()) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

struct Walker<'a> {
    templates: BTreeMap<&'a str, &'a Value>,
    nodes: BTreeSet<String>,
    edges: BTreeSet<(String, String)>,
}

impl<'a> Walker<'a> {
    fn new(spec: &'a Value) -> Self {
        let templates = spec["templates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| Some((t["name"].as_str()?, t)))
            .collect();
        Walker {
            templates,
            nodes: BTreeSet::new(),
            edges: BTreeSet::new(),
        }
    }

    fn calls_itself(t: &Value, name: &str) -> bool {
        let calls = t["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
            .flatten();
        let tasks = t["dag"]["tasks"].as_array().into_iter().flatten();
        calls
            .chain(tasks)
            .any(|c| c["template"].as_str() == Some(name))
    }

    /// Walks a call of `template` named `name`; returns its last steps.
    fn call(&mut self, template: &str, name: &str, upstream: &[String]) -> Vec<String> {
        let t = self.templates[template];
        let composite = t.get("dag").is_some() || t.get("steps").is_some();
        if !composite || Self::calls_itself(t, template) {
            let node = norm(name);
            for u in upstream {
                self.edges.insert((u.clone(), node.clone()));
            }
            self.nodes.insert(node.clone());
            return vec![node];
        }
        let join = |n: &str| {
            if name.is_empty() {
                n.to_owned()
            } else {
                format!("{name}-{n}")
            }
        };
        if let Some(groups) = t["steps"].as_array() {
            let mut previous = upstream.to_vec();
            for group in groups.iter().filter_map(Value::as_array) {
                let mut exits = Vec::new();
                for s in group {
                    exits.extend(self.call(
                        s["template"].as_str().unwrap(),
                        &join(s["name"].as_str().unwrap()),
                        &previous,
                    ));
                }
                previous = exits;
            }
            return previous;
        }
        let tasks = t["dag"]["tasks"].as_array().unwrap();
        let deps = |task: &Value| -> Vec<String> {
            let mut d: Vec<String> = task["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect();
            if let Some(e) = task["depends"].as_str() {
                d.extend(
                    e.split(|c: char| {
                        !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
                    })
                    .filter(|w| !w.is_empty())
                    .map(|w| w.split('.').next().unwrap().to_owned()),
                );
            }
            d
        };
        let mut exits_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut waited = BTreeSet::new();
        while exits_of.len() < tasks.len() {
            let before = exits_of.len();
            for task in tasks {
                let n = task["name"].as_str().unwrap().to_owned();
                let d = deps(task);
                if exits_of.contains_key(&n) || !d.iter().all(|x| exits_of.contains_key(x)) {
                    continue;
                }
                let up: Vec<String> = if d.is_empty() {
                    upstream.to_vec()
                } else {
                    d.iter().flat_map(|x| exits_of[x].clone()).collect()
                };
                waited.extend(d);
                let exits = self.call(task["template"].as_str().unwrap(), &join(&n), &up);
                exits_of.insert(n, exits);
            }
            assert!(exits_of.len() > before, "a dependency cycle");
        }
        exits_of
            .into_iter()
            .filter(|(n, _)| !waited.contains(n))
            .flat_map(|(_, e)| e)
            .collect()
    }
}

/// The main DAG's and the exit handler's structure of an Argo document.
fn structure(doc: &Value) -> (Structure, Structure) {
    let spec = if doc["kind"] == "CronWorkflow" {
        &doc["spec"]["workflowSpec"]
    } else {
        &doc["spec"]
    };
    let part = |entry: Option<&str>| {
        let mut w = Walker::new(spec);
        if let Some(entry) = entry {
            let t = w.templates[entry];
            let name = if t.get("dag").is_some() || t.get("steps").is_some() {
                ""
            } else {
                entry
            };
            w.call(entry, name, &[]);
        }
        (w.nodes, w.edges)
    };
    (
        part(spec["entrypoint"].as_str()),
        part(spec["onExit"].as_str()),
    )
}

fn yaml_value(text: &str) -> Value {
    serde_saphyr::from_str(text).expect("YAML")
}

#[test]
fn couler_golden_files_round_trip_with_the_same_structure() {
    let Some(files) = corpus("couler-golden") else {
        return;
    };
    let out_dir = fresh_dir("import-argo-golden");
    let mut report = String::new();
    let (mut imported_n, mut equal) = (0, 0);
    let mut different = Vec::new();
    for path in &files {
        let name = file_name(path);
        let yaml = std::fs::read_to_string(path).unwrap();
        let imported = match import::argo(&yaml) {
            Ok(i) => i,
            Err(e) => {
                report.push_str(&format!("{name:<36} import failed: {e}\n"));
                continue;
            }
        };
        imported_n += 1;
        let manifest = match compile_back(&imported.workflow) {
            Ok(m) => m,
            Err(e) if compiler_missing(&e) => {
                panic!("waiting for the Argo compiler: compile still answers {e:?}")
            }
            Err(e) => panic!("{name}: does not compile back to Argo: {e}"),
        };
        write_manifest(&out_dir, name.trim_end_matches(".yaml"), &manifest);
        let workflow_file = manifest
            .files
            .iter()
            .find(|f| f.name == "workflow.yaml")
            .expect("a Workflow");
        let original = structure(&yaml_value(&yaml));
        let compiled = structure(&yaml_value(&workflow_file.content));
        let same = original == compiled;
        if same {
            equal += 1;
        } else {
            different.push(name.clone());
        }
        report.push_str(&format!(
            "{name:<36} steps {:>2}  edges {:>2}  unsupported {:>2}  {}\n",
            original.0.0.len() + original.1.0.len(),
            original.0.1.len() + original.1.1.len(),
            imported.unsupported.len(),
            if same {
                "equal".to_owned()
            } else {
                format!("DIFFERENT\n    original {original:?}\n    compiled {compiled:?}")
            }
        ));
    }
    let problems = validate_argo(&out_dir);
    report.push_str(&format!(
        "\ncouler-golden: {} files, {imported_n} import, {equal} structurally equal after import → compile; validate-argo: {} problems\n",
        files.len(),
        problems.len()
    ));
    for p in &problems {
        report.push_str(&format!("  validate: {p}\n"));
    }
    println!("{report}");
    assert!(problems.is_empty(), "{report}");
    assert_eq!(imported_n, files.len(), "{report}");
    // Measured: every golden file keeps its structure (a step after a
    // skipped one included, with status-aware depends).
    assert!(
        different.is_empty(),
        "structure changed in {different:?}:\n{report}"
    );
}
