//! The limits on one call (memory_ext.max_* settings, docs/operations.md "Limits"), applied at
//! the SQL boundary with the argument's name in the error.

use crate::error::OrRaise;
use crate::gucs;
use memory_core::validate;

/// A required text argument within `memory_ext.max_value_bytes` (22001 otherwise).
pub fn text<'a>(arg: &'static str, v: Option<&'a str>) -> &'a str {
    validate::text_max(arg, v, gucs::max_value_bytes()).or_raise()
}

/// An optional value of `bytes` bytes within `memory_ext.max_value_bytes`.
pub fn value_bytes(arg: &'static str, bytes: usize) {
    validate::max_bytes(arg, bytes, gucs::max_value_bytes()).or_raise()
}

/// A query text within `memory_ext.max_query_chars`.
pub fn query(arg: &'static str, q: &str) {
    validate::query_chars(arg, q, gucs::max_query_chars()).or_raise()
}

/// A batch within `memory_ext.max_batch`.
pub fn batch(arg: &'static str, len: usize) {
    validate::batch_len(arg, len, gucs::max_batch()).or_raise()
}
