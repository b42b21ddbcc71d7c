//! The local engine (in progress).
