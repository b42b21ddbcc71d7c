//! Looking keys up: the entries, the copies an engine reads where an entry
//! is stored elsewhere, and the records of what missed; and whether the
//! artifacts of what is found are still in their store.

use super::{CacheIndex, Cached, Found, Record, load};
use crate::key::CacheKey;
use couler_optimizer::StepOutputs;
use std::sync::Arc;

/// Raw replies of one `MGET` or `HMGET`.
type Payloads = Vec<Option<Vec<u8>>>;

impl CacheIndex {
    /// Looks `keys` up for an engine that reads artifacts from `reads`
    /// (`couler_engines::reads_artifacts_from`): the entries in one
    /// pipelined round trip, then, only when some are needed, in a second
    /// one the records of keys that missed and the copies in a store of
    /// `reads` of entries stored elsewhere.
    ///
    /// An entry stored elsewhere, or gone from its store, is handed out as
    /// its copy when there is one still in a store of `reads` (a copy that
    /// is gone is dropped); else one stored elsewhere is handed out as it
    /// is, for the plan to weigh. An entry whose artifacts are gone is
    /// removed, a copy of it taking its place if it has one; its record
    /// stays.
    pub async fn lookup(&self, keys: &[CacheKey], reads: &[&str]) -> Vec<Found> {
        if keys.is_empty() {
            return Vec::new();
        }
        let mut mget = redis::cmd("MGET");
        mget.arg(self.entry_names(keys));
        let found: Option<Payloads> = self
            .call("lookup", async |mut c| mget.query_async(&mut c).await)
            .await;
        let Some(found) = found else {
            return vec![Found::Nothing; keys.len()];
        };
        let entries: Vec<Option<Cached>> = found
            .into_iter()
            .map(|raw| raw.and_then(|r| load(&r)))
            .collect();
        let outputs: Vec<_> = entries
            .iter()
            .map(|e| e.as_ref().map(|e| &e.outputs))
            .collect();
        let there = self.artifacts_there(&outputs).await;
        // Records for what may miss: no entry, or one whose artifacts are
        // gone (it may still have a copy).
        let want_records: Vec<usize> = (0..keys.len()).filter(|&i| !there[i]).collect();
        // Copies for entries stored elsewhere, or gone from their store.
        let want_copies: Vec<usize> = (0..keys.len())
            .filter(|&i| {
                entries[i].as_ref().is_some_and(|e| {
                    !reads.is_empty() && (!there[i] || !readable(&e.outputs, reads))
                })
            })
            .collect();
        let (mut records, mut copies) = self
            .records_and_copies(keys, &want_records, &want_copies, reads)
            .await;
        // Copies are fetched only for `want_copies`: none on an all-hit pass.
        let copy_there = match want_copies.is_empty() {
            true => Vec::new(),
            false => {
                let outputs: Vec<_> = copies
                    .iter()
                    .map(|c| c.as_ref().map(|c| &c.outputs))
                    .collect();
                self.artifacts_there(&outputs).await
            }
        };

        let mut out = Vec::with_capacity(keys.len());
        // Each with the store it was seen in: what another lookup has
        // replaced since is left be.
        let (mut stale, mut gone_copies) = (Vec::new(), Vec::new());
        for (i, entry) in entries.into_iter().enumerate() {
            if let Some(entry) = entry.as_ref().filter(|_| !there[i]) {
                stale.push((keys[i], store_of(&entry.outputs).to_owned()));
            }
            if let Some(copy) = copies[i].take() {
                if copy_there[i] {
                    out.push(Found::Entry(Box::new(copy)));
                    continue;
                }
                gone_copies.push((keys[i], store_of(&copy.outputs).to_owned()));
            }
            out.push(match entry {
                Some(entry) if there[i] => Found::Entry(Box::new(entry)),
                _ => records[i]
                    .take()
                    .map_or(Found::Nothing, |r| Found::Record(Box::new(r))),
            });
        }
        if !gone_copies.is_empty() {
            tracing::info!(
                copies = gone_copies.len(),
                "removing cache copies whose artifacts are gone"
            );
            self.seen_gone(&self.drop_copies, gone_copies).await;
        }
        if !stale.is_empty() {
            tracing::info!(
                entries = stale.len(),
                "removing cache entries whose artifacts are gone"
            );
            self.seen_gone(&self.gone, stale).await;
        }
        out
    }

