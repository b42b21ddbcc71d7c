//! Run and step lifecycles as typed state machines. Every status change in
//! the store goes through [`RunStatus::transition`] or
//! [`StepStatus::transition`]; an illegal move is an error, never a silent
//! overwrite.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A status change the lifecycle does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {kind} cannot go from {from} to {to}")]
pub struct IllegalTransition {
    pub kind: &'static str,
    pub from: &'static str,
    pub to: &'static str,
}

macro_rules! status_enum {
    ($(#[$doc:meta])* $name:ident, $kind:literal { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, sqlx::Type, utoipa::ToSchema)]
        #[serde(rename_all = "lowercase")]
        #[sqlx(type_name = "text", rename_all = "lowercase")]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// Checks a move against the lifecycle.
            pub fn transition(self, to: $name) -> Result<$name, IllegalTransition> {
                if self.can_become(to) {
                    Ok(to)
                } else {
                    Err(IllegalTransition { kind: $kind, from: self.as_str(), to: to.as_str() })
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(format!("unknown {} status {other:?}", $kind)),
                }
            }
        }
    };
}

status_enum!(
    /// `queued → planning → running → succeeded | failed | cancelled`
    RunStatus, "run" {
        Queued => "queued",
        Planning => "planning",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Cancelled => "cancelled",
    }
);

status_enum!(
    /// `pending → running → succeeded | failed | skipped | cached | cancelled`
    StepStatus, "step" {
        Pending => "pending",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Skipped => "skipped",
        Cached => "cached",
        Cancelled => "cancelled",
    }
);

impl RunStatus {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RunStatus::Succeeded | RunStatus::Failed | RunStatus::Cancelled
        )
    }

    /// Whether a client may retry the run: only once it failed or was
    /// cancelled. The lifecycle also lets a planning run go back to
    /// `queued`, but only for a scheduler that loses its lease.
    pub fn is_retryable(self) -> bool {
        matches!(self, RunStatus::Failed | RunStatus::Cancelled)
    }

    fn can_become(self, to: RunStatus) -> bool {
        use RunStatus::*;
        matches!(
            (self, to),
            (Queued, Planning | Cancelled)
                // A planning scheduler that loses its lease hands the run back.
                | (Planning, Running | Failed | Cancelled | Queued)
                | (Running, Succeeded | Failed | Cancelled)
                // Retry from failure.
                | (Failed | Cancelled, Queued)
        )
    }
}

impl StepStatus {
    pub fn is_terminal(self) -> bool {
        !matches!(self, StepStatus::Pending | StepStatus::Running)
    }

    /// Whether a retry from failure keeps this step's result.
    pub fn is_kept_on_retry(self) -> bool {
        matches!(
            self,
            StepStatus::Succeeded | StepStatus::Skipped | StepStatus::Cached
        )
    }

    fn can_become(self, to: StepStatus) -> bool {
        use StepStatus::*;
        matches!(
            (self, to),
            (Pending, Running | Skipped | Cached | Cancelled | Failed)
                // Running → pending is a retry attempt after a transient failure.
                | (Running, Succeeded | Failed | Cancelled | Pending)
                | (Failed | Cancelled, Pending)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_follow_their_lifecycle() {
        use RunStatus::*;
        assert!(Queued.transition(Planning).is_ok());
        assert!(Planning.transition(Running).is_ok());
        assert!(Running.transition(Succeeded).is_ok());
        assert!(Failed.transition(Queued).is_ok());
        let err = Succeeded.transition(Running).unwrap_err();
        assert_eq!(err.to_string(), "a run cannot go from succeeded to running");
        assert!(Queued.transition(Succeeded).is_err());
        assert!(Succeeded.transition(Queued).is_err());
    }

    #[test]
    fn steps_follow_their_lifecycle() {
        use StepStatus::*;
        assert!(Pending.transition(Cached).is_ok());
        assert!(Running.transition(Pending).is_ok());
        assert!(Succeeded.transition(Pending).is_err());
        assert!(Cached.transition(Running).is_err());
        assert!(
            Succeeded.is_kept_on_retry() && Cached.is_kept_on_retry() && !Failed.is_kept_on_retry()
        );
    }

    #[test]
    fn text_round_trips() {
        for s in RunStatus::ALL {
            assert_eq!(s.as_str().parse::<RunStatus>().unwrap(), *s);
        }
        for s in StepStatus::ALL {
            assert_eq!(s.as_str().parse::<StepStatus>().unwrap(), *s);
        }
    }
}
