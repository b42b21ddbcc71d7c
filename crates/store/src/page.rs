//! Keyset pagination: pages ordered by `(created_at DESC, id DESC)`, so
//! rows inserted while a client pages never shift or repeat a page.

use base64::Engine as _;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Where the next page starts: just after this row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: DateTime<Utc>,
    pub id: Uuid,
}

impl Cursor {
    /// Opaque text for clients.
    pub fn encode(&self) -> String {
        let raw = format!(
            "{}|{}",
            self.created_at.timestamp_micros(),
            self.id.simple()
        );
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
    }

    pub fn decode(text: &str) -> Option<Cursor> {
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text)
            .ok()?;
        let raw = String::from_utf8(raw).ok()?;
        let (micros, id) = raw.split_once('|')?;
        Some(Cursor {
            created_at: DateTime::from_timestamp_micros(micros.parse().ok()?)?,
            id: Uuid::try_parse(id).ok()?,
        })
    }
}

/// One page of rows and the cursor of the next, if there is one.
#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<Cursor>,
}

impl<T> Page<T> {
    /// Builds a page from `limit + 1` fetched rows.
    pub fn from_rows(mut rows: Vec<T>, limit: usize, key: impl Fn(&T) -> Cursor) -> Page<T> {
        let next = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(key)
        } else {
            None
        };
        Page { items: rows, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let c = Cursor {
            created_at: DateTime::from_timestamp_micros(1_764_000_000_123_456).unwrap(),
            id: Uuid::now_v7(),
        };
        assert_eq!(Cursor::decode(&c.encode()), Some(c));
        assert_eq!(Cursor::decode("not a cursor"), None);
        assert_eq!(Cursor::decode(""), None);
    }
}
