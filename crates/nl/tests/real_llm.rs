//! The chat client against a real llama.cpp server serving
//! SmolLM2-135M-Instruct, set up and started by `scripts/llm-server`.
//! With `COULER_SKIP_REAL_LLM=1` the test says it was skipped; otherwise a
//! server that cannot be set up fails it. Besides the protocol, it drives
//! the generator's whole loop (outline → plan → validate → repair →
//! critique, or the offline fallback) against the real model.

use std::fs::{self, File};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use couler_nl::eval;
use couler_nl::generate::{Author, Draft, GenerateConfig, Generator, Request};
use couler_nl::library::Library;
use couler_nl::safety::ImagePolicy;
use couler_nl::{ChatRequest, LlmClient, LlmConfig, LlmError};
use secrecy::SecretString;
use serde_json::{Value, json};

const SKIP_VAR: &str = "COULER_SKIP_REAL_LLM";
const READY_WITHIN: Duration = Duration::from_secs(60);

#[tokio::test]
async fn real_llama_cpp_server() {
    if std::env::var(SKIP_VAR).as_deref() == Ok("1") {
        eprintln!("real_llama_cpp_server: skipped ({SKIP_VAR}=1)");
        return;
    }
    set_up().await;
    let mut server = Server::spawn();
    retries_until_the_server_listens(&mut server).await;
    answers_json_matching_a_schema(&server).await;
    wrong_path_fails_once_without_retries(&server).await;
    generates_and_revises_valid_drafts(&server).await;
    scores_the_llm_path_like_table_ii(&server).await;
}

/// `couler nl-eval --llm`'s protocol on a few dev cases: one draft per
/// case, checked like the offline planner's, with pass@1, repair rounds,
/// calls and tokens (the Couler paper's Table II). A 135M model is not
/// expected to pass; the numbers must be there.
async fn scores_the_llm_path_like_table_ii(server: &Server) {
    let generator = Generator::new(
        Some(client(&server.base_url(), 1, None)),
        GenerateConfig {
            max_rounds: 1,
            max_completion_tokens: 384,
            write_steps: false,
            ..GenerateConfig::default()
        },
    );
    let dev = include_str!("../../../tests/nl/dev.yaml");
    let picked: Vec<eval::Case> = eval::load_cases(dev)
        .expect("the dev set parses")
        .into_iter()
        .filter(|c| {
            ["dev-tut-xgb-no-implicit-load", "dev-tut-letters-brief"].contains(&c.name.as_str())
        })
        .collect();
    assert_eq!(picked.len(), 2, "the dev cases this test scores are there");
    let started = Instant::now();
    let report = eval::llm::run(
        &generator,
        &Library::builtin(),
        &picked,
        eval::Checks::default(),
    )
    .await;
    eprintln!(
        "Table II on {} dev cases (SmolLM2-135M, {:.1?}):\n{}\n{}",
        picked.len(),
        started.elapsed(),
        report.table(),
        report.served().summary()
    );
    assert_eq!(report.cases.len(), picked.len());
    for case in &report.cases {
        assert!(case.stats.calls >= 1, "{case:?}");
        assert!(case.usage.total() > 0, "no tokens counted: {case:?}");
    }
    assert!(report.table().contains("pass@1: "), "{}", report.table());
}

/// A 135M model writes poor plans: the draft may come from the LLM or from
/// the offline fallback, but it is valid IR either way, and the LLM's
/// tokens are counted because it was asked.
async fn generates_and_revises_valid_drafts(server: &Server) {
    let generator = Generator::new(
        Some(client(&server.base_url(), 1, None)),
        GenerateConfig {
            max_rounds: 1,
            max_completion_tokens: 384,
            ..GenerateConfig::default()
        },
    );
    let (library, images) = (Library::builtin(), ImagePolicy::default());
    let request = Request {
        description: "Load the data from https://example.com/sales.csv, then train an xgboost \
                      model, then evaluate it.",
        library: &library,
        images: &images,
        name: None,
        tokens_left: None,
    };
    let started = Instant::now();
    let draft = generator
        .generate(&request)
        .await
        .unwrap_or_else(|e| panic!("no draft: {e}\n{}", server.log_tail()));
    check_draft("generate", &draft, started.elapsed());
    let calls = server.log().matches("\"POST /v1/chat/completions ").count();
    assert!(calls >= 2, "the generator asked the llm {calls} times");

    let started = Instant::now();
    let revised = generator
        .revise(&request, &draft, "use 4 GPUs for training")
        .await
        .unwrap_or_else(|e| panic!("no revision: {e}\n{}", server.log_tail()));
    check_draft("revise", &revised, started.elapsed());
}

