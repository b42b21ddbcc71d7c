//! What the REST adapters (Airflow, KFP) share: the HTTP client and
//! retrying calls that failed for a passing reason (which the Tekton
//! tracker uses for the Kubernetes API too).

use crate::EngineError;
use reqwest::StatusCode;
use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

/// Tries of one API call, and the first pause between them (doubling).
const RETRIES: u32 = 5;
const RETRY_DELAY: Duration = Duration::from_millis(200);

/// A failed call to an engine's REST API.
#[derive(Debug)]
pub(crate) enum ApiError {
    /// The server answered with an error status.
    Status(StatusCode, String),
    /// No answer (connection refused, timeout) or an unreadable one.
    Transport(String),
}

impl ApiError {
    /// Whether trying again may help.
    pub(crate) fn transient(&self) -> bool {
        match self {
            ApiError::Status(status, _) => status.is_server_error(),
            ApiError::Transport(_) => true,
        }
    }

    /// What the failure means for `engine` (whose API is called `api` in
    /// messages): a server error or no answer is the engine being
    /// unavailable, any other status a refusal.
    pub(crate) fn for_engine(self, engine: &'static str, api: &str) -> EngineError {
        match self {
            ApiError::Status(status, body) if status.is_server_error() => {
                EngineError::Unavailable {
                    engine,
                    message: format!("{status}: {body}"),
                }
            }
            ApiError::Status(status, body) => {
                EngineError::Other(format!("the {api} API refused ({status}): {body}"))
            }
            ApiError::Transport(message) => EngineError::Unavailable { engine, message },
        }
    }
}

/// An HTTP client with Couler's user agent and bounded waits.
pub(crate) fn http_client() -> Result<reqwest::Client, EngineError> {
    // reqwest is built without a default TLS provider; pick ring once.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("couler/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| EngineError::Other(format!("cannot build the http client: {e}")))
}

/// Calls until the call succeeds, fails for good (`transient` says no) or
/// has been tried [`RETRIES`] times.
pub(crate) async fn retrying<T, E: Debug, F: Future<Output = Result<T, E>>>(
    mut call: impl FnMut() -> F,
    transient: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let mut delay = RETRY_DELAY;
    let mut tries = 1;
    loop {
        match call().await {
            Err(e) if tries < RETRIES && transient(&e) => {
                tracing::debug!(error = ?e, tries, "retrying an API call");
                tokio::time::sleep(delay).await;
                delay *= 2;
                tries += 1;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn retries_passing_failures_only() {
        let calls = AtomicU32::new(0);
        let second = retrying(
            || async {
                match calls.fetch_add(1, Ordering::Relaxed) {
                    0 => Err("busy"),
                    n => Ok(n),
                }
            },
            |_| true,
        )
        .await;
        assert_eq!(second, Ok(1));
        let calls = AtomicU32::new(0);
        let lasting = retrying(
            || async { Err::<(), _>(calls.fetch_add(1, Ordering::Relaxed)) },
            |_| false,
        )
        .await;
        assert_eq!((lasting, calls.load(Ordering::Relaxed)), (Err(0), 1));
    }
}
