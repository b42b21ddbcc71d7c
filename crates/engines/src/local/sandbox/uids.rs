//! Tenant uids, kept on disk so that every engine on the machine agrees.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Mutex;

/// Tenant uids, allocated once and kept on disk under a lock, so that every
/// engine on the machine gives a tenant the same uid.
#[derive(Debug)]
pub(super) struct Uids {
    file: PathBuf,
    pub base: u32,
    known: Mutex<BTreeMap<String, u32>>,
}

impl Uids {
    pub(super) fn new(file: PathBuf, base: u32) -> Uids {
        Uids {
            file,
            base,
            known: Mutex::default(),
        }
    }

    pub(super) fn of(&self, tenant: &str) -> io::Result<u32> {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(uid) = known.get(tenant) {
            return Ok(*uid);
        }
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.file.with_extension("lock"))?;
        // SAFETY: flock on a descriptor we own; released when it closes.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut table: BTreeMap<String, u32> = match fs::read(&self.file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(io::Error::other)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(e),
        };
        let uid = match table.get(tenant) {
            Some(uid) => *uid,
            None => {
                let next = table.values().max().map_or(self.base, |m| m + 1);
                table.insert(tenant.to_owned(), next);
                let tmp = self.file.with_extension("tmp");
                fs::write(
                    &tmp,
                    serde_json::to_vec_pretty(&table).map_err(io::Error::other)?,
                )?;
                fs::rename(&tmp, &self.file)?;
                next
            }
        };
        *known = table;
        Ok(uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenants_keep_distinct_uids_across_engines() {
        let dir = std::env::temp_dir().join(format!("couler-uids-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("uids.json");
        let a = Uids::new(file.clone(), 1000);
        assert_eq!(a.of("tnt_a").unwrap(), 1000);
        assert_eq!(a.of("tnt_b").unwrap(), 1001);
        assert_eq!(a.of("tnt_a").unwrap(), 1000);
        // Another engine on the same data directory agrees and goes on.
        let b = Uids::new(file, 1000);
        assert_eq!(b.of("tnt_b").unwrap(), 1001);
        assert_eq!(b.of("tnt_c").unwrap(), 1002);
        assert_eq!(a.of("tnt_c").unwrap(), 1002);
        fs::remove_dir_all(&dir).unwrap();
    }
}
