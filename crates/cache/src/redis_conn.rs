//! A Redis connection that may come and go. Losing Redis loses only rate
//! limit sharing (and, later, cache hits), never a request: callers get
//! `None` and degrade. A background task keeps trying to connect.

use redis::IntoConnectionInfo;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::io::tcp::TcpSettings;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Default)]
pub struct SharedRedis {
    conn: Arc<RwLock<Option<ConnectionManager>>>,
}

impl SharedRedis {
    /// Connects in the background, retrying until it succeeds or `stop` fires.
    pub fn connect(url: &str, timeout: Duration, stop: CancellationToken) -> SharedRedis {
        let shared = SharedRedis::default();
        // Many tasks share the connection: with Nagle on, a command written
        // while another's reply is pending would wait for that reply.
        let client = match url.into_connection_info().and_then(|info| {
            redis::Client::open(info.set_tcp_settings(TcpSettings::default().set_nodelay(true)))
        }) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "invalid redis url; running without redis");
                return shared;
            }
        };
        let slot = shared.clone();
        tokio::spawn(async move {
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(timeout))
                .set_response_timeout(Some(timeout))
                .set_number_of_retries(1);
            let mut delay = Duration::from_millis(200);
            loop {
                let attempt = ConnectionManager::new_with_config(client.clone(), config.clone());
                match tokio::time::timeout(timeout * 4, attempt).await {
                    Ok(Ok(conn)) => {
                        tracing::info!("connected to redis");
                        *slot.conn.write().expect("redis slot") = Some(conn);
                        return;
                    }
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, retry_in = ?delay, "redis unavailable")
                    }
                    Err(_) => tracing::warn!(retry_in = ?delay, "redis connect timed out"),
                }
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(delay) => {}
                }
                delay = (delay * 2).min(Duration::from_secs(5));
            }
        });
        shared
    }

    /// Connects and waits up to `within` for the first connection: for
    /// tools and tests that need Redis now, not eventually. `None` when
    /// none came in time (and then it stops trying).
    pub async fn connect_now(
        url: &str,
        timeout: Duration,
        within: Duration,
    ) -> Option<SharedRedis> {
        let stop = CancellationToken::new();
        let redis = SharedRedis::connect(url, timeout, stop.clone());
        let deadline = tokio::time::Instant::now() + within;
        while redis.get().is_none() {
            if tokio::time::Instant::now() >= deadline {
                stop.cancel();
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Some(redis)
    }

    /// The connection, once established (it reconnects by itself afterwards).
    pub fn get(&self) -> Option<ConnectionManager> {
        self.conn.read().expect("redis slot").clone()
    }
}
