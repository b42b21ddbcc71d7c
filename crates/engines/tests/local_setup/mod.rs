//! Set-up shared by the local engine's test binaries.

#![allow(dead_code)]

use crate::contract::Harness;
pub use crate::contract::TempDir;
use couler_engines::EngineAdapter;
use couler_engines::local::{LocalConfig, LocalEngine};
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

pub const TENANT: &str = "tnt_test";

pub fn setup(name: &str) -> (TempDir, Harness) {
    setup_with(name, |_| {})
}

/// [`setup`] for `contract_cases!`.
pub async fn contract_setup(name: &str) -> (TempDir, Harness) {
    setup(name)
}

pub fn setup_with(name: &str, configure: impl Fn(&mut LocalConfig)) -> (TempDir, Harness) {
    let tmp = TempDir::new(&format!("local-{name}"));
    let mut config = LocalConfig::new(tmp.0.join("data"));
    configure(&mut config);
    let scratch = tmp.0.join("scratch");
    fs::create_dir_all(&scratch).unwrap();
    let harness = Harness {
        engine: Box::new(move || {
            Arc::new(LocalEngine::new(config.clone())) as Arc<dyn EngineAdapter>
        }),
        scratch_root: scratch,
        tenant: TENANT.into(),
    };
    (tmp, harness)
}

pub fn data_dir(tmp: &TempDir) -> PathBuf {
    tmp.0.join("data")
}
