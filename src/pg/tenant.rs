//! Who the current tenant is, and which tenant a call may act for (docs/api.md "Identity and
//! tenancy"). Row-level security enforces the same rule on every table; checking it here too
//! turns "you named another tenant" into a clear 42501 instead of an empty result.

use crate::error::{raise, OrRaise};
use crate::gucs::{self, TenantSource};
use crate::pg::citus;
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use std::ffi::{CStr, CString};

/// The current tenant: `memory_ext.user_id`, or the current role's name when
/// `memory_ext.tenant_source = 'role'`. `None` when no tenant is set.
pub fn current() -> Option<String> {
    match gucs::tenant_source() {
        TenantSource::Setting => gucs::user_id().inspect(|u| check_claim(u)),
        TenantSource::Role => Some(current_role_name()),
    }
}

/// The tenant an API call acts for, when one is set: `current()`, and on Citus also handed to
/// the workers this transaction talks to. `current()` alone is for the row policies.
pub fn acting() -> Option<String> {
    let tenant = current();
    if let Some(t) = &tenant {
        reach_workers(t);
    }
    tenant
}

/// On Citus, a `SET memory_ext.user_id` reaches only the coordinator; this sends it on for the
/// rest of the transaction (sql/citus.sql says how). Only the session's own tenant: a tenant a
/// call names is checked against it, not handed on. A role's name (tenant_source = 'role') is
/// the same on every node already.
fn reach_workers(tenant: &str) {
    if matches!(gucs::tenant_source(), TenantSource::Setting) && citus::present() {
        crate::pg::spi::run(
            "SELECT memory._tenant_to_workers($1)",
            &[tenant.into()],
            "handing the tenant to the Citus workers",
        );
    }
}

thread_local! {
    /// The last claim found allowed: (tenant, current user, local transaction id). A tenant
    /// is checked once per transaction and role, not once per row a policy looks at.
    static ALLOWED: std::cell::RefCell<Option<(String, pg_sys::Oid, u32)>> =
        const { std::cell::RefCell::new(None) };
}

/// A tenant that is a role in role mode (`ALTER ROLE ra SET memory_ext.tenant_source = 'role'`,
/// for all databases or this one) belongs to that role: the setting cannot claim it for anyone
/// else. The role itself, roles it is granted to, and superusers may still name it.
///
/// # Why
/// Per-role role mode is what the docs suggest for one role per tenant. Without this check,
/// another role still in setting mode ran `SET memory_ext.user_id = 'ra'` and read and wrote
/// everything of `ra`: the role's own setting protected only that role's sessions.
fn check_claim(tenant: &str) {
    // A space's key is reached through a grant (src/pg/spaces.rs), never claimed: a session
    // that set it would act as the space's owner without being its admin.
    // SAFETY: superuser() reads the current role's flag inside a transaction.
    if memory_core::spaces::of(tenant).is_some() && !unsafe { pg_sys::superuser() } {
        raise(
            SqlState::InsufficientPrivilege,
            format!("tenant \"{tenant}\" is a space: a session reaches it through a grant"),
            Some("set memory_ext.user_id to the member, and pass \"space\" in the request".into()),
        );
    }
    // SAFETY: GetUserId reads the backend's own state, valid inside a transaction.
    let (me, lxid) = (unsafe { pg_sys::GetUserId() }, super::version::local_xid());
    let cached = ALLOWED.with_borrow(|a| {
        a.as_ref()
            .is_some_and(|(t, u, x)| t == tenant && *u == me && *x == lxid)
    });
    if cached {
        return;
    }
    let name = CString::new(tenant).unwrap_or_default();
    // SAFETY: a NUL-terminated copy of the name; missing_ok = true returns InvalidOid instead
    // of raising; is_member_of_role reads the role cache.
    let foreign_role = unsafe {
        let role = pg_sys::get_role_oid(name.as_ptr(), true);
        role != pg_sys::InvalidOid && !pg_sys::is_member_of_role(me, role)
    };
    if foreign_role
        && Spi::get_one_with_args::<bool>(
            include_str!("../../sql/queries/tenant_role_mode.sql"),
            &[tenant.into()],
        )
        .ok()
        .flatten()
        .unwrap_or(false)
    {
        raise(
            SqlState::InsufficientPrivilege,
            format!("tenant \"{tenant}\" is a role in role mode: only that role can act for it"),
            Some("connect as that role, or use another memory_ext.user_id".into()),
        );
    }
    ALLOWED.set(Some((tenant.to_string(), me, lxid)));
}

fn current_role_name() -> String {
    // SAFETY: GetUserId() is the session's current effective role, always a valid OID inside a
    // transaction; with noerr = false GetUserNameFromId raises an ERROR instead of returning
    // NULL; the returned string is palloc'd and NUL-terminated, and we copy it at once.
    unsafe {
        let name = pg_sys::GetUserNameFromId(pg_sys::GetUserId(), false);
        CStr::from_ptr(name).to_string_lossy().into_owned()
    }
}

/// The tenant a call acts for: the `user_id` it names, which must be the current tenant when
/// one is set; else the current tenant. Sessions without a tenant (superusers, maintenance
/// roles) may name any tenant; for everyone else row-level security still has the last word.
pub fn resolve(arg: Option<&str>) -> String {
    let cur = acting();
    match arg {
        Some(a) => {
            let a = validate::id("user_id", Some(a)).or_raise();
            if let Some(c) = cur {
                if a != c {
                    raise(
                        SqlState::InsufficientPrivilege,
                        format!("user_id \"{a}\" is not the current tenant"),
                        Some("a session acts only for its own tenant (memory_ext.user_id, or its role when memory_ext.tenant_source = 'role')".into()),
                    );
                }
            }
            a.to_string()
        }
        None => cur.unwrap_or_else(|| {
            raise(
                SqlState::NullValueNotAllowed,
                "user_id must not be null when no tenant is set",
                Some("pass user_id, or SET memory_ext.user_id = '<tenant>'".into()),
            )
        }),
    }
}

/// `memory.current_tenant()`: the predicate of every row-level security policy.
///
/// It is a C function on purpose: calling it loads this library, whose `_PG_init` defines
/// `memory_ext.tenant_source` as superuser-only, so a value an ordinary role put into a
/// placeholder before the library was loaded is discarded rather than trusted.
#[pg_extern(stable, parallel_safe, schema = "memory")]
fn current_tenant() -> Option<String> {
    current()
}

/// Runs `f` acting for the tenant a call names: [`resolve`]'s rules (the current tenant when
/// one is set, else `user_id`; 22004 when neither), and when no tenant is set, `user_id` becomes
/// the tenant of the call's statements, so that row-level security admits an ordinary role
/// that names its tenant in the call instead of `SET memory_ext.user_id` first (the setting is
/// put back afterwards; an error ends the transaction, which puts it back too). Naming a tenant
/// this way claims no more than the setting would: a role-mode tenant is still refused to other
/// roles ([`acting`] checks the claim).
pub fn scoped<R>(user_id: Option<&str>, f: impl FnOnce(&str) -> R) -> R {
    let user = resolve(user_id);
    if current().is_some() {
        return f(&user);
    }
    let set = |v: &str| {
        crate::pg::spi::run(
            "SELECT set_config('memory_ext.user_id', $1, true)",
            &[v.into()],
            "setting the call's tenant",
        )
    };
    set(&user);
    acting();
    let out = f(&user);
    set("");
    out
}
