//! The store (docs/api.md "Store"): LangGraph's `BaseStore` as SQL functions — `store_put`,
//! `store_get`, `store_delete`, `store_search`, `store_list_namespaces` and `store_batch`. The
//! arguments are checked by memory_core::store; the work is src/ops/store.rs.

use crate::error::OrRaise;
use crate::ops::idempotency;
use crate::ops::store::{self as ops, Put, Search};
use crate::pg::json::Json;
use memory_core::store as rules;
use memory_core::validate;
use pgrx::datum::Interval;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

fn ns_arg(v: Option<Vec<Option<String>>>) -> Vec<String> {
    rules::namespace(&v.unwrap_or_default()).or_raise()
}

fn key_arg(k: Option<&str>) -> String {
    let k = validate::required("key", k).or_raise();
    rules::key(k).or_raise();
    k.to_string()
}

/// Writes `value` (a JSON object) at (`namespace`, `key`), replacing what was there. `index`:
/// NULL indexes the whole document, `false` nothing, a list of paths those fields (one vector
/// per text). `ttl`: the item expires that long after its last write (or read with
/// refresh_ttl). `embeddings`: vectors the caller computed, `{"field": [...]}`, used instead of
/// the extension's model. Returns `{namespace, key, id, event, created_at, updated_at, indexed}`.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::too_many_arguments)]
fn store_put(
    namespace: Option<Vec<Option<String>>>,
    key: Option<&str>,
    value: Option<Json>,
    index: default!(Option<Json>, "NULL"),
    ttl: default!(Option<Interval>, "NULL"),
    embeddings: default!(Option<Json>, "NULL"),
    idempotency_key: default!(Option<&str>, "NULL"),
    user_id: default!(Option<&str>, "NULL"),
) -> JsonB {
    let namespace = ns_arg(namespace);
    let key = key_arg(key);
    let Json(value) = validate::required("value", value.as_ref()).or_raise();
    rules::value(value).or_raise();
    let index_raw = index.map(|j| j.0).unwrap_or(Value::Null);
    let index = rules::index(Some(&index_raw)).or_raise();
    let ttl = ttl.as_ref().map(ops::ttl_interval);
    let embeddings_raw = embeddings.map(|j| j.0).unwrap_or(Value::Null);
    let user = ops::user(user_id);
    let idem = idempotency::of_call("store_put", idempotency_key, || {
        vec![
            ("namespace", json!(namespace)),
            ("key", json!(key)),
            ("value", value.clone()),
            ("index", index_raw.clone()),
            ("ttl_micros", json!(ttl.map(|t| t.as_micros() as i64))),
            ("embeddings", embeddings_raw.clone()),
        ]
    });
    let p = Put {
        namespace,
        key,
        value: value.clone(),
        index,
        ttl,
        embeddings: ops::embeddings_arg(Some(&embeddings_raw)),
    };
    JsonB(ops::put(&user, p, idem.as_ref()))
}

/// The item at (`namespace`, `key`) as `{namespace, key, value, created_at, updated_at}`, or
/// NULL (none, or expired). `refresh_ttl` pushes an item with a ttl back to expire later.
#[pg_extern(volatile, parallel_unsafe)]
fn store_get(
    namespace: Option<Vec<Option<String>>>,
    key: Option<&str>,
    refresh_ttl: default!(Option<bool>, true),
    user_id: default!(Option<&str>, "NULL"),
) -> Option<JsonB> {
    let namespace = ns_arg(namespace);
    let key = key_arg(key);
    let user = ops::user(user_id);
    ops::get(&user, &namespace, &key, refresh_ttl.unwrap_or(true)).map(JsonB)
}

/// Deletes the item; whether there was one.
#[pg_extern(volatile, parallel_unsafe)]
fn store_delete(
    namespace: Option<Vec<Option<String>>>,
    key: Option<&str>,
    user_id: default!(Option<&str>, "NULL"),
) -> bool {
    let namespace = ns_arg(namespace);
    let key = key_arg(key);
    let user = ops::user(user_id);
    ops::delete(&user, &namespace, &key)
}

/// Items under `namespace_prefix` (`'{}'`: all), best first: with a `query`, by cosine
/// similarity of the item's closest indexed text (`score`, comparable across calls; items
/// without a vector last, score NULL); without one, most recently updated first. `filter`:
/// `{"field": value}` or `{"field": {"$gt": 3}}` ($eq $ne $gt $gte $lt $lte), all must hold.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn store_search(
    namespace_prefix: default!(Option<Vec<Option<String>>>, "'{}'"),
    query: default!(Option<&str>, "NULL"),
    filter: default!(Option<Json>, "NULL"),
    limit: default!(Option<i32>, 10),
    offset: default!(Option<i32>, 0),
    refresh_ttl: default!(Option<bool>, true),
    query_embedding: default!(Option<Vec<Option<f32>>>, "NULL"),
    user_id: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(namespace, Vec<Option<String>>),
        name!(key, String),
        name!(value, JsonB),
        name!(created_at, pgrx::datum::TimestampWithTimeZone),
        name!(updated_at, pgrx::datum::TimestampWithTimeZone),
        name!(score, Option<f64>),
    ),
