//! A data directory below a directory other users cannot search (a clone
//! under `/root`, a `mkdtemp` directory): running as root, steps run as
//! their tenant's uid, which could not be shown their work directory, so
//! the engine refuses to start naming the directory and the fixes, instead
//! of failing every step. Not running as root, steps run as the engine's
//! own uid, and the engine starts.

#[allow(dead_code)]
mod contract;

use contract::TempDir;
use couler_engines::local::{LocalConfig, LocalEngine, StartError};
use std::fs;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_data_directory_steps_cannot_reach_stops_the_engine_at_start() {
    let tmp = TempDir::new("reach");
    let closed = tmp.join("closed");
    fs::create_dir_all(&closed).unwrap();
    fs::set_permissions(&closed, fs::Permissions::from_mode(0o700)).unwrap();
    let data = closed.join("data");
    // SAFETY: plain syscall.
    let root = unsafe { libc::geteuid() } == 0;
    match LocalEngine::try_new(LocalConfig::new(&data)) {
        Err(StartError::Unreachable(why)) if root => {
            let chmod = format!("chmod o+x {}", closed.display());
            assert!(why.contains(&chmod), "{why}");
            assert!(why.contains("mode 0700"), "{why}");
        }
        Ok(_) if !root => {}
        Err(e) => panic!("as root: {root}: {e}"),
        Ok(_) => panic!(
            "the engine started though its steps cannot reach {}",
            data.display()
        ),
    }
    // Searchable, the same directory is fine; the probe leaves nothing.
    fs::set_permissions(&closed, fs::Permissions::from_mode(0o711)).unwrap();
    LocalEngine::try_new(LocalConfig::new(&data)).expect("the engine starts");
    let left: Vec<_> = fs::read_dir(data.join("runs")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}
