//! Access bookkeeping: a retrieval records which memories it returned (`last_accessed_at` and
//! `access_count` on memory.items, read by the TTL sweep and by consolidation), at most once a
//! minute a memory (sql/queries/access_record.sql says why).
//!
//! # Why queued
//! Writing the memories read inside the read made new versions of those rows, and of their
//! index entries (the HNSW graph's among them) when a page was full: ~1 ms of a read at 100k
//! memories, the dearest statement of a memory_query that returns memories not read in the
//! last minute. Where the background worker serves this database, a read instead inserts one
//! small row into memory.access_queue and the worker counts the queue at each look for work
//! ([`fold`]); the TTL sweep treats a queued read as a retrieval. Elsewhere the read writes
//! them itself: no worker would ever count them (a database the worker does not serve, a
//! server without memory_ext in shared_preload_libraries), and on Citus the fold's one
//! statement cannot join the queue's shards with the memories'.

use crate::pg::{citus, spi};

/// Records that `user` was shown the memories `ids` (its own: a space's are the space's).
pub fn record(user: &str, ids: &[String]) {
    if ids.is_empty() {
        return;
    }
    if crate::worker::serves_this_database() && !citus::present() {
        spi::run_kept(
            include_str!("../../sql/queries/access_queue.sql"),
            &[user.into(), ids.to_vec().into()],
            "queueing access",
        );
        return;
    }
    // Parsed once per backend, planned per call (`spi::with_custom_plan` says why).
    spi::with_custom_plan(|| {
        spi::run_kept(
            include_str!("../../sql/queries/access_record.sql"),
            &[user.into(), ids.to_vec().into()],
            "recording access",
        )
    });
}

/// Counts the queued reads of `user` (every tenant's with `None`) on their memories and
/// empties the queue of them, in one statement: (reads taken, memories written).
pub fn fold(user: Option<&str>) -> (i64, i64) {
    spi::row(
        include_str!("../../sql/queries/access_fold.sql"),
        &[user.into()],
        "counting queued access",
        |r| Ok((r.get::<i64>(1)?.unwrap_or(0), r.get::<i64>(2)?.unwrap_or(0))),
    )
    .unwrap_or((0, 0))
}
