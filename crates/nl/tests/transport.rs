//! Transport failures on real loopback sockets (no LLM needed): a closed
//! port is retried with backoff, a socket that never answers times out once.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use couler_nl::{ChatRequest, LlmClient, LlmConfig, LlmError};

fn client(port: u16, timeout_secs: u64, max_retries: u32) -> LlmClient {
    LlmClient::new(LlmConfig {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        timeout_secs,
        max_retries,
        ..LlmConfig::default()
    })
    .expect("valid config")
}

fn request() -> ChatRequest {
    ChatRequest {
        system: "s".into(),
        user: "u".into(),
        ..ChatRequest::default()
    }
}

fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

#[tokio::test]
async fn refused_connections_are_retried_with_backoff_then_unreachable() {
    let port = closed_port();

    let started = Instant::now();
    let error = client(port, 5, 0).chat(&request()).await.unwrap_err();
    let without_retries = started.elapsed();
    assert!(matches!(error, LlmError::Unreachable { .. }), "{error:?}");

    let started = Instant::now();
    let error = client(port, 5, 2).chat(&request()).await.unwrap_err();
    let with_retries = started.elapsed();
    assert!(matches!(error, LlmError::Unreachable { .. }), "{error:?}");
    assert!(error.to_string().contains(&port.to_string()), "{error}");

    // Two backoff steps wait at least 250 ms + 500 ms and at most 500 ms + 1 s.
    assert!(
        without_retries < Duration::from_millis(250),
        "{without_retries:?}"
    );
    assert!(
        with_retries >= Duration::from_millis(750) && with_retries < Duration::from_secs(5),
        "{with_retries:?}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_without_retries() {
    // Bound but never accepted: the kernel completes the handshake and
    // takes the request, and no answer ever comes.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().expect("local address").port();

    let started = Instant::now();
    let error = client(port, 1, 3).chat(&request()).await.unwrap_err();
    let took = started.elapsed();
    assert!(matches!(error, LlmError::Timeout { secs: 1 }), "{error:?}");
    // A retry would add at least another 250 ms of backoff and 1 s of timeout.
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(2000),
        "{took:?}"
    );
    drop(silent);
}