> {
    let items = search_items(
        namespace_prefix,
        query,
        filter,
        limit,
        offset,
        refresh_ttl,
        query_embedding,
        user_id,
    );
    // The times as the statement wrote them (to_jsonb of a timestamptz), read back exactly.
    let ts = |v: &Value| -> pgrx::datum::TimestampWithTimeZone {
        v.as_str().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            crate::error::raise(
                memory_core::SqlState::SystemError,
                "a store item's time did not parse",
                None,
            )
        })
    };
    let rows: Vec<_> = items
        .into_iter()
        .map(|it| {
            (
                it["namespace"]
                    .as_array()
                    .map(|a| a.iter().map(|x| x.as_str().map(str::to_string)).collect())
                    .unwrap_or_default(),
                it["key"].as_str().unwrap_or_default().to_string(),
                JsonB(it["value"].clone()),
                ts(&it["created_at"]),
                ts(&it["updated_at"]),
                it["score"].as_f64(),
            )
        })
        .collect();
    TableIterator::new(rows)
}

#[allow(clippy::too_many_arguments)]
fn search_items(
    namespace_prefix: Option<Vec<Option<String>>>,
    query: Option<&str>,
    filter: Option<Json>,
    limit: Option<i32>,
    offset: Option<i32>,
    refresh_ttl: Option<bool>,
    query_embedding: Option<Vec<Option<f32>>>,
    user_id: Option<&str>,
) -> Vec<Value> {
    let prefix =
        rules::prefix("namespace_prefix", &namespace_prefix.unwrap_or_default()).or_raise();
    let filter = rules::filter(filter.as_ref().map(|j| &j.0)).or_raise();
    let (limit, offset) = rules::page(limit.map(i64::from), offset.map(i64::from), 10).or_raise();
    let query_embedding = query_embedding.map(|v| {
        let v: Option<Vec<f32>> = v.into_iter().map(|x| x.filter(|x| x.is_finite())).collect();
        match v.filter(|v| !v.is_empty() && v.len() <= 16_000) {
            Some(v) => v,
            None => crate::error::raise(
                memory_core::SqlState::InvalidParameterValue,
                "invalid \"query_embedding\": 1 to 16000 finite numbers",
                None,
            ),
        }
    });
    let user = ops::user(user_id);
    ops::search(
        &user,
        Search {
            prefix,
            query: query.map(str::to_string),
            filter,
            limit,
            offset,
            refresh: refresh_ttl.unwrap_or(true),
            query_embedding,
        },
    )
}

/// The namespaces that hold live items, matching `prefix` and `suffix` label by label (`*`
/// matches any one label), cut to their first `max_depth` labels, each once, in order.
#[pg_extern(volatile, parallel_unsafe)]
fn store_list_namespaces(
    prefix: default!(Option<Vec<Option<String>>>, "'{}'"),
    suffix: default!(Option<Vec<Option<String>>>, "'{}'"),
    max_depth: default!(Option<i32>, "NULL"),
    limit: default!(Option<i32>, 100),
    offset: default!(Option<i32>, 0),
    user_id: default!(Option<&str>, "NULL"),
) -> SetOfIterator<'static, Vec<Option<String>>> {
    let prefix = rules::prefix("prefix", &prefix.unwrap_or_default()).or_raise();
    let suffix = rules::prefix("suffix", &suffix.unwrap_or_default()).or_raise();
    let (limit, offset) = rules::page(limit.map(i64::from), offset.map(i64::from), 100).or_raise();
    let user = ops::user(user_id);
    let out: Vec<Vec<Option<String>>> =
        ops::namespaces(&user, prefix, suffix, max_depth, limit, offset)
            .into_iter()
            .map(|ns| ns.into_iter().map(Some).collect())
            .collect();
    SetOfIterator::new(out)
}

/// LangGraph's `batch`: a list of operations `{"op": "get" | "put" | "delete" | "search" |
/// "list_namespaces", ...}` (the other functions' arguments by name; `ttl` in minutes) run in
/// order in one transaction; one answer per operation, as a JSON array.
#[pg_extern(volatile, parallel_unsafe)]
fn store_batch(ops: Option<Json>, user_id: default!(Option<&str>, "NULL")) -> JsonB {
    let Json(ops) = validate::required("ops", ops.as_ref()).or_raise();
    let Some(list) = ops.as_array() else {
        crate::error::raise(
            memory_core::SqlState::InvalidParameterValue,
            "invalid \"ops\": must be a JSON array of operations",
            None,
        )
    };
    crate::pg::limits::batch("ops", list.len());
    let user = ops::user(user_id);
    JsonB(ops::batch(&user, list))
}
