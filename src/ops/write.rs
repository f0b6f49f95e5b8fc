//! memory_write (docs/api.md "Memories"): validation, exact-duplicate no-op, near-duplicate update,
//! relation edges, and `memory_write_batch`, the bulk path.
//!
//! One call is one statement from the caller's view: any error aborts it and nothing of it
//! stays. History, change log and revisions come from the triggers.

use crate::embed::write::{self as embedding, WriteEmbedding};
use crate::embed::{self, vector_text};
use crate::error::{raise, OrRaise, SpiOk};
use crate::gucs;
use crate::ops::{consent, idempotency, screen};
use crate::pg::events::{self, Event, Node};
use crate::pg::{spi, tenant, vector};
use memory_core::dedupe::{self, Neighbour};
use memory_core::request::{self, Idempotency, WriteRequest};
use memory_core::{text, SqlState};
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Neighbours looked at for dedupe and linking (docs/design.md "Relations": the top neighbours).
const NEIGHBOURS: i64 = 5;

/// A request with its text checked and its vector (or why it has none) decided.
struct Prepared {
    req: WriteRequest,
    user: String,
    text: String,
    embedding: WriteEmbedding,
    /// Screening's decisions, recorded by whoever writes next (src/ops/screen.rs `record`);
    /// a `flag` among them holds the memory as a proposal instead.
    screened: Vec<screen::Decision>,
}

fn prepare(req: WriteRequest) -> (WriteRequest, String, String, Vec<screen::Decision>) {
    // One size rule for every write path (src/pg/limits.rs): the SQL call, a tool call,
    // extraction and an approved proposal all come through here.
    crate::pg::limits::value_bytes("text", req.text.len());
    if let Some(c) = &req.content {
        crate::pg::limits::value_bytes("content", c.len());
    }
    if let Some(m) = &req.metadata {
        crate::pg::limits::value_bytes("metadata", m.to_string().len());
    }
    let user = owner_of(&req);
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
    // Screened before anything is stored or embedded (src/ops/screen.rs), under the policy
    // for this memory's category (or a superuser's for this call).
    let policy = screen::memory_policy(&user, req.category.as_deref(), req.screen.as_ref());
    let screened = screen::memory(&policy, &text);
    let mut decisions = screened.decisions;
    let mut req = req;
    if let Some(c) = req.content.take() {
        let c = screen::memory(&policy, &c);
        decisions.extend(c.decisions);
        req.content = Some(c.text);
    }
    // Every other field stored or shown to a model: the names refused rather than rewritten
    // (a category is also a word of memory.lexicon, an actor an entity's name), the tags and
    // metadata screened as the text is (tags are in archival_search's answers).
    // A category is stored normalised (`card_4111_...`): its words are read apart again.
    if let Some(c) = &req.category {
        screen::identifier("category", &c.replace('_', " "));
    }
    for (arg, v) in [
        ("thread_id", &req.thread_id),
        ("agent_id", &req.agent_id),
        ("run_id", &req.run_id),
        ("actor_id", &req.actor_id),
    ] {
        if let Some(v) = v {
            screen::identifier(arg, v);
        }
    }
    if let Some(tags) = req.tags.take() {
        let tags = tags
            .into_iter()
            .map(|t| {
                let t = screen::memory(&policy, &t);
                decisions.extend(t.decisions);
                t.text
            })
            .collect();
        req.tags = Some(tags);
    }
    if let Some(m) = req.metadata.take() {
        req.metadata = Some(screen::json("memory", Some(&user), &m));
    }
    (req, user, screened.text, decisions)
}

/// Query text with `{vector}` replaced by pgvector's schema-qualified type.
fn sql(q: &str) -> String {
    q.replace("{vector}", &vector::unsized_ty())
}

