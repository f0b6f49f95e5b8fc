//! When the background worker runs each job (docs/api.md "Lifecycle", docs/design.md "Consolidation", "TTL and soft delete"). Pure time
//! arithmetic on Unix seconds, so that the rules are tested without a server or a clock.
//!
//! # Why a slot per tenant
//! Consolidation is the one job that costs LLM calls and CPU per tenant. Running every tenant at
//! `consolidation_hour` would put the whole day's load into one burst; each tenant instead gets
//! a fixed slot inside a window that opens at that hour, derived from its id (stable across
//! restarts, spread evenly by a hash), and runs at most once per slot.

/// Seconds per day.
pub const DAY: i64 = 86_400;

/// The names the worker's jobs go by: `memory_ext.worker_jobs`, `memory.worker_status.job`,
/// `memory_worker_run(job)`.
pub const JOBS: [&str; 8] = [
    "ttl_sweep",
    "purge",
    "consolidate",
    "backfill",
    "extract",
    "episodes",
    "refine",
    "summaries",
];

/// `memory_ext.worker_jobs`'s default: every job, in `JOBS`' order (a C string, as a setting's
/// default must be; a test keeps it equal to `JOBS`).
pub const DEFAULT_JOBS: &std::ffi::CStr =
    c"ttl_sweep,purge,consolidate,backfill,extract,episodes,refine,summaries";

/// Parses `memory_ext.worker_jobs` (comma-separated job names; empty = none). Returns the
/// enabled jobs and the names that are not jobs (for the worker to log).
pub fn parse_jobs(setting: &str) -> (Vec<&'static str>, Vec<String>) {
    let mut on = vec![];
    let mut unknown = vec![];
    for name in setting.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match JOBS.iter().find(|j| j.eq_ignore_ascii_case(name)) {
            Some(j) if !on.contains(j) => on.push(*j),
            Some(_) => {}
            None => unknown.push(name.to_string()),
        }
    }
    (on, unknown)
}

/// FNV-1a, 64 bit: a stable hash (std's `DefaultHasher` may change between Rust releases,
/// which would move every tenant's slot on an upgrade; a summary's fingerprint is stored too,
/// crate::summaries::fingerprint).
pub fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A tenant's offset into the consolidation window, in seconds: `[0, window_hours * 3600)`.
pub fn tenant_offset(user_id: &str, window_hours: i64) -> i64 {
    let window = window_hours.clamp(1, 24) * 3600;
    (fnv1a(user_id) % window as u64) as i64
}

/// The most recent consolidation slot of `user_id` at or before `now`. `day_start` is today's
/// midnight in the server's time zone (Unix seconds; the caller asks Postgres, which knows the
/// zone), `hour` the window's opening hour (0–23).
pub fn last_slot(now: i64, day_start: i64, hour: i64, window_hours: i64, user_id: &str) -> i64 {
    let slot = day_start + hour.clamp(0, 23) * 3600 + tenant_offset(user_id, window_hours);
    // The window may run past midnight and today's slot may still be ahead: step back a day
    // at a time (at most twice: hour + offset < 48 h).
    let mut s = slot;
    while s > now {
        s -= DAY;
    }
    s
}

/// Whether a tenant's consolidation is due: its last run (Unix seconds, `None` = never) is
/// older than its most recent slot. A server that was down through a slot runs it once on
/// return, not once per missed day.
pub fn consolidation_due(
    now: i64,
    day_start: i64,
    hour: i64,
    window_hours: i64,
    user_id: &str,
    last_run: Option<i64>,
) -> bool {
    let slot = last_slot(now, day_start, hour, window_hours, user_id);
    last_run.is_none_or(|r| r < slot)
}

/// Whether an interval job (TTL sweep, purge) is due: never finished, or finished at least
/// `interval` seconds ago.
pub fn interval_due(now: i64, last_finished: Option<i64>, interval: i64) -> bool {
    last_finished.is_none_or(|f| now - f >= interval.max(1))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_jobs_are_every_job() {
        assert_eq!(super::DEFAULT_JOBS.to_str().unwrap(), super::JOBS.join(","));
    }

    use super::*;

    // 2026-11-22 00:00:00 UTC.
    const MIDNIGHT: i64 = 1_795_305_600;

    #[test]
    fn jobs_setting_is_parsed_forgivingly() {
        assert_eq!(
            parse_jobs("ttl_sweep, Purge,,backfill"),
            (vec!["ttl_sweep", "purge", "backfill"], vec![])
        );
        assert_eq!(parse_jobs(""), (vec![], vec![]));
        assert_eq!(
            parse_jobs("backfill,vacuum,backfill"),
            (vec!["backfill"], vec!["vacuum".to_string()])
        );
    }

    #[test]
    fn offsets_stay_in_the_window_and_spread() {
        let offsets: Vec<i64> = (0..1000)
            .map(|i| tenant_offset(&format!("user-{i}"), 6))
            .collect();
        assert!(offsets.iter().all(|&o| (0..6 * 3600).contains(&o)));
        // Each of the six hours gets a fair share (expected ~167 of 1000).
        for h in 0..6 {
            let n = offsets.iter().filter(|&&o| o / 3600 == h).count();
            assert!((120..220).contains(&n), "hour {h}: {n}");
        }
        // Stable: the same id, the same slot.
        assert_eq!(tenant_offset("alice", 24), tenant_offset("alice", 24));
        assert_eq!(tenant_offset("alice", 1), tenant_offset("alice", 1));
        assert!(tenant_offset("alice", 1) < 3600);
    }

    #[test]
    fn slot_is_today_once_passed_else_yesterday() {
        let off = tenant_offset("alice", 2);
        let today = MIDNIGHT + 3 * 3600 + off;
        assert_eq!(last_slot(today, MIDNIGHT, 3, 2, "alice"), today);
        assert_eq!(last_slot(today + 10, MIDNIGHT, 3, 2, "alice"), today);
        assert_eq!(last_slot(today - 1, MIDNIGHT, 3, 2, "alice"), today - DAY);
        // A window opening at 23:00 runs past midnight: at 00:30 the slot may be today's
        // (yet to come) or yesterday's, never in the future.
        for u in ["a", "b", "c", "d", "e"] {
            let now = MIDNIGHT + 1800;
            let s = last_slot(now, MIDNIGHT, 23, 24, u);
            assert!(s <= now && s > now - DAY, "{u}");
        }
    }

    #[test]
    fn consolidation_runs_once_per_slot() {
        let slot = last_slot(MIDNIGHT + 20 * 3600, MIDNIGHT, 3, 24, "bob");
        let due = |now, last| consolidation_due(now, MIDNIGHT, 3, 24, "bob", last);
        assert!(due(slot, None));
        assert!(due(slot + 5, Some(slot - 1)));
        assert!(!due(slot + 5, Some(slot)));
        assert!(!due(slot + 3600, Some(slot + 60)));
        // Down for three days: one run on return, then not again until the next slot.
        assert!(due(slot, Some(slot - 3 * DAY)));
    }

    #[test]
    fn interval_jobs() {
        assert!(interval_due(100, None, 3600));
        assert!(!interval_due(100, Some(50), 3600));
        assert!(interval_due(3650, Some(50), 3600));
        // A zero interval still waits a second rather than spinning.
        assert!(!interval_due(50, Some(50), 0));
    }
}
