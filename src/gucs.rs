//! Every `memory_ext.*` setting, registered once from `_PG_init`.
//!
//! Statics are private; the rest of the crate reads them through the typed accessors below.
//! The `memory_ext` prefix is reserved, so a typo such as `SET memory_ext.usr_id = ...` is an
//! error instead of a silently ignored placeholder.

use memory_core::tokens::Encoding;
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::{pg_sys, PostgresGucEnum};
use std::ffi::CString;

/// Where the current tenant comes from.
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum TenantSource {
    /// `memory_ext.user_id`, set by the application per session or transaction.
    #[name = c"setting"]
    Setting,
    /// The name of the role running the statement (`current_user`): one database role per
    /// tenant, nothing the session can forge.
    #[name = c"role"]
    Role,
}

#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum TokenEncoding {
    #[name = c"cl100k_base"]
    Cl100kBase,
    #[name = c"o200k_base"]
    O200kBase,
}

/// The current tenant when `tenant_source = setting`. Empty means none: row-level security
/// then shows no rows to roles without BYPASSRLS.
static USER_ID: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// `setting` (default) or `role`. Superuser-only: a session that could switch it could pick
/// its own tenant even where the DBA chose role-based tenancy.
static TENANT_SOURCE: GucSetting<TenantSource> =
    GucSetting::<TenantSource>::new(TenantSource::Setting);

/// The tiktoken encoding that message token counts are stored in (counted once, at write time;
/// changing it affects messages written afterwards).
static TOKEN_ENCODING: GucSetting<TokenEncoding> =
    GucSetting::<TokenEncoding>::new(TokenEncoding::Cl100kBase);

pub fn init() {
    GucRegistry::define_string_guc(
        c"memory_ext.user_id",
        c"The current tenant (user_id) for row-level security and API calls.",
        c"Applications set it per session or transaction. Ignored when memory_ext.tenant_source = 'role'.",
        &USER_ID,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"memory_ext.tenant_source",
        c"Where the current tenant comes from: 'setting' (memory_ext.user_id) or 'role' (current_user).",
        c"",
        &TENANT_SOURCE,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"memory_ext.token_encoding",
        c"tiktoken encoding for stored message token counts: cl100k_base or o200k_base.",
        c"",
        &TOKEN_ENCODING,
        GucContext::Userset,
        GucFlags::default(),
    );
    // SAFETY: called from _PG_init in the backend's main thread with a static, NUL-terminated
    // name; MarkGUCPrefixReserved only records the prefix (and warns about stale placeholders).
    unsafe { pg_sys::MarkGUCPrefixReserved(c"memory_ext".as_ptr()) };
}

/// `memory_ext.user_id`, `None` when unset or empty.
pub fn user_id() -> Option<String> {
    USER_ID
        .get()
        .and_then(|c| c.into_string().ok())
        .filter(|s| !s.is_empty())
}

pub fn tenant_source() -> TenantSource {
    TENANT_SOURCE.get()
}

pub fn token_encoding() -> Encoding {
    match TOKEN_ENCODING.get() {
        TokenEncoding::Cl100kBase => Encoding::Cl100kBase,
        TokenEncoding::O200kBase => Encoding::O200kBase,
    }
}
