//! Memory limits of step processes: the resident memory of a try's process
//! group, sampled from `/proc`, and the record of an out-of-memory kill.

use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often a try with a memory limit has its memory summed.
pub(super) const MEMORY_SAMPLE: Duration = Duration::from_millis(100);
/// Present once a try was killed for exceeding its memory limit: an [`Oom`].
pub(super) const OOM_FILE: &str = "oom";

/// An out-of-memory kill, as kept in a try's `oom` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Oom {
    /// Resident bytes of the group when it was caught.
    pub used: u64,
    /// The limit in bytes.
    pub limit: u64,
}

/// One memory sample of group `pgid`, off the runtime; over `limit`, the
/// kill is recorded in the try directory (the caller then kills).
pub(super) async fn over_limit(pgid: i32, limit: u64, dir: &Path) -> Option<Oom> {
    let dir = dir.to_owned();
    let check = move || {
        let used = group_resident_bytes(pgid);
        if used <= limit {
            return None;
        }
        let oom = Oom { used, limit };
        let record = serde_json::to_vec(&oom).expect("oom serializes");
        if let Err(e) = fs::write(dir.join(OOM_FILE), record) {
            tracing::warn!(dir = %dir.display(), error = %e, "could not record an out-of-memory kill");
        }
        Some(oom)
    };
    tokio::task::spawn_blocking(check).await.ok().flatten()
}

/// Resident bytes of every process in group `pgid` (0 without `/proc`).
pub(super) fn group_resident_bytes(pgid: i32) -> u64 {
    // SAFETY: sysconf only reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    let Ok(entries) = fs::read_dir("/proc") else {
        return 0;
    };
    let mut pages = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.as_encoded_bytes().iter().all(u8::is_ascii_digit) {
            continue;
        }
        let mut path = PathBuf::from("/proc");
        path.push(&name);
        path.push("stat");
        // Processes come and go while we read: a missing one counts 0.
        if let Ok(stat) = fs::read_to_string(&path)
            && let Some((group, resident)) = group_and_resident_pages(&stat)
            && group == pgid
        {
            pages += resident;
        }
    }
    pages * page
}

/// The process group (field 5) and resident pages (field 24) of a
/// `/proc/<pid>/stat` line.
fn group_and_resident_pages(stat: &str) -> Option<(i32, u64)> {
    // The command name (field 2) may hold spaces and parentheses.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let group = fields.nth(2)?.parse().ok()?;
    let resident = fields.nth(18)?.parse().ok()?;
    Some((group, resident))
}

pub(super) fn read_oom_file(dir: &Path) -> Option<Oom> {
    serde_json::from_slice(&fs::read(dir.join(OOM_FILE)).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_the_group_and_resident_pages() {
        let stat = "4242 (a) b (c)) S 1 777 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 12345 1000000 2500 18446744073709551615 1";
        assert_eq!(group_and_resident_pages(stat), Some((777, 2500)));
        assert_eq!(group_and_resident_pages("4242 (a) S 1 777"), None);
        // This test's own group holds at least this process's memory.
        let own = fs::read_to_string("/proc/self/stat").unwrap();
        let (group, pages) = group_and_resident_pages(&own).unwrap();
        // SAFETY: plain syscall.
        assert_eq!(group, unsafe { libc::getpgrp() });
        assert!(pages > 0);
        assert!(group_resident_bytes(group) >= pages * 4096);
    }
}
