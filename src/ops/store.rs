//! The store (docs/api.md "Store"): LangGraph's `BaseStore` — namespaced key → JSON documents
//! with semantic search over chosen fields — for the SQL functions of src/api/store.rs and their
//! batch form. What the arguments may be is memory_core::store's; the tables and the audit
//! trigger are sql/store.sql's; the statements sql/queries/store_*.sql.

use crate::embed::{self, vector_text, write as embedding};
use crate::error::{raise, OrRaise};
use crate::ops::{idempotency, screen};
use crate::pg::{spi, tenant, vector};
use memory_core::request::Idempotency;
use memory_core::store::{self as rules, Index};
use memory_core::SqlState;
use pgrx::datum::Interval;
use pgrx::JsonB;
use serde_json::{json, Value};

/// A vector's model when the caller computed it (the packages' own `embed`, clients/).
pub const CLIENT_MODEL: &str = "client";

/// One put, checked.
pub struct Put {
    pub namespace: Vec<String>,
    pub key: String,
    pub value: Value,
    pub index: Index,
    pub ttl: Option<Interval>,
    /// Vectors the caller computed, by field (`{"title": [...], "$": [...]}`).
    pub embeddings: Option<Vec<(String, Vec<f32>)>>,
}

/// `embeddings`: an object of field → array of finite numbers (1 to 16,000 of them).
pub fn embeddings_arg(v: Option<&Value>) -> Option<Vec<(String, Vec<f32>)>> {
    match v {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(
            o.iter()
                .map(|(k, v)| (k.clone(), vector_arg("embeddings", v)))
                .collect(),
        ),
        Some(_) => raise(
            SqlState::InvalidParameterValue,
            "invalid \"embeddings\": must be a JSON object",
            Some("{\"field\": [0.1, ...], ...}: a vector per indexed field".into()),
        ),
    }
}

/// A vector given as JSON (`embeddings`' values, a batch search's `query_embedding`): 1 to
/// 16,000 finite numbers (22023 otherwise).
fn vector_arg(field: &str, v: &Value) -> Vec<f32> {
    let nums: Option<Vec<f32>> = v
        .as_array()
        .filter(|a| !a.is_empty() && a.len() <= 16_000)
        .and_then(|a| {
            a.iter()
                .map(|x| x.as_f64().filter(|x| x.is_finite()).map(|x| x as f32))
                .collect()
        });
    nums.unwrap_or_else(|| {
        raise(
            SqlState::InvalidParameterValue,
            format!(
                "invalid \"{field}\": each vector must be an array of 1 to 16000 finite numbers"
            ),
            None,
        )
    })
}

/// The transaction's time, passed to the statements that compute with it and a column: Citus
/// refuses now() there (docs/citus.md).
fn now() -> Option<pgrx::datum::TimestampWithTimeZone> {
    spi::one_kept::<pgrx::datum::TimestampWithTimeZone>("SELECT now()", &[], "reading the time")
}

/// Writes an item (creating or overwriting it) and its vectors; `{namespace, key, event,
/// created_at, updated_at, indexed}` (event `created` or `updated`). With an idempotency key a
/// repeat answers as the first call did (src/ops/idempotency.rs).
pub fn put(user: &str, p: Put, key: Option<&Idempotency>) -> Value {
    idempotency::once(user, "store_put", key, || put_unkeyed(user, p))
}

