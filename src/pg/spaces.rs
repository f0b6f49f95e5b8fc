//! What the current tenant may do in spaces (crates/memory_core/src/spaces.rs): the row
//! policies' functions (sql/security.sql) and the API's checks, over one lookup of the
//! tenant's grants per statement.
//!
//! # Why a lookup per statement
//! A policy function runs once per row a statement looks at. Reading the grants table each
//! time would cost a query per row; reading it once per transaction would let a revoke wait for
//! the member's transaction to end. Once per statement (the statement's start time and the
//! transaction's id key the cache) costs one small read and takes a revoke in at the member's
//! next statement.

use crate::error::{raise, OrRaise};
use crate::pg::{owner, spi, tenant};
use memory_core::spaces::{self, Access, Grant, Row};
use memory_core::SqlState;
use pgrx::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;

thread_local! {
    /// The tenant's grants, read once per statement (`with_grants`).
    static GRANTS: super::statement::Memo<String, HashMap<String, Grant>> =
        const { super::statement::Memo::new() };
    /// The agent the running API call acts as (its request's `agent` / `agent_id`), for grants
    /// that name one. Plain SQL acts as no agent.
    static AGENT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` acting as `agent` for grants limited to an agent; put back afterwards, on an error
/// too (the next call sets its own).
pub fn as_agent<R>(agent: Option<&str>, f: impl FnOnce() -> R) -> R {
    let prev = AGENT.replace(agent.map(str::to_string));
    let out = f();
    AGENT.set(prev);
    out
}

/// The current tenant's grants, by space key; empty when no tenant is set.
fn with_grants<R>(f: impl FnOnce(&HashMap<String, Grant>) -> R) -> R {
    let Some(me) = tenant::current() else {
        return f(&HashMap::new());
    };
    GRANTS.with(|m| m.with(me, |me| load(me), f))
}

/// The relation the grants are read from: memory.grants, or on a Citus node that holds a
/// placement of it (a reference table there, docs/citus.md "Spaces") that placement itself. The
/// row policies run inside the shard query a worker executes, where Citus refuses another
/// distributed query, a reference table's included; its local placement is a plain table.
fn grants_relation() -> String {
    if !super::citus::present() {
        return "memory.grants".into();
    }
    spi::one_opt::<String>(
        "SELECT 'memory.' || quote_ident('grants_' || s.shardid) FROM pg_dist_shard s
         WHERE s.logicalrelid = 'memory.grants'::regclass
           AND to_regclass('memory.' || quote_ident('grants_' || s.shardid)) IS NOT NULL",
        &[],
        "finding the grants' placement",
    )
    .unwrap_or_else(|| "memory.grants".into())
}

fn load(me: &str) -> HashMap<String, Grant> {
    // As the owner: the grants table is the extension's to read, whatever the caller may.
    owner::as_owner(|| {
        spi::rows(
            &format!(
                "SELECT space, access, agent_id, categories FROM {} WHERE user_id = $1",
                grants_relation()
            ),
            &[me.into()],
            "reading the tenant's grants",
            |r| {
                let space = r.get::<String>(1)?.unwrap_or_default();
                let access = r.get::<String>(2)?.unwrap_or_default();
                Ok((
                    spaces::key(&space),
                    Grant {
                        access: Access::parse(&access).unwrap_or(Access::Read),
                        agent: r.get::<String>(3)?,
                        categories: r.get::<Vec<String>>(4)?,
                    },
                ))
            },
        )
    })
    .into_iter()
    .collect()
}

fn admits(owner: Option<&str>, need: Access, memory: bool, category: Option<&str>) -> bool {
    let Some(owner) = owner.filter(|o| spaces::of(o).is_some()) else {
        return false;
    };
    let row = if memory {
        Row::Memory(category)
    } else {
        Row::Other
    };
    let agent = AGENT.with_borrow(Clone::clone);
    with_grants(|g| {
        g.get(owner)
            .is_some_and(|g| g.admits(need, agent.as_deref(), row))
    })
}

/// `memory.space_reads(owner, memory, category)`: whether the current tenant may read a row of
/// `owner` (a space's key) — a memory of `category` when `memory`, else any other row. The
/// second arm of every table's read policy (sql/security.sql); false for a user's rows.
#[pg_extern(stable, parallel_safe, schema = "memory")]
fn space_reads(owner: Option<&str>, memory: Option<bool>, category: Option<&str>) -> bool {
    admits(owner, Access::Read, memory.unwrap_or(false), category)
}

/// `memory.space_writes(owner, memory, category)`: the same for writing.
#[pg_extern(stable, parallel_safe, schema = "memory")]
fn space_writes(owner: Option<&str>, memory: Option<bool>, category: Option<&str>) -> bool {
    admits(owner, Access::Write, memory.unwrap_or(false), category)
}

/// The spaces the current tenant reads, as (key, name), by name; `only` narrows them to the
/// names it lists (a name not granted is 42501: asking for a space one cannot read is not an
/// empty answer). Grants limited to another agent than `agent` are left out.
pub fn readable(agent: Option<&str>, only: Option<&[String]>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = with_grants(|g| {
        g.iter()
            .filter(|(_, g)| g.agent.is_none() || g.agent.as_deref() == agent)
            .filter_map(|(k, _)| Some((k.clone(), spaces::of(k)?.to_string())))
            .collect()
    });
    out.sort_by(|a, b| a.1.cmp(&b.1));
    if let Some(only) = only {
        for n in only {
            if !out.iter().any(|(_, name)| name == n) {
                raise(
                    SqlState::InsufficientPrivilege,
                    format!("space \"{n}\" is not granted to this tenant"),
                    Some("memory_grants() lists the spaces granted to it".into()),
                );
            }
        }
        out.retain(|(_, name)| only.contains(name));
    }
    out
}

/// The tenant key a write into space `name` uses, after checking the caller holds `write` on
/// it (for `agent`): 42501 otherwise. Only memory rows' categories are checked by the row
/// policies, as each row is written.
pub fn writable(name: &str, agent: Option<&str>) -> String {
    let name = spaces::name(Some(name)).or_raise();
    let key = spaces::key(name);
    let access = with_grants(|g| {
        g.get(&key)
            .filter(|g| g.agent.is_none() || g.agent.as_deref() == agent)
            .map(|g| g.access)
    });
    match access {
        Some(a) if a >= Access::Write => key,
        Some(_) => raise(
            SqlState::InsufficientPrivilege,
            format!("space \"{name}\" is granted to this tenant read-only"),
            Some("a space's admin grants write with memory_grant".into()),
        ),
        None => raise(
            SqlState::InsufficientPrivilege,
            format!("space \"{name}\" is not granted to this tenant"),
            Some("memory_grants() lists the spaces granted to it".into()),
        ),
    }
}

/// The tenant key a call naming `user_id` writes under: a `space:<name>` key once the caller is
/// found to hold write on it (an agent or a conversation of the space, docs/api.md "Spaces"),
/// else the tenant as `tenant::resolve` gives it.
pub fn resolve_writer(user_id: Option<&str>) -> String {
    match user_id.and_then(spaces::of) {
        Some(space) => {
            tenant::resolve(None);
            writable(space, None)
        }
        None => tenant::resolve(user_id),
    }
}

/// The spaces `readable` gives, for the reads that span owners in one statement (the change
/// feed's order, a search of conversations); none on Citus, where such a statement would span
/// shards (docs/citus.md "Spaces").
pub fn readable_together(agent: Option<&str>) -> Vec<(String, String)> {
    if super::citus::present() {
        return vec![];
    }
    readable(agent, None)
}

/// Whether the current tenant administers space `key`.
pub fn administers(key: &str) -> bool {
    with_grants(|g| g.get(key).is_some_and(|g| g.access == Access::Admin))
}

/// Forgets the cached grants, so that a grant or revoke this statement made counts at once
/// for the rest of it.
pub fn forget() {
    GRANTS.with(|m| m.forget());
}
