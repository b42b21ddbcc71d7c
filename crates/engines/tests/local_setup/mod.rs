//! Set-up shared by the local engine's test binaries.

#![allow(dead_code)]

use crate::contract::Harness;
pub use crate::contract::TempDir;
use couler_engines::EngineAdapter;
use couler_engines::local::{HostMount, LocalConfig, LocalEngine};
use std::fs;
use std::os::unix::fs::PermissionsExt;
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
    let scratch = tmp.0.join("scratch");
    fs::create_dir_all(&scratch).unwrap();
    // Steps see the scratch directory (and only it) of the test's files,
    // as a platform would list a shared dataset; any tenant uid may write.
    fs::set_permissions(&scratch, fs::Permissions::from_mode(0o777)).unwrap();
    config.sandbox.mounts.push(HostMount {
        path: scratch.clone(),
        writable: true,
    });
    configure(&mut config);
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