fn put_unkeyed(user: &str, p: Put) -> Value {
    crate::pg::limits::value_bytes("value", p.value.to_string().len());
    // Screened as every write is (src/ops/screen.rs): the document's strings; the names it is
    // kept under (kept in the history event too) refused rather than rewritten.
    screen::identifiers("namespace label", p.namespace.iter().map(String::as_str));
    screen::identifier("key", &p.key);
    let value = screen::json("store", Some(user), &p.value);
    let now = now();
    // Kept plans: a put's statements were parsed and planned at every call (docs/performance.md
    // "A store put").
    let (created, id, created_at, updated_at) = spi::row_kept(
        include_str!("../../sql/queries/store_put.sql"),
        &[
            user.into(),
            p.namespace.clone().into(),
            p.key.as_str().into(),
            JsonB(value.clone()).into(),
            p.ttl.into(),
            now.into(),
        ],
        "writing a store item",
        |r| {
            Ok((
                r.get::<bool>(1)?.unwrap_or(false),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<JsonB>(3)?.map(|j| j.0).unwrap_or(Value::Null),
                r.get::<JsonB>(4)?.map(|j| j.0).unwrap_or(Value::Null),
            ))
        },
    )
    .unwrap_or_else(|| raise(SqlState::SystemError, "store_put wrote no row", None));
    spi::run_kept(
        "DELETE FROM memory.store_vectors WHERE user_id = $1 AND namespace = $2 AND key = $3",
        &[
            user.into(),
            p.namespace.clone().into(),
            p.key.as_str().into(),
        ],
        "replacing a store item's vectors",
    );
    let texts = rules::to_embed(&value, &p.index);
    let rows: Vec<(String, String, Option<String>, Option<String>)> = match &p.embeddings {
        // The caller's vectors, for the fields it gave; the text kept where it is known.
        Some(given) => given
            .iter()
            .map(|(field, v)| {
                let text = texts
                    .iter()
                    .find(|t| &t.0 == field)
                    .map(|t| t.1.clone())
                    .unwrap_or_default();
                (
                    field.clone(),
                    text,
                    Some(vector_text(v)),
                    Some(CLIENT_MODEL.to_string()),
                )
            })
            .collect(),
        None => {
            let refs: Vec<&str> = texts.iter().map(|t| t.1.as_str()).collect();
            let vecs = embedding::for_writes(&refs);
            texts
                .iter()
                .zip(vecs)
                .map(|((field, text), e)| {
                    let (v, m) = e.columns();
                    (field.clone(), text.clone(), v, m.map(str::to_string))
                })
                .collect()
        }
    };
    for (field, text, v, model) in &rows {
        spi::run_kept(
            &format!(
                "INSERT INTO memory.store_vectors (user_id, namespace, key, field, text, embedding, embedding_model) VALUES ($1, $2, $3, $4, $5, $6::{}, $7)",
                vector::unsized_ty()
            ),
            &[
                user.into(),
                p.namespace.clone().into(),
                p.key.as_str().into(),
                field.as_str().into(),
                text.as_str().into(),
                v.clone().into(),
                model.clone().into(),
            ],
            "storing a store item's vector",
        );
    }
    json!({
        "namespace": p.namespace, "key": p.key, "id": id,
        "event": if created { "created" } else { "updated" },
        "created_at": created_at, "updated_at": updated_at, "indexed": rows.len(),
    })
}

/// The live item, or `None`; `refresh` pushes a ttl item's expiry back.
pub fn get(user: &str, namespace: &[String], key: &str, refresh: bool) -> Option<Value> {
    spi::one_opt::<JsonB>(
        include_str!("../../sql/queries/store_get.sql"),
        &[
            user.into(),
            namespace.to_vec().into(),
            key.into(),
            refresh.into(),
            now().into(),
        ],
        "reading a store item",
    )
    .map(|j| j.0)
}

/// Deletes the item; whether there was one.
pub fn delete(user: &str, namespace: &[String], key: &str) -> bool {
    spi::one_opt::<bool>(
        "DELETE FROM memory.store_items WHERE user_id = $1 AND namespace = $2 AND key = $3 RETURNING true",
        &[user.into(), namespace.to_vec().into(), key.into()],
        "deleting a store item",
    )
    .unwrap_or(false)
}

