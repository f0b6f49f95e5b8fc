//! Shared helpers live in tests/common; this crate has no library code.
