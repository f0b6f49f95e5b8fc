//! Lifecycle (docs/api.md "Lifecycle", docs/design.md "TTL and soft delete"): forget, restore, the TTL sweep and the purge.
//! Each is one statement; the audit triggers turn every transition into history and change-log
//! events (`~soft_deleted`, `-deleted`, `↺restored`), told apart by the `reason` hint (src/pg/hints.rs).
//! The worker runs the sweep and the purge; any scheduler (pg_cron) can call them instead.

use crate::error::raise;
use crate::gucs;
use crate::pg::events::{self, Event, Node};
use crate::pg::json::{Json, JsonText};
use crate::pg::{hints, spi, tenant};
use memory_core::consolidate::FINGERPRINT_DAYS;
use memory_core::SqlState;
use pgrx::pg_sys;
use serde_json::Value;

/// Moves one memory between states with `sql` (lifecycle_forget.sql / lifecycle_restore.sql); a memory already in
/// the target state is a `noop` answer, an unknown one P0002. A forget (`purge_days`) is
/// recorded as a `delete` event.
fn transition(id: &str, reason: &str, sql: &str, purge_days: Option<i32>) -> Value {
    let user = tenant::acting();
    let mut args = vec![id.into(), user.clone().into()];
    if let Some(days) = purge_days {
        args.push(days.into());
    }
    let changed = hints::with_reason(reason, || {
        spi::row(sql, &args, "changing a memory's state", |r| {
            Ok((
                r.get::<JsonText>(1)?.map(|j| Json(j.value())),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<String>(3)?,
                r.get::<String>(4)?,
            ))
        })
    });
    let changed = changed.and_then(|(answer, owner, thread, category)| {
        if purge_days.is_some() {
            let canonical = answer
                .as_ref()
                .and_then(|a| a.0["id"].as_str().map(str::to_string));
            events::record(Event {
                thread: thread.as_deref(),
                memory_id: canonical.as_deref(),
                category: category.as_deref(),
                ..Event::new(&owner, Node::Hotpath, "delete")
            });
        }
        answer
    });
    changed
        .or_else(|| {
            spi::one_opt::<JsonText>(
                include_str!("../../sql/queries/lifecycle_state.sql"),
                &[id.into(), user.into()],
                "reading a memory's state",
            )
            .map(|j| Json(j.value()))
        })
        .map(|j| j.0)
        .unwrap_or_else(|| {
            raise(
                SqlState::NoDataFound,
                format!("memory {id} not found"),
                None,
            )
        })
}

/// memory_forget: soft-deleted now (retrieval stops returning it at once), purged
/// `memory_ext.purge_after_days` later, or (`hard`) at once.
pub fn forget(id: &str, hard: bool) -> Value {
    let mut answer = transition(
        id,
        "forget",
        include_str!("../../sql/queries/lifecycle_forget.sql"),
        Some(if hard { 0 } else { gucs::purge_after_days() }),
    );
    if hard {
        // The memory is soft-deleted now (by this call or before it); the purge of that one row
        // runs as the owner, as every purge does. On Citus it runs as the caller, whose own
        // rights suffice (a tenant deletes its memories and entities; the bookkeeping is kept
        // by the triggers): Citus refuses a transaction in which a second user modifies the
        // shards the caller's soft delete modified ("placements that were modified in this
        // transaction by a different user").
        let user = tenant::acting();
        // Its event is recorded with a plain INSERT (events::record): Citus runs an INSERT ...
        // SELECT into a distributed table through COPY, which row-level security refuses.
        fn purging<R>(f: impl FnOnce() -> R) -> R {
            if crate::pg::citus::present() {
                f()
            } else {
                crate::pg::owner::as_owner(f)
            }
        }
        let purged = hints::with_reason("purge", || {
            purging(|| {
                spi::row(
                    include_str!("../../sql/queries/lifecycle_purge_one.sql"),
                    &[id.into(), user.clone().into()],
                    "purging a memory",
                    |r| {
                        Ok((
                            r.get::<String>(1)?.unwrap_or_default(),
                            r.get::<String>(2)?.unwrap_or_default(),
                            r.get::<String>(3)?,
                        ))
                    },
                )
            })
        });
        // Its links went with it: the entities only it named go too (src/ops/entities.rs).
        if let Some((owner, memory, category)) = &purged {
            purging(|| {
                events::record(Event {
                    memory_id: Some(memory),
                    category: category.as_deref(),
                    ..Event::new(owner, Node::Hotpath, "purge")
                });
                crate::ops::entities::orphans(user.as_deref(), None);
            });
        }
        // Nothing purged (a memory in no state a forget reaches): the forget's own answer.
        if let (Some(_), Some(obj)) = (purged, answer.as_object_mut()) {
            obj.insert("event".into(), Value::from("purged"));
            obj.insert("state".into(), Value::from("purged"));
            obj.remove("purge_at");
        }
    }
    answer
}