    /// For each of `outputs`, whether all its artifacts are still in their
    /// store (false for `None`).
    async fn artifacts_there(&self, outputs: &[Option<&StepOutputs>]) -> Vec<bool> {
        let (owners, locations): (Vec<usize>, Vec<&str>) = outputs
            .iter()
            .enumerate()
            .flat_map(|(i, o)| {
                o.iter()
                    .flat_map(move |o| o.artifacts.values().map(move |a| (i, a.location.as_str())))
            })
            .unzip();
        let mut there: Vec<bool> = outputs.iter().map(Option::is_some).collect();
        for (i, exists) in owners.into_iter().zip(self.stores.exist(&locations).await) {
            there[i] &= exists;
        }
        there
    }

    /// [`lookup`](Self::lookup) on a task of its own, so the caller can
    /// compute the next keys while Redis answers and the entries are
    /// decoded.
    pub fn lookup_in_background(
        &self,
        keys: Arc<[CacheKey]>,
        reads: &'static [&'static str],
    ) -> impl Future<Output = Vec<Found>> + use<> {
        let index = self.clone();
        let n = keys.len();
        let task = tokio::spawn(async move { index.lookup(&keys, reads).await });
        async move {
            task.await.unwrap_or_else(|e| {
                // Only a panic gets here: misses, as when Redis is away.
                tracing::error!(error = %e, "a cache lookup failed");
                vec![Found::Nothing; n]
            })
        }
    }

    /// The records of the keys at `records` and the first copy of those at
    /// `copies` in a store of `reads`, in one round trip (none when neither
    /// is wanted); indexed like `keys`.
    async fn records_and_copies(
        &self,
        keys: &[CacheKey],
        records: &[usize],
        copies: &[usize],
        reads: &[&str],
    ) -> (Vec<Option<Record>>, Vec<Option<Cached>>) {
        let mut found_records = vec![None; keys.len()];
        let mut found_copies = vec![None; keys.len()];
        if records.is_empty() && copies.is_empty() {
            return (found_records, found_copies);
        }
        let record_names: Vec<String> = records
            .iter()
            .map(|&i| self.k(&format!("r:{}", keys[i])))
            .collect();
        let replies: Option<Vec<Payloads>> = self
            .call("records", async |mut c| {
                let mut p = redis::pipe();
                if !record_names.is_empty() {
                    p.cmd("MGET").arg(&record_names);
                }
                for &i in copies {
                    p.cmd("HMGET")
                        .arg(self.k(&format!("c:{}", keys[i])))
                        .arg(reads);
                }
                p.query_async(&mut c).await
            })
            .await;
        let mut replies = replies.unwrap_or_default().into_iter();
        if !record_names.is_empty() {
            for (&i, raw) in records.iter().zip(replies.next().unwrap_or_default()) {
                found_records[i] = raw.and_then(|r| load(&r));
            }
        }
        for (&i, payloads) in copies.iter().zip(replies) {
            found_copies[i] = payloads
                .into_iter()
                .flatten()
                .filter_map(|raw| load::<Cached>(&raw))
                .find(|copy| readable(&copy.outputs, reads));
        }
        (found_records, found_copies)
    }

    /// Runs `script` ([`GONE`](super::scripts::GONE) or
    /// [`DROP_COPIES`](super::scripts::DROP_COPIES)) over keys and the
    /// stores their artifacts were seen gone from, each key once.
    async fn seen_gone(&self, script: &redis::Script, mut seen: Vec<(CacheKey, String)>) {
        seen.sort();
        seen.dedup_by(|a, b| a.0 == b.0);
        let _: Option<u64> = self
            .call("remove", async |mut c| {
                let mut inv = script.prepare_invoke();
                inv.arg(self.k(""));
                for (key, store) in &seen {
                    inv.arg(key).arg(store);
                }
                inv.invoke_async(&mut c).await
            })
            .await;
    }
}

/// The store an entry's artifacts are in: the scheme of the first one's
/// location (`s3://`, `file://`), as engines name what they read; empty
/// without artifacts.
pub(super) fn store_of(outputs: &StepOutputs) -> &str {
    outputs.artifacts.values().next().map_or("", |a| {
        a.location
            .find("://")
            .map_or("", |at| &a.location[..at + 3])
    })
}

/// Whether an engine that reads artifacts from the locations under
/// `reads` (`couler_engines::reads_artifacts_from`) can read every
/// artifact of `outputs`.
pub fn readable(outputs: &StepOutputs, reads: &[&str]) -> bool {
    outputs
        .artifacts
        .values()
        .all(|a| reads.iter().any(|prefix| a.location.starts_with(prefix)))
}
