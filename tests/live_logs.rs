//! Live logs through the real binaries on the local engine: a running
//! step's log read from offsets and followed (HTTP and `couler runs logs
//! --follow`) until the step ends, for its tenant only.

use couler_tests::*;
use reqwest::Method;
use serde_json::{Value, json};
use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(60);
const STORED: &str = "première ligne\nsecond line\n--- stderr ---\nwarn line\n";

/// Collects what a reader sends (until it ends) on a thread of its own.
struct Collected {
    chunks: mpsc::Receiver<String>,
    done: std::thread::JoinHandle<()>,
    text: String,
}

impl Collected {
    fn start(mut reader: impl Read + Send + 'static) -> Collected {
        let (tx, chunks) = mpsc::channel();
        let done = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                let _ = tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
            }
        });
        Collected {
            chunks,
            done,
            text: String::new(),
        }
    }

    /// Waits until the text received contains `needle`.
    fn wait_for(&mut self, needle: &str) {
        let deadline = Instant::now() + LIMIT;
        while !self.text.contains(needle) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.text.push_str(&chunk),
                Err(e) => panic!("{needle:?} did not arrive ({e}); got {:?}", self.text),
            }
        }
    }

    /// Waits for the end of the stream; all the text received.
    fn finish(mut self) -> String {
        let deadline = Instant::now() + LIMIT;
        while !self.done.is_finished() {
            assert!(
                Instant::now() < deadline,
                "the stream did not end: {:?}",
                self.text
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.text.extend(self.chunks.try_iter());
        self.text
    }
}

fn header<'a>(r: &'a reqwest::blocking::Response, name: &str) -> &'a str {
    r.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[test]
