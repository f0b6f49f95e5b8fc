//! Spaces and grants (docs/api.md "Spaces"): memories owned by a team, a project or an
//! organisation, which members reach through grants. The work is in src/ops/spaces.rs.

use crate::ops::spaces as ops;
use pgrx::prelude::*;
use pgrx::JsonB;

/// `{id, name}`: a new space, administered by the caller.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_space_create(name: Option<&str>) -> JsonB {
    JsonB(ops::create(name))
}

/// Gives `grantee` (a tenant: a user id, or a role in role mode) `access` ('read', 'write' or
/// 'admin') to `space`, optionally only for its agent `agent` and only for `categories`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_grant(
    space: Option<&str>,
    grantee: Option<&str>,
    access: default!(Option<&str>, "'read'"),
    agent: default!(Option<&str>, "NULL"),
    categories: default!(Option<Vec<Option<String>>>, "NULL"),
) -> JsonB {
    JsonB(ops::grant(space, grantee, access, agent, categories))
}

/// Takes `grantee`'s grant on `space` away: `{space, grantee, revoked}`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_revoke(space: Option<&str>, grantee: Option<&str>) -> JsonB {
    JsonB(ops::revoke(space, grantee))
}

/// The caller's grants and those of the spaces it administers, as a JSON array.
#[pg_extern(stable, parallel_restricted)]
fn memory_grants() -> JsonB {
    JsonB(ops::list())
}
