//! Summaries the worker keeps (docs/api.md "Summaries"): a question about the tenant's memories
//! with an answer the worker keeps current, read with no model at query time. The work is in
//! src/ops/summaries.rs.

use crate::pg::json::JsonText;
use pgrx::prelude::*;
use pgrx::JsonB;

/// Defines (or redefines) summary `name`: a question and a scope (`categories`, `kinds`,
/// `tags`, `entity`, `project`, `limit`). `{name, question, scope, created}`. 22023 for a bad
/// name, question or scope, or a built-in's name.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_summary_define(
    name: Option<&str>,
    question: Option<&str>,
    scope: default!(Option<JsonB>, "'{}'"),
) -> JsonB {
    JsonB(crate::ops::summaries::define(
        name,
        question,
        scope.map(|j| j.0),
    ))
}

/// Every summary of the tenant, by name: `[{name, question, scope, builtin, answer, evidence,
/// method, version, stale, stale_since, refreshed_at, error}]`.
#[pg_extern(stable, parallel_safe)]
fn memory_summaries() -> JsonText {
    crate::ops::summaries::list()
}

/// Summary `name` as memory_summaries shows it, or its version `version` from history. P0002
/// when there is none.
#[pg_extern(stable, parallel_safe)]
fn memory_summary_get(name: Option<&str>, version: default!(Option<i32>, "NULL")) -> JsonText {
    crate::ops::summaries::get(name, version)
}

/// Drops summary `name` with its versions (a built-in one is not defined again). Whether
/// there was one.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_summary_drop(name: Option<&str>) -> bool {
    crate::ops::summaries::drop(name)
}

/// A new version of summary `name` now (NULL: every stale summary of the tenant, the built-in
/// ones defined first), as the worker writes it; with the LLM when configured, so this call
/// may wait for it. `{refreshed, current, waiting}`. P0002 for an unknown name.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_summary_refresh(name: default!(Option<&str>, "NULL")) -> JsonB {
    JsonB(crate::ops::summaries::refresh_now(name))
}