fn a_running_steps_log_is_read_from_offsets_and_followed_until_it_ends() {
    let couler = Couler::start();
    let (tenant, editor) = couler.tenant("acme");
    let (_, other) = couler.tenant("other");
    let viewer =
        couler_tests::token(json!({"sub": "v@acme", "tenant": tenant, "roles": ["viewer"]}));
    let token = editor;
    let _scheduler = couler.scheduler("live");
    let scratch = couler.scratch("live");
    let dir = scratch.path().display();
    // Prints a line, waits for the test to open the gate, prints more.
    let yaml = format!(
        "apiVersion: couler.dev/v1alpha1\nname: chatty\nsteps:\n  - name: talk\n    cache: {{policy: 'off'}}\n    container: {{image: alpine, command: [sh, -c, 'echo première ligne; while [ ! -e {dir}/go ]; do sleep 0.05; done; echo second line; echo warn line >&2']}}\n"
    );
    let run = couler.submit(&token, &yaml, json!({}));
    wait_until(LIMIT, || {
        step_statuses(&couler.run(&token, &run))
            .get("talk")
            .map(String::as_str)
            == Some("running")
    });

    // No deadline: a follow lasts as long as the step.
    let http = reqwest::blocking::Client::builder()
        .timeout(None)
        .build()
        .unwrap();
    let logs = |token: &str, query: &str| {
        http.get(format!(
            "{}/v1/runs/{run}/logs?step=talk{query}",
            couler.base
        ))
        .bearer_auth(token)
        .send()
        .unwrap()
    };
    // Another tenant can neither read nor follow the step.
    for query in ["", "&follow=true"] {
        let r = logs(&other, query);
        assert_eq!(r.status(), 404, "{query}");
        assert_eq!(header(&r, "content-type"), "application/problem+json");
    }

    // A viewer follows it over HTTP, the CLI too.
    let follow = logs(&viewer, "&follow=true");
    assert_eq!(follow.status(), 200);
    assert_eq!(header(&follow, "couler-log-complete"), "false");
    let mut http_follower = Collected::start(follow);
    let cli = std::process::Command::new(binary("couler"))
        .args(["runs", "logs", &run, "talk", "--follow"])
        .env("COULER_SERVER", &couler.base)
        .env("COULER_TOKEN", &token)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut cli = Proc(cli);
    let mut cli_follower = Collected::start(cli.0.stdout.take().unwrap());
    http_follower.wait_for("première ligne\n");
    cli_follower.wait_for("première ligne\n");
    // The gate is closed: the step cannot have ended.
    assert_eq!(step(&couler.run(&token, &run), "talk")["status"], "running");

    // Offsets return exactly the suffix while it runs.
    let whole = logs(&token, "");
    assert_eq!(header(&whole, "couler-log-complete"), "false");
    let end: u64 = header(&whole, "couler-log-offset").parse().unwrap();
    assert_eq!(whole.text().unwrap(), "première ligne\n");
    assert_eq!(end, "première ligne\n".len() as u64);
    let from3 = logs(&token, "&offset=3");
    assert_eq!(header(&from3, "couler-log-offset"), end.to_string());
    assert_eq!(from3.text().unwrap(), "première ligne\n"[3..]);
    let at_end = logs(&token, &format!("&offset={end}"));
    assert_eq!(at_end.status(), 200);
    assert_eq!(at_end.text().unwrap(), "");
    // Beyond the end, and inside `è` (bytes 5 and 6): problems at /offset.
    for offset in [end + 1, 6] {
        let (status, body) = couler.call(
            Method::GET,
            &format!("/v1/runs/{run}/logs?step=talk&offset={offset}"),
            &token,
            None,
        );
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["code"], "invalid_offset", "{body}");
        assert_eq!(body["path"], "/offset", "{body}");
    }

    std::fs::write(scratch.path().join("go"), "").unwrap();
    let followed = http_follower.finish();
    let run_now = couler.run(&token, &run);
    assert_eq!(step(&run_now, "talk")["status"], "succeeded", "{run_now:#}");
    let printed = cli_follower.finish();
    assert!(cli.0.wait().unwrap().success());

    // The stored log is as before: standard output, then standard error.
    let stored = logs(&token, "");
    assert_eq!(header(&stored, "couler-log-complete"), "true");
    assert_eq!(
        header(&stored, "couler-log-offset"),
        STORED.len().to_string()
    );
    assert_eq!(stored.text().unwrap(), STORED);
    let suffix = logs(&viewer, "&offset=16");
    assert_eq!(suffix.text().unwrap(), &STORED[16..]);
    // Followers saw the first line while the step ran, then the rest: the
    // stored log's rest, or (when the live order differed) all of it
    // after a marker.
    for text in [&followed, &printed] {
        assert!(text.starts_with("première ligne\n"), "{text:?}");
        let rest = &text["première ligne\n".len()..];
        let ok = text == STORED
            || rest.ends_with(&format!(
                "(standard output, then standard error) ---\n{STORED}"
            ));
        assert!(ok, "{text:?}");
    }
    // Following a finished step returns its log and ends.
    let (status, body) = couler.call(
        Method::GET,
        &format!("/v1/runs/{run}/logs?step=talk&follow=true"),
        &token,
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(body, Value::String(STORED.into()));
}

#[test]
fn a_follower_that_comes_before_the_run_starts_waits_for_its_step() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("early");
    let yaml = "apiVersion: couler.dev/v1alpha1\nname: early\nsteps:\n  - name: hello\n    cache: {policy: 'off'}\n    container: {image: alpine, command: [sh, -c, 'echo hello from the start']}\n";
    // No scheduler yet: the run stays queued.
    let run = couler.submit(&token, yaml, json!({}));
    assert_eq!(couler.run(&token, &run)["status"], "queued");
    // A step the run does not have is refused at once.
    let (status, body) = couler.call(
        Method::GET,
        &format!("/v1/runs/{run}/logs?step=nope&follow=true"),
        &token,
        None,
    );
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["path"], "/step", "{body}");
    let http = reqwest::blocking::Client::builder()
        .timeout(None)
        .build()
        .unwrap();
    let follow = http
        .get(format!(
            "{}/v1/runs/{run}/logs?step=hello&follow=true",
            couler.base
        ))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_eq!(follow.status(), 200);
    assert_eq!(header(&follow, "couler-log-complete"), "false");
    let follower = Collected::start(follow);
    let _scheduler = couler.scheduler("late");
    assert_eq!(follower.finish(), "hello from the start\n");
}
