//! Failure classification (Couler paper, App. B): transient infrastructure
//! failures are worth retrying; a step's own error usually is not.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Quota exceeded, throttling, a lost node, an image pull back-off, an
    /// out-of-memory kill: the infrastructure, not the step's code.
    Transient,
    /// The step itself failed (non-zero exit, bad command).
    User,
    /// The step ran past its timeout.
    Timeout,
}

/// Classifies an engine's failure message (and, for processes, how the
/// process ended).
pub fn classify(message: &str, killed_by_signal: Option<i32>) -> FailureKind {
    const TRANSIENT: &[&str] = &[
        "exceeded quota",
        "quota exceeded",
        "too many requests",
        "429",
        "node lost",
        "nodelost",
        "node was lost",
        "imagepullbackoff",
        "errimagepull",
        "image pull back-off",
        "oomkilled",
        "out of memory",
        "evicted",
        "connection reset",
        "temporarily unavailable",
    ];
    let lower = message.to_ascii_lowercase();
    if lower.contains("timed out") || lower.contains("deadline exceeded") {
        return FailureKind::Timeout;
    }
    // SIGKILL from outside the step is how the kernel's OOM killer ends it.
    if killed_by_signal == Some(9) || TRANSIENT.iter().any(|p| lower.contains(p)) {
        return FailureKind::Transient;
    }
    FailureKind::User
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infrastructure_failures_are_transient() {
        for m in [
            "pods \"x\" is forbidden: exceeded quota: compute",
            "Back-off pulling image: ImagePullBackOff",
            "OOMKilled",
            "429 Too Many Requests",
            "node lost",
        ] {
            assert_eq!(classify(m, None), FailureKind::Transient, "{m}");
        }
        assert_eq!(classify("", Some(9)), FailureKind::Transient);
    }

    #[test]
    fn the_local_engines_memory_kills_are_transient() {
        let message = "OOMKilled: the step used 212 MiB, over its memory limit of 64 MiB";
        assert_eq!(classify(message, None), FailureKind::Transient);
    }

    #[test]
    fn step_errors_are_the_users() {
        assert_eq!(classify("exit status 1", None), FailureKind::User);
        assert_eq!(
            classify("step timed out after 5s", Some(9)),
            FailureKind::Timeout
        );
    }
}
