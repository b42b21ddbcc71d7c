//! A running step's log as it grows: byte positions into the try's
//! standard output and standard error files, read at every call, so the
//! live text is append-only (the two streams interleave at the reader's
//! pace, as `kubectl logs` shows them). The log stored when the step ends
//! is the engine's usual one (standard output, then standard error), so
//! its order can differ from the live view.

use super::process::{STDERR_FILE, STDOUT_FILE};
use crate::LogCursor;
use crate::live_log::decode_prefix;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The most one read takes of each stream; the rest comes with the next.
const READ_LIMIT: u64 = 1 << 20;

/// What is new in step instance `instance`'s try `cursor.attempt` (the
/// latest when 0, then pinned) since `cursor`.
pub(super) fn read_new(instance: &Path, cursor: &mut LogCursor) -> io::Result<String> {
    if cursor.attempt == 0 {
        let latest = fs::read_dir(instance)
            .ok()
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .max();
        match latest {
            Some(n) => cursor.attempt = n,
            None => return Ok(String::new()),
        }
    }
    let dir = instance.join(cursor.attempt.to_string());
    cursor.positions.resize(2, 0);
    let mut text = String::new();
    for (i, name) in [STDOUT_FILE, STDERR_FILE].into_iter().enumerate() {
        let mut file = match File::open(dir.join(name)) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        file.seek(SeekFrom::Start(cursor.positions[i]))?;
        let mut bytes = Vec::new();
        file.take(READ_LIMIT).read_to_end(&mut bytes)?;
        let (new, used) = decode_prefix(&bytes);
        cursor.positions[i] += used as u64;
        text.push_str(&new);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_live_log_only_grows_across_stdout_and_stderr() {
        let instance = std::env::temp_dir().join(format!("couler-live-{}", std::process::id()));
        let _ = fs::remove_dir_all(&instance);
        let first = instance.join("1");
        fs::create_dir_all(&first).unwrap();
        let append = |dir: &Path, name: &str, bytes: &[u8]| {
            let mut f = fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join(name))
                .unwrap();
            f.write_all(bytes).unwrap();
        };
        let mut cursor = LogCursor::new(0);
        let mut seen = String::new();
        let mut read = |cursor: &mut LogCursor| {
            let new = read_new(&instance, cursor).unwrap();
            seen.push_str(&new);
            new
        };
        assert_eq!(read(&mut cursor), "", "no files yet");
        append(&first, STDOUT_FILE, b"out 1\n");
        assert_eq!(read(&mut cursor), "out 1\n");
        append(&first, STDERR_FILE, b"err 1\n");
        assert_eq!(read(&mut cursor), "err 1\n");
        // Standard output grows after standard error did: appended, not
        // inserted before it.
        append(&first, STDOUT_FILE, b"out 2\n");
        let e = "é".as_bytes();
        append(&first, STDERR_FILE, &[b'x', e[0]]);
        assert_eq!(read(&mut cursor), "out 2\nx", "a cut character waits");
        append(&first, STDERR_FILE, &[e[1], b'\n']);
        assert_eq!(read(&mut cursor), "é\n");
        assert_eq!(read(&mut cursor), "");
        // A later try does not move a cursor pinned to the first.
        let second = instance.join("2");
        fs::create_dir_all(&second).unwrap();
        append(&second, STDOUT_FILE, b"try 2\n");
        assert_eq!(cursor.attempt, 1);
        assert_eq!(read(&mut cursor), "");
        let mut next = LogCursor::new(2);
        assert_eq!(read(&mut next), "try 2\n");
        let _ = fs::remove_dir_all(&instance);
        assert_eq!(seen, "out 1\nerr 1\nout 2\nxé\ntry 2\n");
    }
}