fn check_draft(what: &str, draft: &Draft, took: Duration) {
    if let Err(problems) = couler_ir::validate(&draft.workflow, &couler_ir::Limits::default()) {
        panic!("{what}: the draft is not valid IR: {problems:?}");
    }
    assert!(!draft.workflow.steps.is_empty(), "{what}: no steps");
    assert!(
        draft.usage.total() > 0,
        "{what}: no tokens counted: {draft:?}"
    );
    match &draft.author {
        Author::Llm { model } => {
            assert_eq!(model, "smollm2");
            assert!(
                draft.score.is_some(),
                "{what}: an llm draft without a score"
            );
            // The LLM was asked to write every step: each one says it did,
            // or a warning says which kept its template and why.
            let written = draft
                .explanations
                .iter()
                .filter(|e| e.why.contains("The LLM wrote the step"))
                .count();
            let kept = draft
                .warnings
                .iter()
                .any(|w| w.message.contains("library template"));
            assert!(
                written == draft.explanations.len() || kept,
                "{what}: the steps were not written: {draft:?}"
            );
            eprintln!(
                "{what}: the LLM wrote {written} of {} steps",
                draft.explanations.len()
            );
        }
        Author::Offline { reason } => {
            assert!(
                reason.as_deref().is_some_and(|r| !r.is_empty()),
                "{what}: no reason"
            );
        }
    }
    let steps: Vec<&str> = draft
        .workflow
        .steps
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    eprintln!(
        "{what} in {took:.1?}: author {:?}, score {:?}, {} tokens, steps {steps:?}",
        draft.author,
        draft.score,
        draft.usage.total()
    );
}

/// Nothing listens when the client starts (the server's Python takes well
/// over a second to come up), so its first attempts are refused: only its
/// retries on connection errors can get the answer.
async fn retries_until_the_server_listens(server: &mut Server) {
    assert!(
        TcpStream::connect(("127.0.0.1", server.port)).is_err(),
        "port {} answered before the server could have started",
        server.port
    );
    // Enough retries for the backoff to outlast the readiness deadline.
    let client = client(&server.base_url(), 10, None);
    let request = ChatRequest {
        system: "You are a helpful assistant.".into(),
        user: "Say hello.".into(),
        max_tokens: Some(8),
        temperature: Some(0.0),
        ..ChatRequest::default()
    };
    let started = Instant::now();
    let (answer, ready_after) = tokio::join!(client.chat(&request), server.wait_ready());
    let answer =
        answer.unwrap_or_else(|e| panic!("no answer despite retries: {e}\n{}", server.log_tail()));
    assert!(
        answer.prompt_tokens > 0 && answer.completion_tokens > 0,
        "{answer:?}"
    );
    eprintln!(
        "server ready after {ready_after:.1?}; first answer (reached by retrying) after {:.1?}: {:?}",
        started.elapsed(),
        answer.content
    );
}

async fn answers_json_matching_a_schema(server: &Server) {
    let schema = json!({
        "type": "object",
        "properties": {
            "learning_rate": {"type": "number"},
            "batch_size": {"type": "integer"},
            "optimizer": {"type": "string", "enum": ["adam", "sgd"]},
        },
        "required": ["learning_rate", "batch_size", "optimizer"],
        "additionalProperties": false,
    });
    // llama.cpp ignores the key when started without one; sending it checks
    // the authenticated request path end to end.
    let client = client(&server.base_url(), 3, Some("sk-secret-123"));
    let request = ChatRequest {
        system: "You propose hyperparameters for training a small image classifier. \
                 Answer with one JSON object."
            .into(),
        user: "Propose learning_rate, batch_size and optimizer for the next trial.".into(),
        json_schema: Some(schema.clone()),
        max_tokens: Some(128),
        temperature: Some(0.0),
    };
    let started = Instant::now();
    let answer = client
        .chat(&request)
        .await
        .unwrap_or_else(|e| panic!("chat with a schema failed: {e}\n{}", server.log_tail()));
    let took = started.elapsed();
    let value: Value = serde_json::from_str(&answer.content)
        .unwrap_or_else(|e| panic!("the answer is not JSON ({e}): {:?}", answer.content));
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let problems: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(
        problems.is_empty(),
        "{value} does not match the schema: {problems:?}"
    );
    assert!(
        answer.prompt_tokens > 0 && answer.completion_tokens > 0,
        "{answer:?}"
    );
    eprintln!(
        "json answer in {took:.1?} ({} prompt + {} completion tokens): {value}",
        answer.prompt_tokens, answer.completion_tokens
    );
}

