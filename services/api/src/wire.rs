//! Wire types shared by several resources.

use crate::error::{ApiError, pointer};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// A request's query string as `T`. Unlike axum's `Query`, a bad or
/// repeated value is a problem with code `invalid_query` and the path of
/// the parameter (`/limit`), like every other bad input.
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let raw = parts.uri.query().unwrap_or_default();
        let pairs = form_urlencoded::parse(raw.as_bytes());
        if let Some((name, _)) = pairs
            .clone()
            .find(|(k, v)| k.contains('\0') || v.contains('\0'))
        {
            return Err(ApiError::nul(pointer([name.as_ref()])));
        }
        // No parameter takes a list: a repeated one is ambiguous, and
        // serde would blame the query as a whole.
        let mut seen = std::collections::HashSet::new();
        if let Some((name, _)) = pairs.clone().find(|(k, _)| !seen.insert(k.clone())) {
            return Err(ApiError::bad_request(
                "invalid_query",
                format!("`{name}` is given more than once"),
                pointer([name.as_ref()]),
            ));
        }
        serde_path_to_error::deserialize(serde_urlencoded::Deserializer::new(pairs))
            .map(Query)
            .map_err(|e| ApiError::at_path("invalid_query", e.path(), e.inner().to_string()))
    }
}

/// A field that may be given as null (clearing it): a whole number or
/// null; absent stays `None`.
pub fn whole_or_null<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<i32>>, D::Error> {
    couler_ir::scalar::whole::opt(d).map(Some)
}

/// A field that may be given as null (clearing it): absent stays `None`,
/// `null` is `Some(None)`.
pub fn double_option<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// A version number, when given: versions count from 1.
pub fn version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    counted_from_one(d, "a version number: versions")
}

/// A run attempt, when given: attempts count from 1.
pub fn run_attempt<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    counted_from_one(d, "a run attempt: attempts")
}

/// A whole number from 1, or nothing: from JSON (a number, or null) or a
/// query string (text), with the same words for a wrong value either way.
fn counted_from_one<'de, D: serde::Deserializer<'de>>(
    d: D,
    what: &'static str,
) -> Result<Option<i32>, D::Error> {
    struct CountedFromOne(&'static str);

    impl CountedFromOne {
        fn check<E: serde::de::Error>(
            &self,
            n: i64,
            shown: &dyn std::fmt::Display,
        ) -> Result<Option<i32>, E> {
            match i32::try_from(n) {
                Ok(n) if n >= 1 => Ok(Some(n)),
                _ => Err(E::custom(format!("{shown} is not {} count from 1", self.0))),
            }
        }
    }

    impl<'de> serde::de::Visitor<'de> for CountedFromOne {
        type Value = Option<i32>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "{} count from 1", self.0)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }

        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Self::Value, E> {
            self.check(n, &n)
        }

        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Self::Value, E> {
            self.check(i64::try_from(n).unwrap_or(i64::MAX), &n)
        }

        /// JSON Schema counts `3.0` as an integer, so the API does too.
        fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Self::Value, E> {
            if n.fract() == 0.0 && n.abs() < 1e15 {
                self.check(n as i64, &n)
            } else {
                Err(E::custom(format!("{n} is not {} count from 1", self.0)))
            }
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
            match text.trim().parse::<i64>() {
                Ok(n) => self.check(n, &format_args!("{text:?}")),
                Err(_) => Err(E::custom(format!(
                    "{text:?} is not {} count from 1",
                    self.0
                ))),
            }
        }
    }

    d.deserialize_option(CountedFromOne(what))
}

/// One page of a list, newest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct List<T> {
    pub items: Vec<T>,
    /// Pass as `cursor` to get the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// From a previous page's `next_cursor`.
    #[param(min_length = 1)]
    pub cursor: Option<String>,
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

impl PageQuery {
    pub fn limit(&self) -> crate::error::ApiResult<usize> {
        match self.limit {
            None => Ok(50),
            Some(n @ 1..=200) => Ok(n as usize),
            Some(_) => Err(crate::error::ApiError::bad_request(
                "invalid_limit",
                "limit must be between 1 and 200",
                "/limit",
            )),
        }
    }

    pub fn cursor(&self) -> crate::error::ApiResult<Option<couler_store::Cursor>> {
        match &self.cursor {
            None => Ok(None),
            Some(c) => couler_store::Cursor::decode(c).map(Some).ok_or_else(|| {
                crate::error::ApiError::bad_request(
                    "invalid_cursor",
                    "the cursor is not one this API issued",
                    "/cursor",
                )
            }),
        }
    }
}

/// Parses `key=value,key2=value2` label selectors.
pub fn parse_labels(
    selector: Option<&str>,
) -> crate::error::ApiResult<std::collections::BTreeMap<String, String>> {
    let mut labels = std::collections::BTreeMap::new();
    for pair in selector
        .unwrap_or_default()
        .split(',')
        .filter(|p| !p.trim().is_empty())
    {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            crate::error::ApiError::bad_request(
                "invalid_label_selector",
                format!("{pair:?} is not key=value"),
                "/label",
            )
        })?;
        labels.insert(k.trim().to_owned(), v.trim().to_owned());
    }
    Ok(labels)
}

/// Parses a typed id from a path segment, or 404 (ids of the wrong kind
/// name nothing).
pub fn path_id<T: std::str::FromStr>(raw: &str, what: &str) -> crate::error::ApiResult<T> {
    raw.parse()
        .map_err(|_| crate::error::ApiError::not_found(format!("{what} {raw:?}")))
}

#[cfg(test)]
mod tests {
    #[derive(Debug, serde::Deserialize)]
    struct V {
        #[serde(default, deserialize_with = "super::version")]
        version: Option<i32>,
    }

    fn read(json: &str) -> Result<Option<i32>, String> {
        serde_json::from_str::<V>(json)
            .map(|v| v.version)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn versions_are_whole_numbers_from_one_in_any_json_spelling() {
        assert_eq!(read(r#"{"version": 3}"#), Ok(Some(3)));
        assert_eq!(read(r#"{"version": 3.0}"#), Ok(Some(3)));
        assert_eq!(read(r#"{"version": null}"#), Ok(None));
        for bad in ["0", "2.5", "-1.0", "1e300", "3000000000"] {
            let err = read(&format!(r#"{{"version": {bad}}}"#)).unwrap_err();
            assert!(err.contains("count from 1"), "{bad}: {err}");
        }
    }
}
