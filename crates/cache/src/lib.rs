//! The cross-tenant cache index.
//!
//! - [`key`]: content-addressed cache keys for steps.
//! - [`importance`]: Couler's caching-importance factor.
//! - [`index`]: entries in Redis, admitted and evicted under a byte budget.
//! - [`plan`]: a whole plan looked up in depth order, in pipelined chunks.
//! - [`sim`]: a trace-driven simulator comparing caching policies.

pub mod importance;
pub mod index;
pub mod key;
pub mod plan;
mod redis_conn;
mod settings;
pub mod sim;
pub mod verdict;

pub use index::{
    Admission, CacheConfig, CacheIndex, Cached, Claim, Entry, Found, Invalidate, Record, Stats,
    Usage,
};
pub use key::{CacheKey, NoKey, Scope};
pub use redis_conn::SharedRedis;
pub use settings::{CacheSettings, RedisSettings};
pub use verdict::{Verdict, VerdictStatus};
