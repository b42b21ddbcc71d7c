//! Not a stand-in: a real S3-compatible server, s3s-fs (crates.io, run by
//! `scripts/s3-server`, which installs it once), over a directory, so that
//! what Couler asks object stores is answered by an implementation of the
//! S3 API that checks its SigV4 signatures.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub const ACCESS_KEY: &str = "couler-test";
pub const SECRET_KEY: &str = "couler-test-secret";
/// Startup includes the one-time install of `scripts/s3-server`.
const START_LIMIT: Duration = Duration::from_secs(400);

/// A running server; stopped on drop.
pub struct S3Server {
    child: Child,
    port: u16,
    root: PathBuf,
    /// Removed on drop.
    temporary: bool,
}

impl S3Server {
    /// Serves `root` (each bucket a directory, each object a file below
    /// it) on a free port of 127.0.0.1, to clients signing with
    /// [`ACCESS_KEY`] and [`SECRET_KEY`].
    pub fn start(root: &Path) -> S3Server {
        std::fs::create_dir_all(root).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/s3-server");
        let child = Command::new(script)
            .arg(root)
            .arg(port.to_string())
            .args([ACCESS_KEY, SECRET_KEY])
            .spawn()
            .expect("scripts/s3-server starts");
        let mut server = S3Server {
            child,
            port,
            root: root.to_owned(),
            temporary: false,
        };
        let deadline = Instant::now() + START_LIMIT;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("scripts/s3-server exited: {status}");
            }
            assert!(Instant::now() < deadline, "no S3 server in {START_LIMIT:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// Serves a new directory of its own, removed on drop.
    pub fn in_temp_dir() -> S3Server {
        let root = std::env::temp_dir().join(format!("couler-s3-{}", crate::uuid_like()));
        let mut server = S3Server::start(&root);
        server.temporary = true;
        server
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Where the object `key` of `bucket` is on this machine.
    pub fn path(&self, bucket: &str, key: &str) -> PathBuf {
        self.root.join(bucket).join(key)
    }

    /// Writes an object behind its clients' backs.
    pub fn put(&self, bucket: &str, key: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path(bucket, key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}
