//! Public identifiers: a type prefix and a UUID (`run_0192…`), so an id
//! says what it names and one kind can never be passed for another.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// An id string that is not of the expected kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not a valid {kind} id (expected {prefix}_ followed by 32 hex digits)")]
pub struct InvalidId {
    pub kind: &'static str,
    pub prefix: &'static str,
    pub value: String,
}

macro_rules! public_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, sqlx::Type)]
        #[sqlx(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            pub const PREFIX: &'static str = $prefix;

            /// A new time-ordered id.
            pub fn new() -> Self {
                $name(Uuid::now_v7())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}_{}", $prefix, self.0.simple())
            }
        }

        impl FromStr for $name {
            type Err = InvalidId;
            fn from_str(s: &str) -> Result<Self, InvalidId> {
                let invalid = || InvalidId { kind: $kind, prefix: $prefix, value: s.to_owned() };
                let hex = s
                    .strip_prefix($prefix)
                    .and_then(|rest| rest.strip_prefix('_'))
                    .ok_or_else(invalid)?;
                if hex.len() != 32 {
                    return Err(invalid());
                }
                Uuid::try_parse(hex).map($name).map_err(|_| invalid())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .pattern(Some(concat!("^", $prefix, "_[0-9a-f]{32}$")))
                    .description(Some(concat!("A ", $kind, " id.")))
                    .examples([concat!($prefix, "_01936b2e9c4f7a3db2c8e4f5a6b7c8d9")])
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}

public_id!(
    /// A tenant.
    TenantId, "tnt", "tenant"
);
public_id!(
    /// A workflow (all of its versions).
    WorkflowId, "wf", "workflow"
);
public_id!(
    /// A run of a workflow version.
    RunId, "run", "run"
);
public_id!(
    /// An API key.
    ApiKeyId, "key", "API key"
);
public_id!(
    /// A natural-language generation and its drafts.
    GenerationId, "gen", "generation"
);
public_id!(
    /// A schedule of a workflow.
    ScheduleId, "sch", "schedule"
);
public_id!(
    /// A backfill of a schedule's past instants.
    BackfillId, "bf", "backfill"
);
public_id!(
    /// A webhook trigger of a workflow.
    TriggerId, "trg", "trigger"
);
public_id!(
    /// A user or service seen through a token.
    PrincipalId, "prn", "principal"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_reject_other_kinds() {
        let run = RunId::new();
        let text = run.to_string();
        assert!(text.starts_with("run_"));
        assert_eq!(text.parse::<RunId>().unwrap(), run);
        assert!(text.parse::<WorkflowId>().is_err());
        assert!("run_xyz".parse::<RunId>().is_err());
        assert!(format!("run_{}", "0".repeat(33)).parse::<RunId>().is_err());
    }
}
