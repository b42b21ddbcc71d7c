//! Set-up shared by the local engine's test binaries.

#![allow(dead_code)]

use crate::contract::Harness;
use couler_engines::EngineAdapter;
use couler_engines::local::{LocalConfig, LocalEngine};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

pub const TENANT: &str = "tnt_test";

/// A directory removed when the test ends.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// In Cargo's scratch space for integration tests.
    pub fn new(name: &str) -> TempDir {
        TempDir::under(Path::new(env!("CARGO_TARGET_TMPDIR")), name)
    }

    pub fn under(base: &Path, name: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = base.join(format!(
            "couler-local-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

pub fn setup(name: &str) -> (TempDir, Harness) {
    setup_with(name, |_| {})
}

pub fn setup_with(name: &str, configure: impl Fn(&mut LocalConfig)) -> (TempDir, Harness) {
    let tmp = TempDir::new(name);
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