/// Checks every request and decides its vector: a supplied one (taken as the active model's),
/// else the text embedded through the one write path of src/embed/write.rs (one provider call
/// for all of them).
fn prepare_all(reqs: Vec<WriteRequest>) -> Vec<Prepared> {
    let model = embed::active_model().ok();
    let mut out: Vec<Prepared> = reqs
        .into_iter()
        .map(|r| {
            let (req, user, text, screened) = prepare(r);
            Prepared {
                req,
                user,
                text,
                embedding: WriteEmbedding::Deferred,
                screened,
            }
        })
        .collect();
    // Supplied vectors are taken as the active model's; their size must match it.
    let mut todo: Vec<usize> = vec![];
    for (i, p) in out.iter_mut().enumerate() {
        match p.req.embedding.take() {
            Some(v) => {
                let Some(m) = &model else {
                    raise(
                        SqlState::InvalidParameterValue,
                        "invalid \"embedding\": no embedding model is configured",
                        None,
                    )
                };
                m.check_supplied(&v);
                p.embedding = embedding::supplied(m, v);
            }
            // What screening holds for approval is embedded when it is approved, not now.
            None if screen::flagged(&p.screened).is_empty() => todo.push(i),
            None => {}
        }
    }
    let texts: Vec<&str> = todo.iter().map(|&i| out[i].text.as_str()).collect();
    let embedded = embedding::for_writes(&texts);
    for (i, e) in todo.into_iter().zip(embedded) {
        out[i].embedding = e;
    }
    out
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

/// The memories nearest `v`, their similarities on the reference scale (memory_core::cosine),
/// which the merge and link thresholds are written in.
fn neighbours(user: &str, model: &str, v: &[f32]) -> Vec<Neighbour> {
    let scale = crate::embed::scale_of(model);
    let q = include_str!("../../sql/queries/write_neighbours.sql")
        .replace("{vt}", &vector::ty_of(model, v.len()))
        .replace("{op}", &vector::cosine_op())
        .replace("{model}", &vector::literal(model));
    vector::with_iterative_scan(|| {
        Spi::connect(|c| {
            spi::rows_prepared(
                c,
                &q,
                &[user.into(), vector_text(v).into(), NEIGHBOURS.into()],
                |r| {
                    Ok(Neighbour {
                        id: r.get::<String>(1)?.unwrap_or_default(),
                        similarity: scale.to_reference(r.get::<f64>(2)?.unwrap_or(0.0)) as f32,
                        text: r.get::<String>(3)?.unwrap_or_default(),
                    })
                },
            )
        })
        .spi("finding neighbours")
    })
}

fn link(user: &str, from: &str, to: &str, kind: &str, strength: f32) {
    spi::run_kept(
        include_str!("../../sql/queries/write_link.sql"),
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

/// A write's columns as its statements take them.
struct Columns<'a> {
    req: &'a WriteRequest,
    user: &'a str,
    text: &'a str,
    tags: Option<Vec<String>>,
    happened: Option<String>,
    metadata: Option<JsonB>,
    vec_text: Option<String>,
    model_id: Option<String>,
}

/// Writes one prepared request; the response of docs/api.md. Four paths: an update of the
/// memory the request names, an exact duplicate refreshed, a near duplicate merged, a new
/// memory inserted; the last two end alike (`finish`).
///
/// Planned with `constraint_exclusion` off, as the searches are (src/pg/vector.rs): every custom
/// plan that reads a partition of memory.items (its foreign keys' checks among them, three a
/// write) otherwise parses the table's ten CHECK constraints from their stored text to prove
/// the partition is not excluded, which hash partitions never are (perf: 1.5% of a write).
fn write_one(p: Prepared) -> Value {
    spi::with_settings(&[(c"constraint_exclusion", c"off")], || {
        write_one_planned(p)
    })
}

fn write_one_planned(p: Prepared) -> Value {
    let Prepared {
        req,
        user,
        text,
        embedding,
        screened: _,
    } = p;
    // A provider outage or a full model registry stores the memory without a vector (found by
    // keyword meanwhile) and leaves it to the backfill: the write is never lost.
    let (vec_text, model_id) = embedding.columns();
    let c = Columns {
        req: &req,
        user: &user,
        text: &text,
        tags: req.tags.clone(),
        happened: req.happened_at.map(|t| t.to_rfc3339()),
        metadata: req.metadata.clone().map(JsonB),
        vec_text,
        model_id: model_id.map(str::to_string),
    };
    if let Some(id) = &req.id {
        return update_named(c, id, &embedding);
    }
    if let Some(out) = refresh_exact(&c) {
        return out;
    }
    let near = match embedding.vector() {
        Some((model, v)) => neighbours(&user, model, v),
        None => vec![],
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
    let (id, event) = match &decision.merge_into {
        Some(target) => (merge_into(c, target), "updated"),
        None => (insert_new(c), "created"),
    };
    embedding.record(&user, "item", &id);
    finish(&req, &user, &text, &id, event, &decision.links, best_sim)
}

/// An update of the memory the request names (`id`).
fn update_named(c: Columns, id: &str, embedding: &WriteEmbedding) -> Value {
    let (req, user) = (c.req, c.user);
    let done = spi::one_opt::<String>(
        &sql(include_str!("../../sql/queries/write_update.sql")),
        &[
            user.into(),
            id.into(),
            c.text.into(),
            req.category.clone().into(),
            req.importance.into(),
            req.pinned.into(),
            c.tags.into(),
            c.metadata.into(),
            req.content.clone().into(),
            c.vec_text.into(),
            c.model_id.into(),
            c.happened.into(),
            req.kind.clone().into(),
            req.language.clone().into(),
        ],
        "updating a memory",
    );
    let Some(id) = done else {
        let immutable = spi::one_opt::<bool>(
            "SELECT metadata -> 'immutable' = 'true'::jsonb FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
            &[user.into(), id.into()],
            "reading a memory",
        );
        if immutable == Some(true) {
            // mem0's `immutable`: such a memory is deleted and written again, never edited.
            raise(
                SqlState::InsufficientPrivilege,
                format!("memory {id} is immutable"),
                Some("forget it (memory_forget) and write the new text as a new memory, or supersede it: {\"supersedes\": \"<id>\"}".into()),
            )
        }
        raise(
            SqlState::NoDataFound,
            format!("memory {id} not found"),
            None,
        )
    };
    embedding.record(user, "item", &id);
    let thread = spi::one_opt::<String>(
        "SELECT thread_id FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
        &[user.into(), id.as_str().into()],
        "reading a thread",
    );
    let actor = spi::one_opt::<String>(
        "SELECT actor_id FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
        &[user.into(), id.as_str().into()],
        "reading an actor",
    );
    // The entities its new text names (src/ops/entities.rs).
    crate::ops::entities::link(user, &id, c.text, actor.as_deref());
    events::record(Event {
        thread: thread.as_deref(),
        memory_id: Some(&id),
        category: req.category.as_deref(),
        ..Event::new(user, Node::Hotpath, "update")
    });
    json!({ "id": id, "event": "updated", "revision": thread_revision(user, thread.as_deref()), "related": [] })
}

/// An exact duplicate: refreshed, nothing else changed; `None` when there is none.
fn refresh_exact(c: &Columns) -> Option<Value> {
    let (req, user) = (c.req, c.user);
    let found = spi::rows_generic(
        include_str!("../../sql/queries/write_exact_find.sql"),
        &[user.into(), c.text.into()],
        "checking for an exact duplicate",
        |r| Ok(r.get::<String>(1)?.unwrap_or_default()),
    )
    .into_iter()
    .next()?;
    let id = spi::with_custom_plan(|| {
        spi::one_kept::<String>(
            include_str!("../../sql/queries/write_exact.sql"),
            &[user.into(), found.as_str().into()],
            "refreshing an exact duplicate",
        )
    })?;
    events::record(Event {
        thread: req.thread_id.as_deref(),
        status: "skipped",
        memory_id: Some(&id),
        category: req.category.as_deref(),
        ..Event::new(user, Node::Hotpath, "create")
    });
    let mut out = json!({ "id": id, "event": "noop", "related": [] });
    if let Some(old) = req.supersedes.as_ref().filter(|o| **o != id) {
        supersede(user, old, &id);
        out["superseded"] = json!(old);
    }
    out["revision"] = json!(thread_revision(user, req.thread_id.as_deref()));
    Some(out)
}

/// A near duplicate: the newer wording replaces the older; tags, importance and pinning keep
/// the stronger of both. Returns the memory's id.
fn merge_into(c: Columns, target: &str) -> String {
    let req = c.req;
    spi::one_opt::<String>(
        &sql(include_str!("../../sql/queries/write_merge.sql")),
        &[
            c.user.into(),
            target.into(),
            c.text.into(),
            req.category.clone().into(),
            req.importance.into(),
            req.pinned.into(),
            c.tags.into(),
            c.metadata.into(),
            req.content.clone().into(),
            c.vec_text.into(),
            c.model_id.into(),
        ],
        "updating a near duplicate",
    )
    .unwrap_or_else(|| {
        raise(
            SqlState::NoDataFound,
            format!("memory {target} vanished"),
            None,
        )
    })
}

/// A new memory, after the last one of its thread (or of its sitting) in an episode edge.
/// Returns its id.
fn insert_new(c: Columns) -> String {
    let (req, user) = (c.req, c.user);
    let previous = match req.thread_id.as_deref() {
        Some(t) => spi::one_kept::<String>(
            include_str!("../../sql/queries/write_previous.sql"),
            &[user.into(), t.into()],
            "finding the thread's last memory",
        ),
        None => spi::one_kept::<String>(
            include_str!("../../sql/queries/write_previous_unthreaded.sql"),
            &[user.into(), c.happened.clone().into()],
            "finding the last memory written without a thread",
        ),
    };
    let id = spi::one_kept::<String>(
        &sql(include_str!("../../sql/queries/write_insert.sql")),
        &[
            user.into(),
            req.kind.as_deref().unwrap_or("semantic").into(),
            req.category.clone().into(),
            c.text.into(),
            req.content.clone().into(),
            c.tags.into(),
            req.importance.unwrap_or(2).into(),
            req.pinned.unwrap_or(false).into(),
            c.metadata.into(),
            req.agent_id.clone().into(),
            req.run_id.clone().into(),
            req.actor_id.clone().into(),
            req.role.clone().into(),
            req.thread_id.clone().into(),
            c.happened.into(),
            c.vec_text.into(),
            c.model_id.into(),
            language_of(user, req.language.as_deref(), &req.text).into(),
        ],
        "inserting a memory",
    )
    .unwrap_or_default();
    // Consecutive memories of a thread form an episode, and so do thread-less memories of
    // one sitting (rank.rs uses these edges).
    if let Some(prev) = previous {
        link(user, &id, &prev, "follows", 1.0);
    }
    id
}

/// What a merged or inserted memory gets next: its entities, its related links, its event,
/// what it supersedes, and the answer.
fn finish(
    req: &WriteRequest,
    user: &str,
    text: &str,
    id: &str,
    event: &str,
    links: &[(String, f32)],
    best_sim: Option<f32>,
) -> Value {
    // The entities it names (src/ops/entities.rs): the same transaction as the memory.
    crate::ops::entities::link(user, id, text, req.actor_id.as_deref());
    let mut related = vec![];
    for (to, strength) in links {
        if to != id {
            link(user, id, to, "related_to", *strength);
            related.push(json!({ "id": to, "strength": strength }));
        }
    }
    let thread = if event == "updated" {
        spi::one_opt::<String>(
            "SELECT thread_id FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
            &[user.into(), id.into()],
            "reading a thread",
        )
    } else {
        req.thread_id.clone()
    };
    events::record(Event {
        thread: thread.as_deref(),
        // A near-duplicate folded into an existing memory is a "merge".
        op: if event == "updated" {
            "merge"
        } else {
            "create"
        },
        memory_id: Some(id),
        category: req.category.as_deref(),
        sim: best_sim,
        ..Event::new(user, Node::Hotpath, "create")
    });
    let mut out = json!({ "id": id, "event": event, "related": related });
    // A near duplicate folded into the memory it supersedes has already replaced its wording.
    if let Some(old) = req.supersedes.as_ref().filter(|o| o.as_str() != id) {
        supersede(user, old, id);
        out["superseded"] = json!(old);
    }
    out["revision"] = json!(thread_revision(user, thread.as_deref()));
    out
}

/// Ends `old` where `new` happens and links it to `new` (sql/queries/write_supersede.sql), in
/// the write's transaction: a memory that is missing or not active fails the whole write.
fn supersede(user: &str, old: &str, new: &str) {
    let done = spi::one_opt::<String>(
        include_str!("../../sql/queries/write_supersede.sql"),
        &[user.into(), old.into(), new.into()],
        "superseding a memory",
    );
    if done.is_some() {
        events::record(Event {
            memory_id: Some(old),
            ..Event::new(user, Node::Hotpath, "supersede")
        });
        return;
    }
    let state = spi::one_opt::<String>(
        "SELECT state FROM memory.items WHERE user_id = $1 AND id = $2::uuid",
        &[user.into(), old.into()],
        "reading a memory's state",
    );
    match state {
        None => raise(
            SqlState::NoDataFound,
            format!("memory {old} not found (supersedes)"),
            None,
        ),
        Some(s) => raise(
            SqlState::InvalidParameterValue,
            format!("memory {old} is {s}: only an active memory can be superseded"),
            None,
        ),
    }
}

/// One memory_write request given as JSON, for other modules (episodes index their summary
/// through the same path as any memory).
pub fn write_json(v: &Value) -> Value {
    let req = request::parse_write(v).or_raise();
    write(req)
}

/// memory_write: stores one checked request; `{"id", "event", "revision", "related"}`. A
/// request with an idempotency key writes once per key (src/ops/idempotency.rs).
pub fn write(req: WriteRequest) -> Value {
    let agent = req.agent_id.clone();
    crate::pg::spaces::as_agent(agent.as_deref(), || write_as_agent(req))
}

/// The tenant key a request writes under: the caller's own, or with `"space"` the space's,
/// once the caller is found to hold `write` on it (src/pg/spaces.rs; 42501 otherwise).
fn owner_of(req: &WriteRequest) -> String {
    let user = tenant::resolve(req.user_id.as_deref());
    match &req.space {
        Some(s) => crate::pg::spaces::writable(s, req.agent_id.as_deref()),
        None => user,
    }
}

fn write_as_agent(req: WriteRequest) -> Value {
    let Some(key) = req.idempotency.clone() else {
        return write_unkeyed(req);
    };
    let user = owner_of(&req);
    idempotency::once(&user, "memory_write", Some(&key), || write_unkeyed(req))
}

fn write_unkeyed(req: WriteRequest) -> Value {
    let p = prepare_all(vec![req])
        .pop()
        .unwrap_or_else(|| raise(SqlState::InvalidParameterValue, "empty request", None));
    write_gated(p)
}

/// One prepared request through the consent gate (src/ops/consent.rs): a proposal instead of
/// a write, or the write (which applies a corroborated proposal).
fn write_gated(p: Prepared) -> Value {
    // Screening's decisions are recorded by the user who writes the rest: the owner where a
    // proposal is written, else the caller (on Citus one transaction must not write a
    // tenant's shards as two users, docs/citus.md).
    let owner_records = |p: &Prepared| {
        crate::pg::owner::as_owner(|| screen::record(&p.user, "memory", &p.screened))
    };
    let flagged = screen::flagged(&p.screened);
    if !flagged.is_empty() {
        owner_records(&p);
        return consent::hold(&p.user, &p.req, &p.text, &flagged);
    }
    match consent::gate(&p.user, &p.req, &p.text) {
        consent::Gate::Write => {
            screen::record(&p.user, "memory", &p.screened);
            write_one(p)
        }
        consent::Gate::Proposed(v) => {
            owner_records(&p);
            v
        }
        // The write and the proposal's decision both as the owner: the decision is the
        // owner's, and Citus refuses a transaction in which two users write to one tenant's
        // shards (docs/citus.md). The tenant was checked when the request was prepared.
        consent::Gate::Corroborated(proposal) => crate::pg::owner::as_owner(|| {
            screen::record(&p.user, "memory", &p.screened);
            let user = p.user.clone();
            let mut out = write_one(p);
            if let Some(id) = out["id"].as_str() {
                consent::applied(&user, &proposal, id);
            }
            out["proposal_id"] = json!(proposal);
            out
        }),
    }
}

/// memory_approve: writes the caller's pending proposal `id` through this write path and
/// records the decision (consent decides, src/ops/consent.rs; the write path applies).
/// `{proposal_id, status, memory_id, event, superseded}`. `by` says who decided when it is not
/// the role (the user in a chat, src/ops/tools/consent.rs).
pub fn approve(id: &str, by: Option<String>) -> Value {
    let taken = consent::take(id, by);
    // The write, the decision and the event as the owner, in that order: the decision is the
    // owner's to write, and Citus refuses a transaction in which two users write to one
    // tenant's shards (docs/citus.md). The proposal was found as the caller, so it is theirs.
    let written = crate::pg::owner::as_owner(|| {
        let written = screen::approving(|| write(taken.req.clone()));
        consent::decided(&taken, id, written["id"].as_str());
        written
    });
    json!({
        "proposal_id": id, "status": "approved", "memory_id": written["id"],
        "event": written["event"], "superseded": written.get("superseded"),
    })
}

/// memory_write_batch: the requests embedded together (one provider call), then written in
/// order, each seeing the ones before it, so the result equals one-by-one writes. Items with an
/// idempotency key claim it first: a repeat is answered as before and neither embedded nor
/// written, and an item repeating an earlier item's key in the same batch gets that item's answer.
pub fn write_batch(reqs: Vec<WriteRequest>) -> Value {
    // The agent grants limited to one agent see: the batch's, when its requests agree on one.
    let agent = reqs.first().and_then(|r| r.agent_id.clone());
    let agent = agent.filter(|a| reqs.iter().all(|r| r.agent_id.as_ref() == Some(a)));
    crate::pg::spaces::as_agent(agent.as_deref(), || write_batch_as_agent(reqs))
}

fn write_batch_as_agent(reqs: Vec<WriteRequest>) -> Value {
    enum Slot {
        Write(Option<Idempotency>, String),
        Answer(Value),
        SameAs(usize),
    }
    let mut slots = Vec::with_capacity(reqs.len());
    let mut todo = vec![];
    let mut first: HashMap<(String, String), (usize, String)> = HashMap::new();
    for (i, req) in reqs.into_iter().enumerate() {
        let Some(k) = req.idempotency.clone() else {
            slots.push(Slot::Write(None, String::new()));
            todo.push(req);
            continue;
        };
        let user = owner_of(&req);
        if let Some((j, body)) = first.get(&(user.clone(), k.key.clone())) {
            if *body != k.body {
                raise(
                    SqlState::InvalidParameterValue,
                    format!("requests[{i}]: idempotency key \"{}\" was already used for a different request (requests[{j}])", k.key),
                    None,
                );
            }
            slots.push(Slot::SameAs(*j));
            continue;
        }
        first.insert((user.clone(), k.key.clone()), (i, k.body.clone()));
        match idempotency::claim(&user, "memory_write", &k) {
            idempotency::Claim::Repeat(v) => slots.push(Slot::Answer(v)),
            idempotency::Claim::Fresh => {
                slots.push(Slot::Write(Some(k), user));
                todo.push(req);
            }
        }
    }
    let mut written = prepare_all(todo).into_iter().map(write_gated);
    let mut out: Vec<Value> = Vec::with_capacity(slots.len());
    for slot in slots {
        let v = match slot {
            Slot::Write(key, user) => {
                let v = written.next().unwrap_or(Value::Null);
                if let Some(k) = key {
                    idempotency::answered(&user, &k, &v);
                }
                v
            }
            Slot::Answer(v) => v,
            Slot::SameAs(j) => out[j].clone(),
        };
        out.push(v);
    }
    Value::Array(out)
}

/// A new memory's language: the request's, else detected, else the tenant's default or usual
/// one (as sql/triggers.sql `memory._set_language` would find it; read here because on Citus
/// the trigger runs on a shard, where reading other distributed tables is refused).
fn language_of(user: &str, given: Option<&str>, text: &str) -> Option<String> {
    if let Some(l) = given {
        return Some(l.to_string());
    }
    if let Some(l) = memory_core::language::detect(text) {
        return Some(l.to_string());
    }
    crate::pg::fulltext::tenant_language(user)
}
