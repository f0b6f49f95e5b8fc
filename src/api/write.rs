//! memory_write (docs/api.md "Memories"): one memory, and `memory_write_batch`, the bulk path.
//! The work — validation of the text, exact-duplicate no-op, near-duplicate update, relation
//! edges — is in src/ops/write.rs.
//!
//! One call is one statement from the caller's view: any error aborts it and nothing of it
//! stays. History, change log and revisions come from the triggers.

use crate::error::{raise, OrRaise};
use crate::ops::write as ops;
use crate::pg::json::Json;
use memory_core::request::{self, WriteRequest};
use memory_core::{validate, SqlState};
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

/// Stores a memory: `{"id", "event": "created"|"updated"|"noop", "revision", "related": [...]}`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_write(request: Option<Json>) -> JsonB {
    let Json(v) = validate::required("request", request.as_ref()).or_raise();
    let req = request::parse_write(v).or_raise();
    JsonB(ops::write(req))
}

/// `memory_write` for the tenant `user_id`: the form Citus runs wholly on that tenant's worker
/// (docs/citus.md "One round trip"). Strict: a NULL argument returns NULL.
#[pg_extern(volatile, parallel_unsafe, strict)]
fn memory_write_for(user_id: &str, request: Json) -> JsonB {
    crate::pg::citus::routed(user_id, || memory_write(Some(request)))
}

/// The bulk path: a JSON array of memory_write requests, embedded together (one provider call),
/// then written in order, each seeing the ones before it, so the result equals one-by-one
/// writes. Returns the array of responses. All or nothing.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_write_batch(requests: Option<Json>) -> JsonB {
    let Json(v) = validate::required("requests", requests.as_ref()).or_raise();
    let Value::Array(items) = v else {
        raise(
            SqlState::InvalidParameterValue,
            "requests must be a JSON array of memory_write requests",
            None,
        )
    };
    crate::pg::limits::batch("requests", items.len());
    let reqs: Vec<WriteRequest> = items
        .iter()
        .enumerate()
        .map(|(i, r)| {
            request::parse_write(r).unwrap_or_else(|e| {
                raise(
                    SqlState::InvalidParameterValue,
                    format!("requests[{i}]: {e}"),
                    None,
                )
            })
        })
        .collect();
    JsonB(ops::write_batch(reqs))
}
