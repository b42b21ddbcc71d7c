//! The cross-tenant cache index.
//!
//! - [`key`]: content-addressed cache keys for steps.
//! - [`importance`]: Couler's caching-importance factor.
//! - [`sim`]: a trace-driven simulator comparing caching policies.

pub mod importance;
pub mod sim;
