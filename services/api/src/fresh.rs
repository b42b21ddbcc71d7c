//! Values read from the database and kept for a while. Past its time an
//! entry is reloaded by one caller while the others go on with the last
//! value, so an expiry under load costs one query, not one per request in
//! flight.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a reload may take before another caller tries again (a reload
/// whose request was dropped never reports back).
const RELOAD_GIVE_UP: Duration = Duration::from_secs(10);

pub struct Fresh<K, V> {
    ttl: Duration,
    entries: Mutex<HashMap<K, Slot<V>>>,
    /// Counts [`Fresh::forget`] calls (for any key): a load that began
    /// before one may have read what the forget was meant to drop, so it
    /// is returned but not kept.
    forgotten: AtomicU64,
}

struct Slot<V> {
    value: V,
    at: Instant,
    reloading_since: Option<Instant>,
}

impl<K: Eq + Hash, V: Clone> Fresh<K, V> {
    pub fn new(ttl: Duration) -> Fresh<K, V> {
        Fresh {
            ttl,
            entries: Mutex::new(HashMap::new()),
            forgotten: AtomicU64::new(0),
        }
    }

    /// The value of `key`: the kept one while it is fresh or another caller
    /// reloads it, else what `load` reads (`None`: there is none, and none
    /// is kept). Callers that find no entry at all each load.
    pub async fn get<Q, E, F>(&self, key: &Q, load: F) -> Result<Option<V>, E>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
        F: AsyncFnOnce() -> Result<Option<V>, E>,
    {
        let generation = {
            let mut entries = self.entries.lock().expect("fresh lock");
            if let Some(slot) = entries.get_mut(key) {
                let reloading = slot
                    .reloading_since
                    .is_some_and(|since| since.elapsed() < RELOAD_GIVE_UP);
                if reloading || slot.at.elapsed() < self.ttl {
                    return Ok(Some(slot.value.clone()));
                }
                slot.reloading_since = Some(Instant::now());
            }
            self.forgotten.load(Ordering::SeqCst)
        };
        let loaded = load().await;
        let mut entries = self.entries.lock().expect("fresh lock");
        let stale = self.forgotten.load(Ordering::SeqCst) != generation;
        match &loaded {
            Ok(Some(value)) if !stale => {
                entries.insert(
                    key.to_owned(),
                    Slot {
                        value: value.clone(),
                        at: Instant::now(),
                        reloading_since: None,
                    },
                );
            }
            Ok(_) => {
                entries.remove(key);
            }
            Err(_) => {
                if let Some(slot) = entries.get_mut(key) {
                    slot.reloading_since = None;
                }
            }
        }
        loaded
    }

    /// Changes the kept value of `key`, if there is one.
    pub fn update(&self, key: &K, change: impl FnOnce(&mut V)) {
        if let Some(slot) = self.entries.lock().expect("fresh lock").get_mut(key) {
            change(&mut slot.value);
        }
    }

    /// Drops `key`: the next caller reads it again.
    pub fn forget(&self, key: &K) {
        let mut entries = self.entries.lock().expect("fresh lock");
        self.forgotten.fetch_add(1, Ordering::SeqCst);
        entries.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    #[tokio::test]
    async fn an_expired_value_is_reloaded_once_while_the_others_keep_it() {
        let fresh = Arc::new(Fresh::<u8, u32>::new(Duration::ZERO));
        let loads = Arc::new(AtomicUsize::new(0));
        let first: Result<_, ()> = fresh.get(&1, async || Ok(Some(1))).await;
        assert_eq!(first, Ok(Some(1)));
        // Expired at once: one caller reloads (slowly); the others meanwhile
        // get the last value without loading.
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let reloader = {
            let (fresh, loads) = (fresh.clone(), loads.clone());
            tokio::spawn(async move {
                fresh
                    .get(&1, async || {
                        loads.fetch_add(1, Ordering::SeqCst);
                        wait.await.unwrap();
                        Ok::<_, ()>(Some(2))
                    })
                    .await
            })
        };
        while loads.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        for _ in 0..10 {
            let seen = fresh
                .get(&1, async || {
                    loads.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, ()>(Some(3))
                })
                .await;
            assert_eq!(seen, Ok(Some(1)));
        }
        go.send(()).unwrap();
        assert_eq!(reloader.await.unwrap(), Ok(Some(2)));
        assert_eq!(loads.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_failed_reload_lets_the_next_caller_try_and_none_is_not_kept() {
        let fresh = Fresh::<u8, u32>::new(Duration::ZERO);
        assert_eq!(
            fresh.get(&1, async || Ok::<_, ()>(Some(1))).await,
            Ok(Some(1))
        );
        assert_eq!(
            fresh.get(&1, async || Err::<Option<u32>, _>("down")).await,
            Err("down")
        );
        assert_eq!(
            fresh.get(&1, async || Ok::<_, ()>(Some(2))).await,
            Ok(Some(2))
        );
        assert_eq!(fresh.get(&1, async || Ok::<_, ()>(None)).await, Ok(None));
        fresh.update(&1, |v| *v += 1);
        assert_eq!(
            fresh.get(&1, async || Ok::<_, ()>(Some(5))).await,
            Ok(Some(5))
        );
    }

    #[tokio::test]
    async fn a_kept_value_changes_in_place_until_forgotten() {
        let fresh = Fresh::<u8, u32>::new(Duration::from_secs(60));
        assert_eq!(
            fresh.get(&1, async || Ok::<_, ()>(Some(1))).await,
            Ok(Some(1))
        );
        fresh.update(&1, |v| *v += 1);
        assert_eq!(
            fresh.get(&1, async || Ok::<_, ()>(Some(9))).await,
            Ok(Some(2))
        );
        fresh.forget(&1);
        assert_eq!(
            fresh.get(&1, async || Ok::<_, ()>(Some(9))).await,
            Ok(Some(9))
        );
    }

    #[tokio::test]
    async fn a_load_overtaken_by_a_forget_is_not_kept() {
        let fresh = Fresh::<u8, u32>::new(Duration::from_secs(60));
        let seen = fresh
            .get(&1, async || {
                // Read before a change that forgets the key lands.
                fresh.forget(&1);
                Ok::<_, ()>(Some(1))
            })
            .await;
        assert_eq!(seen, Ok(Some(1)));
        assert_eq!(
            fresh.get(&1, async || Ok::<_, ()>(Some(2))).await,
            Ok(Some(2))
        );
    }
}
