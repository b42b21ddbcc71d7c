//! The public Argo corpus: how many import, and every imported one compiled
//! back to Argo and accepted by `scripts/validate-argo`.

use super::*;

#[test]
fn argo_corpus_imports_and_round_trips() {
    let Some(files) = corpus("argo") else { return };
    let out_dir = fresh_dir("import-argo-corpus");
    let mut rows = Vec::new();
    let (mut clean, mut warned, mut failed) = (0, 0, 0);
    let mut features: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures: BTreeMap<&str, usize> = BTreeMap::new();
    let mut compile_errors = Vec::new();
    let mut compiled = 0;
    for path in &files {
        let name = file_name(path);
        let yaml = std::fs::read_to_string(path).unwrap();
        match import::argo(&yaml) {
            Ok(imported) => {
                couler_ir::validate(&imported.workflow, &couler_ir::Limits::default())
                    .unwrap_or_else(|p| panic!("{name}: the imported workflow is invalid: {p}"));
                let wf = &imported.workflow;
                let n = imported.unsupported.len();
                if n == 0 {
                    clean += 1;
                } else {
                    warned += 1;
                }
                for u in &imported.unsupported {
                    *features.entry(u.feature.clone()).or_default() += 1;
                }
                rows.push(format!(
                    "{name:<70} {:<8} {:>5} {:>5}",
                    "yes",
                    wf.steps.len() + wf.on_exit.len(),
                    n
                ));
                match compile_back(wf) {
                    Ok(manifest) => {
                        write_manifest(&out_dir, name.trim_end_matches(".yaml"), &manifest);
                        compiled += 1;
                    }
                    Err(e) if compiler_missing(&e) => {
                        panic!("waiting for the Argo compiler: compile still answers {e:?}")
                    }
                    Err(e) => compile_errors.push(format!("{name}: {e}")),
                }
            }
            Err(e) => {
                failed += 1;
                let kind = match &e {
                    ImportError::Syntax(_) => "not YAML",
                    ImportError::NotAWorkflow(_) => "not a workflow",
                    ImportError::NoEntrypoint(_) => "no entrypoint of their own",
                    ImportError::Nothing { .. } => "nothing importable",
                    ImportError::Invalid(_) => "INVALID IR",
                };
                *failures.entry(kind).or_default() += 1;
                let why = match &e {
                    ImportError::Nothing { unsupported } => {
                        let features: BTreeSet<&str> =
                            unsupported.iter().map(|u| u.feature.as_str()).collect();
                        format!(
                            "nothing importable: {}",
                            features.into_iter().collect::<Vec<_>>().join(", ")
                        )
                    }
                    other => other.to_string(),
                };
                rows.push(format!(
                    "{name:<70} {:<8} {:>5} {:>5}  {}",
                    "no",
                    "-",
                    "-",
                    why.chars().take(90).collect::<String>()
                ));
            }
        }
    }
    let mut report = String::new();
    report.push_str(&format!(
        "{:<70} {:<8} {:>5} {:>5}\n",
        "file", "imported", "steps", "unsup"
    ));
    for row in &rows {
        report.push_str(row);
        report.push('\n');
    }
    let why: Vec<String> = failures.iter().map(|(k, n)| format!("{n} {k}")).collect();
    report.push_str(&format!(
        "\nargo corpus: {} files: {clean} import cleanly, {warned} import with warnings, {failed} fail ({})\n",
        files.len(),
        why.join(", ")
    ));
    let mut by_count: Vec<(&String, &usize)> = features.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    report.push_str("most reported (feature: places):\n");
    for (f, n) in by_count.iter().take(15) {
        report.push_str(&format!("  {n:>4}  {f}\n"));
    }
    let problems = validate_argo(&out_dir);
    report.push_str(&format!(
        "round trip: {compiled} of {} imported compile back to Argo ({} compile errors); validate-argo (hera strict) on the {compiled}: {} problems\n",
        clean + warned,
        compile_errors.len(),
        problems.len()
    ));
    for e in &compile_errors {
        report.push_str(&format!("  compile: {e}\n"));
    }
    for p in &problems {
        report.push_str(&format!("  validate: {p}\n"));
    }
    println!("{report}");
    assert!(
        !failures.contains_key("INVALID IR"),
        "the importer built invalid IR:\n{report}"
    );
    assert!(
        compile_errors.is_empty() && problems.is_empty(),
        "round trip failed:\n{report}"
    );
    // Measured floor: what imports today must keep importing.
    assert!(
        clean >= 26 && clean + warned >= 115,
        "fewer imports than measured:\n{report}"
    );
}