/// memory_restore: back to active, `purge_at` cleared.
pub fn restore(id: &str) -> Value {
    transition(
        id,
        "restore",
        include_str!("../../sql/queries/lifecycle_restore.sql"),
        None,
    )
}

/// memory_ttl_sweep: the sweep for the current tenant, else every tenant the caller may see.
pub fn ttl_sweep_current() -> i64 {
    ttl_sweep(tenant::acting())
}

/// memory_purge: the purge for the current tenant, else every tenant the caller may see.
pub fn purge_current() -> i64 {
    purge(tenant::acting()).0
}

/// The TTL sweep for one tenant, or (`None`) every tenant the caller may see: the worker's way
/// in, which must not depend on its own role name when `tenant_source = 'role'`. One
/// transaction (the caller's); the worker instead runs [`ttl_candidates`] and
/// [`ttl_sweep_batch`] in transactions of their own.
pub fn ttl_sweep(user: Option<String>) -> i64 {
    let (users, ids): (Vec<String>, Vec<String>) = ttl_candidates(user).into_iter().unzip();
    ttl_sweep_batch(users, ids)
}

/// The memories the TTL sweep would soft-delete now: (user_id, id). A read, no locks.
pub fn ttl_candidates(user: Option<String>) -> Vec<(String, String)> {
    spi::rows(
        include_str!("../../sql/queries/lifecycle_ttl_candidates.sql"),
        &[
            user.into(),
            gucs::ttl_days().into(),
            gucs::ttl_min_importance().into(),
        ],
        "finding expired memories",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
            ))
        },
    )
}

/// Soft-deletes those of the given memories that are still expired; returns how many.
pub fn ttl_sweep_batch(users: Vec<String>, ids: Vec<String>) -> i64 {
    if ids.is_empty() {
        return 0;
    }
    hints::with_reason("ttl", || {
        spi::one_opt::<i64>(
            include_str!("../../sql/queries/lifecycle_ttl_sweep.sql"),
            &[
                users.into(),
                ids.into(),
                gucs::ttl_days().into(),
                gucs::ttl_min_importance().into(),
                gucs::purge_after_days().into(),
                gucs::track_events().into(),
            ],
            "sweeping expired memories",
        )
        .unwrap_or(0)
    })
}

/// The purge for one tenant or (`None`) all: (memories purged, fingerprints pruned).
pub fn purge(user: Option<String>) -> (i64, i64) {
    // With no tenant the purge covers every tenant: only for a role that sees them all anyway
    // (a superuser, BYPASSRLS: the worker, pg_cron). Anyone else sees no rows without a tenant,
    // so there is nothing for them to purge; running as the owner must not change that.
    // SAFETY: plain reads of the current role's attributes inside a transaction.
    let sees_all =
        unsafe { pg_sys::superuser() || pg_sys::has_bypassrls_privilege(pg_sys::GetUserId()) };
    if user.is_none() && !sees_all {
        return (0, 0);
    }
    // As the owner: the statement also prunes the consolidation bookkeeping, which tenants may
    // read but not write (src/pg/owner.rs); with a tenant it touches only that tenant's rows.
    crate::pg::owner::as_owner(|| {
        let out = purge_rows(user.clone());
        // The purged memories' links went with them: so do the entities only they named.
        crate::ops::entities::orphans(user.as_deref(), None);
        out
    })
}

fn purge_rows(user: Option<String>) -> (i64, i64) {
    hints::with_reason("purge", || {
        spi::row(
            include_str!("../../sql/queries/lifecycle_purge.sql"),
            &[
                user.into(),
                FINGERPRINT_DAYS.into(),
                gucs::events_retention_days().into(),
                gucs::track_events().into(),
                gucs::change_log_days().into(),
                gucs::idempotency_days().into(),
                gucs::changes_days().into(),
            ],
            "purging memories",
            |row| {
                Ok((
                    row.get::<i64>(1)?.unwrap_or(0),
                    row.get::<i64>(2)?.unwrap_or(0),
                ))
            },
        )
        .unwrap_or((0, 0))
    })
}
