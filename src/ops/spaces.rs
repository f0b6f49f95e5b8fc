//! Spaces and grants (docs/api.md "Spaces"): memory_space_create, memory_grant, memory_revoke
//! and memory_grants. What a grant allows is memory_core::spaces; the row policies' checks are
//! src/pg/spaces.rs.
//!
//! The tables are written as the extension's owner (sql/spaces.sql revokes them from PUBLIC),
//! after these functions have checked that the caller is the space's admin: a member cannot
//! raise its own access by writing the grants table.

use crate::error::{raise, OrRaise};
use crate::pg::json::JsonText;
use crate::pg::{owner, spaces as pg_spaces, spi, tenant};
use memory_core::spaces::{self, Access};
use memory_core::{names, validate, SqlState};
use serde_json::{json, Value};

/// Most categories one grant may name.
const MAX_CATEGORIES: usize = 100;

/// memory_space_create: a new space named `name`, administered by the caller; `{id, name}`.
pub fn create(name: Option<&str>) -> Value {
    let me = tenant::resolve(None);
    refuse_space_tenant(&me);
    let name = spaces::name(name).or_raise();
    let id: Option<String> = owner::as_owner(|| {
        spi::one_opt(
            "INSERT INTO memory.spaces (name) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id::text",
            &[name.into()],
            "creating a space",
        )
    });
    let Some(id) = id else {
        raise(
            SqlState::DuplicateObject,
            format!("space \"{name}\" already exists"),
            Some("space names are unique in the database; choose another".into()),
        )
    };
    put_grant(name, &me, Access::Admin, None, None, &me);
    json!({ "id": id, "name": name })
}

/// memory_grant: gives `grantee` `access` to space `space` (replacing an earlier grant),
/// optionally only for one of its agents and only for some categories. The caller must be the
/// space's admin.
pub fn grant(
    space: Option<&str>,
    grantee: Option<&str>,
    access: Option<&str>,
    agent: Option<&str>,
    categories: Option<Vec<Option<String>>>,
) -> Value {
    let me = tenant::resolve(None);
    let name = spaces::name(space).or_raise();
    let grantee = validate::id("grantee", grantee).or_raise();
    refuse_space_tenant(grantee);
    let access = Access::parse(access.unwrap_or("read")).or_raise();
    let agent = validate::optional_id("agent", agent).or_raise();
    let categories = categories.map(|cs| {
        if cs.is_empty() || cs.len() > MAX_CATEGORIES {
            raise(
                SqlState::InvalidParameterValue,
                format!("categories: give 1 to {MAX_CATEGORIES}, or NULL for every category"),
                None,
            );
        }
        cs.into_iter()
            .map(|c| {
                let c = validate::required("categories", c.as_deref()).or_raise();
                names::category(c)
                    .unwrap_or_else(|e| raise(SqlState::InvalidParameterValue, e.to_string(), None))
            })
            .collect::<Vec<String>>()
    });
    must_administer(name);
    if grantee == me && access != Access::Admin && last_admin(name, &me) {
        raise(
            SqlState::InsufficientPrivilege,
            format!("\"{me}\" is the last admin of space \"{name}\""),
            Some("grant admin to another member first".into()),
        );
    }
    put_grant(name, grantee, access, agent, categories.as_deref(), &me);
    json!({
        "space": name, "grantee": grantee, "access": access.name(),
        "agent": agent, "categories": categories,
    })
}

/// memory_revoke: takes `grantee`'s grant on `space` away, at its next statement. The space's
/// admin may revoke anyone; a member may revoke itself (leave). `{space, grantee, revoked}`.
pub fn revoke(space: Option<&str>, grantee: Option<&str>) -> Value {
    let me = tenant::resolve(None);
    let name = spaces::name(space).or_raise();
    let grantee = validate::id("grantee", grantee).or_raise();
    if grantee != me {
        must_administer(name);
    }
    if last_admin(name, grantee) {
        raise(
            SqlState::InsufficientPrivilege,
            format!("\"{grantee}\" is the last admin of space \"{name}\""),
            Some("grant admin to another member first".into()),
        );
    }
    let n: Option<i64> = owner::as_owner(|| {
        spi::one_opt(
            "WITH d AS (DELETE FROM memory.grants WHERE space = $1 AND user_id = $2 RETURNING 1)
             SELECT count(*) FROM d",
            &[name.into(), grantee.into()],
            "revoking a grant",
        )
    });
    pg_spaces::forget();
    json!({ "space": name, "grantee": grantee, "revoked": n.unwrap_or(0) > 0 })
}

/// memory_grants: the caller's grants, and every grant of the spaces it administers.
pub fn list() -> Value {
    let me = tenant::resolve(None);
    let rows: Vec<Value> = owner::as_owner(|| {
        spi::rows(
            include_str!("../../sql/queries/spaces_grants.sql"),
            &[me.as_str().into()],
            "reading grants",
            |r| Ok(r.get::<JsonText>(1)?.map(|j| j.value()).unwrap_or_default()),
        )
    });
    Value::Array(rows)
}

fn put_grant(
    name: &str,
    grantee: &str,
    access: Access,
    agent: Option<&str>,
    categories: Option<&[String]>,
    by: &str,
) {
    // The new row's time (its default) rather than now() in DO UPDATE, which Citus refuses
    // there (a function that is not IMMUTABLE) for the reference table the grants are on it.
    owner::as_owner(|| {
        spi::run(
            "INSERT INTO memory.grants (space, user_id, access, agent_id, categories, granted_by)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (user_id, space) DO UPDATE
             SET access = EXCLUDED.access, agent_id = EXCLUDED.agent_id,
                 categories = EXCLUDED.categories, granted_by = EXCLUDED.granted_by,
                 granted_at = EXCLUDED.granted_at",
            &[
                name.into(),
                grantee.into(),
                access.name().into(),
                agent.into(),
                categories.map(<[String]>::to_vec).into(),
                by.into(),
            ],
            "granting a space",
        )
    });
    pg_spaces::forget();
}

fn must_administer(name: &str) {
    if !pg_spaces::administers(&spaces::key(name)) {
        raise(
            SqlState::InsufficientPrivilege,
            format!("only an admin of space \"{name}\" may change its grants"),
            None,
        );
    }
}

/// Whether `who` is the only admin of `name` (a space keeps one).
fn last_admin(name: &str, who: &str) -> bool {
    owner::as_owner(|| {
        spi::one_opt::<bool>(
            "SELECT bool_and(user_id = $2) AND bool_or(user_id = $2)
             FROM memory.grants WHERE space = $1 AND access = 'admin'",
            &[name.into(), who.into()],
            "counting a space's admins",
        )
    })
    .unwrap_or(false)
}

/// A space is not a member of anything: its key is not a caller nor a grantee.
fn refuse_space_tenant(id: &str) {
    if spaces::of(id).is_some() {
        raise(
            SqlState::InvalidParameterValue,
            format!("\"{id}\" is a space, not a tenant"),
            Some("grant spaces to users (or roles in role mode)".into()),
        );
    }
}