/// One search, checked.
pub struct Search {
    pub prefix: Vec<String>,
    pub query: Option<String>,
    pub filter: Value,
    pub limit: i64,
    pub offset: i64,
    pub refresh: bool,
    /// The caller's query vector (compared with the vectors it supplied on put).
    pub query_embedding: Option<Vec<f32>>,
}

/// A page of items, best first (each with `score`: cosine similarity, or null).
pub fn search(user: &str, s: Search) -> Vec<Value> {
    let (vec, model) = match (&s.query_embedding, s.query.as_deref()) {
        (Some(v), _) => (Some(vector_text(v)), Some(CLIENT_MODEL.to_string())),
        (None, Some(q)) if !q.trim().is_empty() => {
            crate::pg::limits::query("query", q);
            match embed::query_vector(q, "store_search") {
                Some((m, v)) => (Some(vector_text(&v)), Some(m.id)),
                None => (None, None),
            }
        }
        _ => (None, None),
    };
    // Without a vector every score is NULL: a constant, so the page is the newest items.
    let score = if vec.is_some() {
        include_str!("../../sql/queries/store_search_score.sql").trim_end()
    } else {
        "NULL::float8"
    };
    // Equalities to a scalar are one containment test (C, and the same answer as
    // memory._store_match's); the other conditions go to memory._store_match, skipped when none.
    let (contains, rest) = rules::split_filter(&s.filter);
    let matching = if rest.as_array().is_some_and(|a| !a.is_empty()) {
        "memory._store_match(s.value, $3)"
    } else {
        "true"
    };
    let q = include_str!("../../sql/queries/store_search.sql")
        .replace("{score}", score)
        .replace("{match}", matching)
        .replace("{op}", &vector::cosine_op())
        .replace("{vector_dims}", &vector::dims_fn())
        .replace("{vector}", &vector::unsized_ty());
    spi::rows_mut(
        &q,
        &[
            user.into(),
            s.prefix.into(),
            JsonB(rest).into(),
            s.limit.into(),
            s.offset.into(),
            vec.into(),
            model.into(),
            s.refresh.into(),
            now().into(),
            JsonB(contains).into(),
        ],
        "searching the store",
        |r| Ok(r.get::<JsonB>(1)?.map(|j| j.0).unwrap_or(Value::Null)),
    )
}

/// The namespaces of live items matching `prefix` and `suffix`, cut to `max_depth` labels.
pub fn namespaces(
    user: &str,
    prefix: Vec<String>,
    suffix: Vec<String>,
    max_depth: Option<i32>,
    limit: i64,
    offset: i64,
) -> Vec<Vec<String>> {
    if let Some(d) = max_depth.filter(|d| *d < 1) {
        raise(
            SqlState::InvalidParameterValue,
            format!("invalid \"max_depth\": {d} (at least 1)"),
            None,
        );
    }
    spi::rows(
        include_str!("../../sql/queries/store_namespaces.sql"),
        &[
            user.into(),
            prefix.into(),
            suffix.into(),
            max_depth.into(),
            limit.into(),
            offset.into(),
        ],
        "listing store namespaces",
        |r| {
            Ok(r.get::<Vec<Option<String>>>(1)?
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect())
        },
    )
}

fn strings(field: &str, v: Option<&Value>) -> Vec<Option<String>> {
    match v {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| match x {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                _ => raise(
                    SqlState::InvalidParameterValue,
                    format!("invalid \"{field}\": labels must be strings"),
                    None,
                ),
            })
            .collect(),
        Some(_) => raise(
            SqlState::InvalidParameterValue,
            format!("invalid \"{field}\": must be an array of labels"),
            None,
        ),
    }
}

fn op_str<'a>(op: &'a Value, field: &str) -> Option<&'a str> {
    match op.get(field) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => raise(
            SqlState::InvalidParameterValue,
            format!("invalid \"{field}\": must be a string"),
            None,
        ),
    }
}

