//! memory_write (docs/api.md "Memories"): validation, exact-duplicate no-op, near-duplicate update,
//! relation edges, and `memory_write_batch`, the bulk path.
//!
//! One call is one statement from the caller's view: any error aborts it and nothing of it
//! stays. History, change log and revisions come from the triggers.

use crate::api::embed as emb;
use crate::api::events::{self, Event, Node};
use crate::embed::{self, vector_text, ActiveModel};
use crate::error::{raise, OrRaise, SpiOk};
use crate::gucs;
use crate::pg::json::Json;
use crate::pg::{spi, tenant, vector};
use memory_core::dedupe::{self, Neighbour};
use memory_core::request::{self, WriteRequest};
use memory_core::{text, validate, SqlState};
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

/// Neighbours looked at for dedupe and linking (docs/design.md "Relations": the top neighbours).
const NEIGHBOURS: i64 = 5;

/// A request with its text checked and its vector (if any) decided.
struct Prepared {
    req: WriteRequest,
    user: String,
    text: String,
    vector: Option<Vec<f32>>,
    /// Why there is no vector, when embedding was tried and failed.
    failure: Option<(String, String)>,
}

fn prepare(req: WriteRequest) -> (WriteRequest, String, String) {
    if let Some(c) = &req.content {
        crate::pg::limits::value_bytes("content", c.len());
    }
    let user = tenant::resolve(req.user_id.as_deref());
    // An update keeps its memory's kind unless the request names one.
    let existing_kind = match (&req.id, &req.kind) {
        (Some(id), None) => spi::one_opt::<String>(
            "SELECT kind FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
            &[user.as_str().into(), id.as_str().into()],
            "reading a memory's kind",
        ),
        _ => None,
    };
    let kind = req
        .kind
        .clone()
        .or(existing_kind)
        .unwrap_or_else(|| "semantic".into());
    let text = text::check(&kind, &req.text).or_raise();
    (req, user, text)
}

/// Query text with `{vector}` replaced by pgvector's schema-qualified type.
fn sql(q: &str) -> String {
    q.replace("{vector}", &vector::unsized_ty())
}

/// Embeds the texts of `reqs` that need it, in one provider call.
fn prepare_all(reqs: Vec<WriteRequest>) -> (Option<ActiveModel>, Vec<Prepared>) {
    let model = embed::active_model().ok();
    let mut out: Vec<Prepared> = reqs
        .into_iter()
        .map(|r| {
            let (req, user, text) = prepare(r);
            Prepared {
                req,
                user,
                text,
                vector: None,
                failure: None,
            }
        })
        .collect();
    // Supplied vectors are taken as the active model's; their size must match it.
    for p in out.iter_mut() {
        if let Some(v) = p.req.embedding.take() {
            let Some(m) = &model else {
                raise(
                    SqlState::InvalidParameterValue,
                    "invalid \"embedding\": no embedding model is configured",
                    None,
                )
            };
            m.check_supplied(&v);
            p.vector = Some(v);
        }
    }
    let todo: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].vector.is_none())
        .collect();
    if !todo.is_empty() && gucs::embed_on_write() {
        let texts: Vec<&str> = todo.iter().map(|&i| out[i].text.as_str()).collect();
        match embed::embed(&texts) {
            Ok((_, vectors)) => {
                for (i, v) in todo.into_iter().zip(vectors) {
                    out[i].vector = Some(v);
                }
            }
            Err(e) => {
                let id = model
                    .as_ref()
                    .map_or("unconfigured".to_string(), |m| m.id.clone());
                for i in todo {
                    out[i].failure = Some((id.clone(), e.to_string()));
                }
            }
        }
    }
    (model, out)
}

fn thread_revision(user: &str, thread: Option<&str>) -> Value {
    match thread {
        None => Value::Null,
        Some(t) => spi::one_kept::<i64>(
            "SELECT revision FROM memory.threads WHERE user_id = $1 AND thread_id = $2",
            &[user.into(), t.into()],
            "reading a revision",
        )
        .map_or(Value::Null, Value::from),
    }
}

fn neighbours(user: &str, model: &ActiveModel, v: &[f32]) -> Vec<Neighbour> {
    let ty = vector::ty(v.len());
    let op = vector::cosine_op();
    let q = format!(
        "SELECT id::text, (1 - (embedding::{ty} {op} $2::{ty}))::real, text
         FROM memory.items
         WHERE user_id = $1 AND state = 'active' AND embedding_model = {m}
         ORDER BY embedding::{ty} {op} $2::{ty}
         LIMIT {NEIGHBOURS}",
        m = vector::literal(&model.id)
    );
    vector::with_iterative_scan(|| {
        Spi::connect(|c| {
            spi::with_prepared(c, &q, &[user.into(), vector_text(v).into()], |t| {
                t.map(|r| {
                    Ok(Neighbour {
                        id: r.get::<String>(1)?.unwrap_or_default(),
                        similarity: r.get::<f32>(2)?.unwrap_or(0.0),
                        text: r.get::<String>(3)?.unwrap_or_default(),
                    })
                })
                .collect::<Result<Vec<_>, pgrx::spi::Error>>()
            })
        })
        .spi("finding neighbours")
    })
}

