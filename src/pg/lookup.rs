//! Resolving caller-chosen ids (agent_id, thread_id) to their tenant.
//!
//! Ids are unique per tenant, not globally (they are primary-key columns after user_id, so the
//! schema can be sharded). Under row-level security a role sees only its tenant, so a lookup
//! finds at most one row. A session without a tenant and with BYPASSRLS (a superuser doing
//! maintenance) can see the same id in several tenants: that is an error naming the fix,
//! never a guess.

use crate::error::raise;
use crate::pg::{spi, tenant};
use memory_core::SqlState;

/// Which table an id lives in.
#[derive(Clone, Copy)]
pub enum Owned {
    Agent,
    Thread,
}

impl Owned {
    fn noun(self) -> &'static str {
        match self {
            Owned::Agent => "agent",
            Owned::Thread => "thread",
        }
    }
    fn query(self) -> &'static str {
        match self {
            Owned::Agent => "SELECT user_id FROM memory.agents WHERE agent_id = $1 AND ($2::text IS NULL OR user_id = $2) LIMIT 2",
            Owned::Thread => "SELECT user_id FROM memory.threads WHERE thread_id = $1 AND ($2::text IS NULL OR user_id = $2) LIMIT 2",
        }
    }

    /// The same lookup among the spaces `$2` (their keys).
    fn in_spaces(self) -> &'static str {
        match self {
            Owned::Agent => "SELECT user_id FROM memory.agents WHERE agent_id = $1 AND user_id = ANY($2) LIMIT 2",
            Owned::Thread => "SELECT user_id FROM memory.threads WHERE thread_id = $1 AND user_id = ANY($2) LIMIT 2",
        }
    }
}

/// The tenant owning `id`, or `None` when the current tenant has no such id.
///
/// Read-write SPI (a snapshot of its own): a read-only query sees the statement's first
/// snapshot, so an agent or thread started earlier in the same call (memory_tool_call starts a
/// new thread on first use) would not be found by the lookups after it.
pub fn find_owner(kind: Owned, id: &str) -> Option<String> {
    let tenant = tenant::acting();
    let owners: Vec<String> = spi::rows_mut(
        kind.query(),
        &[id.into(), tenant.clone().into()],
        "looking up an owner",
        |row| row.get::<String>(1).map(Option::unwrap_or_default),
    );
    // An agent or thread of a space granted to the caller (its shared blocks and conversations
    // live there, docs/api.md "Spaces"), when the caller has none of that id: the row policies
    // show only granted spaces, and one id in two of them is ambiguous like any other.
    let owners = match (owners.is_empty(), &tenant) {
        (true, Some(_)) => {
            let spaces: Vec<String> = crate::pg::spaces::readable(None, None)
                .into_iter()
                .map(|(key, _)| key)
                .collect();
            if spaces.is_empty() {
                owners
            } else {
                spi::rows_mut(
                    kind.in_spaces(),
                    &[id.into(), spaces.into()],
                    "looking up an owner in the spaces",
                    |row| row.get::<String>(1).map(Option::unwrap_or_default),
                )
            }
        }
        _ => owners,
    };
    match owners.len() {
        0 => None,
        1 => owners.into_iter().next(),
        _ => raise(
            SqlState::InvalidParameterValue,
            format!("{} \"{id}\" exists for several tenants", kind.noun()),
            Some("SET memory_ext.user_id to the tenant you mean".into()),
        ),
    }
}

/// The tenant owning `id`; P0002 when there is none visible.
pub fn owner(kind: Owned, id: &str) -> String {
    find_owner(kind, id).unwrap_or_else(|| {
        raise(
            SqlState::NoDataFound,
            format!("{} \"{id}\" not found", kind.noun()),
            None,
        )
    })
}