/// A 404 is final: one request reaches the server (its access log says so),
/// no retries and no schema-less second try.
async fn wrong_path_fails_once_without_retries(server: &Server) {
    let client = client(&format!("{}/nope", server.base_url()), 3, None);
    let request = ChatRequest {
        system: "s".into(),
        user: "u".into(),
        json_schema: Some(json!({"type": "object"})),
        ..ChatRequest::default()
    };
    let started = Instant::now();
    let error = client
        .chat(&request)
        .await
        .expect_err("the path does not exist");
    let took = started.elapsed();
    let LlmError::Status { code, body } = &error else {
        panic!("expected a status error, got {error:?}");
    };
    assert_eq!(*code, 404, "{error}");
    assert!(body.contains("Not Found"), "{body:?}");

    let line = "\"POST /v1/nope/chat/completions ";
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = server.log().matches(line).count();
    while seen == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        seen = server.log().matches(line).count();
    }
    assert_eq!(
        seen,
        1,
        "requests to the wrong path:\n{}",
        server.log_tail()
    );
    eprintln!("404 returned after one request in {took:.1?}");
}

fn client(base_url: &str, max_retries: u32, api_key: Option<&str>) -> LlmClient {
    LlmClient::new(LlmConfig {
        base_url: base_url.into(),
        model: "smollm2".into(),
        api_key: api_key.map(SecretString::from),
        // Two shared cores and other builds: a grammar-constrained answer
        // has taken over 15 s.
        timeout_secs: 180,
        max_retries,
    })
    .expect("valid config")
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llm-server")
}

async fn set_up() {
    let started = Instant::now();
    let output = tokio::process::Command::new(script())
        .arg("--setup-only")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("cannot run scripts/llm-server: {e}"));
    assert!(
        output.status.success(),
        "scripts/llm-server --setup-only failed ({}): the real LLM test needs python3 with venv \
         and network access to PyPI (or an already filled .tools/llm/). \
         Set {SKIP_VAR}=1 to skip it.\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("llm server set up in {:.1?}", started.elapsed());
}

/// `scripts/llm-server` on a free port, in its own process group, which is
/// killed when this is dropped (also when a test step panics).
struct Server {
    child: Child,
    port: u16,
    log_path: PathBuf,
}

impl Server {
    fn spawn() -> Server {
        let port = free_port();
        let log_path =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("llm-server-{port}.log"));
        let log = File::create(&log_path).expect("create the server log");
        let child = Command::new(script())
            .env("PORT", port.to_string())
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone the log handle"))
            .stderr(log)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start scripts/llm-server: {e}"));
        Server {
            child,
            port,
            log_path,
        }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        format!("--- {} (tail) ---\n{tail}", self.log_path.display())
    }

    /// Polls `GET /v1/models` until it answers 200; fails if the server
    /// exits or is not ready within [`READY_WITHIN`].
    async fn wait_ready(&mut self) -> Duration {
        let started = Instant::now();
        let http = reqwest::Client::new();
        let url = format!("{}/models", self.base_url());
        loop {
            if let Some(status) = self.child.try_wait().expect("poll the server") {
                panic!(
                    "the llm server exited ({status}) before it was ready\n{}",
                    self.log_tail()
                );
            }
            let ready = http
                .get(&url)
                .timeout(Duration::from_secs(2))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if ready {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < READY_WITHIN,
                "the llm server was not ready within {READY_WITHIN:?}\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let group = self.child.id() as libc::pid_t;
        // SAFETY: signals the process group this struct started and owns.
        unsafe { libc::killpg(group, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above.
        unsafe { libc::killpg(group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}