fn link(user: &str, from: &str, to: &str, kind: &str, strength: f32) {
    spi::run_kept(
        "INSERT INTO memory.relations (user_id, from_id, to_id, relation_type, strength)
         VALUES ($1, $2::uuid, $3::uuid, $4, $5)
         ON CONFLICT (user_id, from_id, to_id, relation_type) DO NOTHING",
        &[
            user.into(),
            from.into(),
            to.into(),
            kind.into(),
            strength.into(),
        ],
        "linking memories",
    );
}

/// Writes one prepared request; the response of docs/api.md.
fn write_one(model: Option<&ActiveModel>, p: Prepared) -> Value {
    let Prepared {
        req,
        user,
        text,
        vector: mut vec,
        mut failure,
    } = p;
    // A full model registry stores the memory without a vector (found by keyword meanwhile)
    // and leaves it to the backfill, like a provider outage: the write is never lost.
    if let (Some(v), Some(m)) = (&vec, model) {
        if let Err(e) = emb::ensure_model(m, v.len()) {
            failure = Some((m.id.clone(), e));
            vec = None;
        }
    }
    let (vec_text, model_id) = match (&vec, model) {
        (Some(v), Some(m)) => (Some(vector_text(v)), Some(m.id.clone())),
        _ => (None, None),
    };
    let tags: Option<Vec<String>> = req.tags.clone();
    let happened = req.happened_at.map(|t| t.to_rfc3339());
    let metadata = req.metadata.clone().map(JsonB);

    // Update of a named memory.
    if let Some(id) = &req.id {
        let done = spi::one_opt::<String>(
            &sql(include_str!("../../sql/queries/write_update.sql")),
            &[
                user.as_str().into(),
                id.as_str().into(),
                text.as_str().into(),
                req.category.clone().into(),
                req.importance.into(),
                req.pinned.into(),
                tags.clone().into(),
                metadata.into(),
                req.content.clone().into(),
                vec_text.clone().into(),
                model_id.clone().into(),
                happened.clone().into(),
                req.kind.clone().into(),
            ],
            "updating a memory",
        );
        let Some(id) = done else {
            raise(
                SqlState::NoDataFound,
                format!("memory {id} not found"),
                None,
            )
        };
        if let Some((m, e)) = failure {
            emb::record_failure(&user, "item", &id, &m, &e);
        }
        let thread = spi::one_opt::<String>(
            "SELECT thread_id FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
            &[user.as_str().into(), id.as_str().into()],
            "reading a thread",
        );
        events::record(Event {
            thread: thread.as_deref(),
            memory_id: Some(&id),
            category: req.category.as_deref(),
            ..Event::new(&user, Node::Hotpath, "update")
        });
        return json!({ "id": id, "event": "updated", "revision": thread_revision(&user, thread.as_deref()), "related": [] });
    }

    // Exact duplicate: refresh it, change nothing else.
    if let Some(id) = spi::with_custom_plan(|| {
        spi::one_kept::<String>(
            "UPDATE memory.items SET last_accessed_at = now(), access_count = access_count + 1
         WHERE user_id = $1 AND state = 'active'
           AND content_hash = md5(lower(regexp_replace(btrim($2), '\\s+', ' ', 'g')))
           AND id = (SELECT id FROM memory.items WHERE user_id = $1 AND state = 'active'
                       AND content_hash = md5(lower(regexp_replace(btrim($2), '\\s+', ' ', 'g')))
                     ORDER BY created_at LIMIT 1)
         RETURNING id::text",
            &[user.as_str().into(), text.as_str().into()],
            "checking for an exact duplicate",
        )
    }) {
        events::record(Event {
            thread: req.thread_id.as_deref(),
            status: "skipped",
            memory_id: Some(&id),
            category: req.category.as_deref(),
            ..Event::new(&user, Node::Hotpath, "create")
        });
        return json!({ "id": id, "event": "noop", "revision": thread_revision(&user, req.thread_id.as_deref()), "related": [] });
    }

    let near = match (&vec, model) {
        (Some(v), Some(m)) => neighbours(&user, m, v),
        _ => vec![],
    };
    let best_sim = near.iter().map(|n| n.similarity).reduce(f32::max);
    let decision = if near.is_empty() {
        Default::default()
    } else {
        dedupe::decide(
            &text,
            &near,
            gucs::merge_threshold() as f32,
            gucs::link_threshold() as f32,
        )
    };

    let (id, event) = if let Some(target) = &decision.merge_into {
        // Near duplicate: the newer wording replaces the older; tags, importance and pinning
        // keep the stronger of both.
        let id = spi::one_opt::<String>(
            &sql(include_str!("../../sql/queries/write_merge.sql")),
            &[
                user.as_str().into(),
                target.as_str().into(),
                text.as_str().into(),
                req.category.clone().into(),
                req.importance.into(),
                req.pinned.into(),
                tags.clone().into(),
                metadata.into(),
                req.content.clone().into(),
                vec_text.clone().into(),
                model_id.clone().into(),
            ],
            "updating a near duplicate",
        )
        .unwrap_or_else(|| {
            raise(
                SqlState::NoDataFound,
                format!("memory {target} vanished"),
                None,
            )
        });
        (id, "updated")
    } else {
        let previous = req.thread_id.as_deref().and_then(|t| {
            spi::one_kept::<String>(
                "SELECT id::text FROM memory.items WHERE user_id = $1 AND thread_id = $2 AND state = 'active'
                 ORDER BY created_at DESC, id DESC LIMIT 1",
                &[user.as_str().into(), t.into()],
                "finding the thread's last memory",
            )
        });
        let id = spi::one_kept::<String>(
            &sql(include_str!("../../sql/queries/write_insert.sql")),
            &[
                user.as_str().into(),
                req.kind.as_deref().unwrap_or("semantic").into(),
                req.category.clone().into(),
                text.as_str().into(),
                req.content.clone().into(),
                tags.clone().into(),
                req.importance.unwrap_or(2).into(),
                req.pinned.unwrap_or(false).into(),
                metadata.into(),
                req.agent_id.clone().into(),
                req.run_id.clone().into(),
                req.actor_id.clone().into(),
                req.role.clone().into(),
                req.thread_id.clone().into(),
                happened.clone().into(),
                vec_text.clone().into(),
                model_id.clone().into(),
            ],
            "inserting a memory",
        )
        .unwrap_or_default();
        // Consecutive memories of a thread form an episode (rank.rs uses these edges).
        if let Some(prev) = previous {
            link(&user, &id, &prev, "follows", 1.0);
        }
        (id, "created")
    };
    if let Some((m, e)) = failure {
        emb::record_failure(&user, "item", &id, &m, &e);
    }
    let mut related = vec![];
    for (to, strength) in &decision.links {
        if *to != id {
            link(&user, &id, to, "related_to", *strength);
            related.push(json!({ "id": to, "strength": strength }));
        }
    }
    let thread = if event == "updated" {
        spi::one_opt::<String>(
            "SELECT thread_id FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
            &[user.as_str().into(), id.as_str().into()],
            "reading a thread",
        )
    } else {
        req.thread_id.clone()
    };
    events::record(Event {
        thread: thread.as_deref(),
        // A near-duplicate folded into an existing memory is the seed's "merge".
        op: if event == "updated" {
            "merge"
        } else {
            "create"
        },
        memory_id: Some(&id),
        category: req.category.as_deref(),
        sim: best_sim,
        ..Event::new(&user, Node::Hotpath, "create")
    });
    json!({ "id": id, "event": event, "revision": thread_revision(&user, thread.as_deref()), "related": related })
}

/// One memory_write request given as JSON, for other modules (episodes index their summary
/// through the same path as any memory).
pub fn write_json(v: &Value) -> Value {
    let req = request::parse_write(v).or_raise();
    let (model, mut prepared) = prepare_all(vec![req]);
    let p = prepared
        .pop()
        .unwrap_or_else(|| raise(SqlState::InvalidParameterValue, "empty request", None));
    write_one(model.as_ref(), p)
}

/// Stores a memory: `{"id", "event": "created"|"updated"|"noop", "revision", "related": [...]}`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_write(request: Option<Json>) -> JsonB {
    let Json(v) = validate::required("request", request.as_ref()).or_raise();
    let req = request::parse_write(v).or_raise();
    let (model, mut prepared) = prepare_all(vec![req]);
    let p = prepared
        .pop()
        .unwrap_or_else(|| raise(SqlState::InvalidParameterValue, "empty request", None));
    JsonB(write_one(model.as_ref(), p))
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
    let (model, prepared) = prepare_all(reqs);
    JsonB(Value::Array(
        prepared
            .into_iter()
            .map(|p| write_one(model.as_ref(), p))
            .collect(),
    ))
}
