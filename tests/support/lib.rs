//! Helpers shared by the end-to-end tests.

use std::path::PathBuf;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository root")
        .to_path_buf()
}

/// Reads a YAML file of the repository as a JSON tree.
pub fn read_yaml(relative: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(repo_root().join(relative)).expect("file exists");
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{relative} is not valid YAML: {e}"))
}