fn op_bool(op: &Value, field: &str, default: bool) -> bool {
    match op.get(field) {
        None | Some(Value::Null) => default,
        Some(Value::Bool(b)) => *b,
        Some(_) => raise(
            SqlState::InvalidParameterValue,
            format!("invalid \"{field}\": must be true or false"),
            None,
        ),
    }
}

fn op_int(op: &Value, field: &str) -> Option<i64> {
    match op.get(field) {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_i64().unwrap_or_else(|| {
            raise(
                SqlState::InvalidParameterValue,
                format!("invalid \"{field}\": must be an integer"),
                None,
            )
        })),
    }
}

/// A ttl in minutes (LangGraph's unit; fractions allowed), as an interval.
pub fn ttl_minutes(v: Option<&Value>) -> Option<Interval> {
    match v {
        None | Some(Value::Null) => None,
        Some(x) => match x
            .as_f64()
            .filter(|m| m.is_finite() && *m > 0.0 && *m <= 5.256e7)
        {
            Some(m) => Some(Interval::from_seconds(m * 60.0)),
            None => raise(
                SqlState::InvalidParameterValue,
                "invalid \"ttl\": minutes, more than 0 and at most 100 years",
                None,
            ),
        },
    }
}

/// The keys each kind of operation of store_batch takes: a key outside them is refused (a
/// misspelt `ttl` or an `idempotency_key` the batch ignored used to pass silently).
fn op_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "get" => &["op", "namespace", "key", "refresh_ttl"],
        "put" => &[
            "op",
            "namespace",
            "key",
            "value",
            "index",
            "ttl",
            "embeddings",
            "idempotency_key",
        ],
        "delete" => &["op", "namespace", "key", "value"],
        "search" => &[
            "op",
            "namespace_prefix",
            "query",
            "filter",
            "limit",
            "offset",
            "refresh_ttl",
            "query_embedding",
        ],
        "list_namespaces" => &["op", "prefix", "suffix", "max_depth", "limit", "offset"],
        _ => &[],
    }
}

/// A store ttl given as an interval (store_put): more than 0, at most 100 years, and no part
/// negative (`'-1 mon +31 days'` comes to a day by a 30-day month and to nothing, or less, on
/// the calendar: the item would be born expired).
pub fn ttl_interval(t: &Interval) -> Interval {
    const MAX_MICROS: i128 = 100 * 365 * 86_400 * 1_000_000;
    let total = i128::from(t.months()) * 30 * 86_400 * 1_000_000
        + i128::from(t.days()) * 86_400 * 1_000_000
        + i128::from(t.micros());
    if t.months() < 0 || t.days() < 0 || t.micros() < 0 || total <= 0 || total > MAX_MICROS {
        raise(
            SqlState::InvalidParameterValue,
            "invalid \"ttl\": more than 0 and at most 100 years, with no negative part",
            None,
        );
    }
    *t
}

