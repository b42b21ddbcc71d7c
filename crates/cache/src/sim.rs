//! Trace-driven cache policy simulator (in progress).