/// store_batch: each operation in order, one answer each (`get`: the item or null; `put` and
/// `delete`: null; `search`: the list of items; `list_namespaces`: the list of namespaces), in
/// the caller's transaction: all of them happen or none.
pub fn batch(user: &str, ops: &[Value]) -> Value {
    let answers: Vec<Value> = ops
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let kind = op_str(op, "op").unwrap_or_else(|| {
                raise(
                    SqlState::InvalidParameterValue,
                    format!("operation {i}: \"op\" is required (get, put, delete, search, list_namespaces)"),
                    None,
                )
            });
            if let Some(obj) = op.as_object() {
                let allowed = op_keys(kind);
                if let Some(bad) = obj.keys().find(|k| !allowed.is_empty() && !allowed.contains(&k.as_str())) {
                    raise(
                        SqlState::InvalidParameterValue,
                        format!(
                            "operation {i}: unknown key \"{}\" for op \"{kind}\" (it takes {})",
                            memory_core::render::inline(&bad.chars().take(64).collect::<String>()),
                            allowed.join(", ")
                        ),
                        None,
                    );
                }
            }
            match kind {
                "get" => {
                    let ns = rules::namespace(&strings("namespace", op.get("namespace"))).or_raise();
                    let key = op_str(op, "key").unwrap_or_default();
                    rules::key(key).or_raise();
                    get(user, &ns, key, op_bool(op, "refresh_ttl", true)).unwrap_or(Value::Null)
                }
                "put" | "delete" => {
                    let ns = rules::namespace(&strings("namespace", op.get("namespace"))).or_raise();
                    let key = op_str(op, "key").unwrap_or_default().to_string();
                    rules::key(&key).or_raise();
                    match op.get("value") {
                        // LangGraph's PutOp with value None is a delete.
                        None | Some(Value::Null) => {
                            delete(user, &ns, &key);
                        }
                        Some(v) if kind == "put" => {
                            rules::value(v).or_raise();
                            // With an idempotency key, store_put's rules: a repeat is answered
                            // once, a reuse with another body refused.
                            let idem = op_str(op, "idempotency_key").map(|k| {
                                idempotency::of_call("store_put", Some(k), || {
                                    vec![
                                        ("namespace", json!(ns)),
                                        ("key", json!(key)),
                                        ("value", v.clone()),
                                        ("index", op.get("index").cloned().unwrap_or(Value::Null)),
                                        ("ttl_minutes", op.get("ttl").cloned().unwrap_or(Value::Null)),
                                        ("embeddings", op.get("embeddings").cloned().unwrap_or(Value::Null)),
                                    ]
                                })
                            });
                            let p = Put {
                                namespace: ns,
                                key,
                                value: v.clone(),
                                index: rules::index(op.get("index")).or_raise(),
                                ttl: ttl_minutes(op.get("ttl")),
                                embeddings: embeddings_arg(op.get("embeddings")),
                            };
                            match idem.flatten() {
                                Some(k) => {
                                    put(user, p, Some(&k));
                                }
                                None => {
                                    put_unkeyed(user, p);
                                }
                            }
                        }
                        Some(_) => raise(
                            SqlState::InvalidParameterValue,
                            format!("operation {i}: a delete takes no \"value\""),
                            None,
                        ),
                    }
                    Value::Null
                }
                "search" => {
                    let prefix =
                        rules::prefix("namespace_prefix", &strings("namespace_prefix", op.get("namespace_prefix")))
                            .or_raise();
                    let (limit, offset) = rules::page(op_int(op, "limit"), op_int(op, "offset"), 10).or_raise();
                    let s = Search {
                        prefix,
                        query: op_str(op, "query").map(str::to_string),
                        filter: rules::filter(op.get("filter")).or_raise(),
                        limit,
                        offset,
                        refresh: op_bool(op, "refresh_ttl", true),
                        query_embedding: op
                            .get("query_embedding")
                            .filter(|v| !v.is_null())
                            .map(|v| vector_arg("query_embedding", v)),
                    };
                    Value::Array(search(user, s))
                }
                "list_namespaces" => {
                    let prefix = rules::prefix("prefix", &strings("prefix", op.get("prefix"))).or_raise();
                    let suffix = rules::prefix("suffix", &strings("suffix", op.get("suffix"))).or_raise();
                    let (limit, offset) = rules::page(op_int(op, "limit"), op_int(op, "offset"), 100).or_raise();
                    let depth = op_int(op, "max_depth").map(|d| d.clamp(-1, 1000) as i32);
                    json!(namespaces(user, prefix, suffix, depth, limit, offset))
                }
                other => raise(
                    SqlState::InvalidParameterValue,
                    format!("operation {i}: unknown op \"{other}\" (get, put, delete, search, list_namespaces)"),
                    None,
                ),
            }
        })
        .collect();
    Value::Array(answers)
}

/// The tenant a store call acts for.
pub fn user(arg: Option<&str>) -> String {
    tenant::resolve(arg)
}
