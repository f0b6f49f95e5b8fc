//! memory_query, the single retrieval tool (docs/api.md, docs/design.md "One query tool"), and
//! what is built on the same ranking: memory_search, memory_context and query_plan.
//!
//! The hybrid search engine (src/ops/search.rs) ranks the pool; the allowlists, threshold,
//! top_k, the delta header (src/ops/delta.rs) and the token budget are applied here.

use crate::error::{raise, OrRaise, SpiOk};
use crate::gucs;
use crate::ops::search::{self, Hit};
use crate::ops::{blocks, delta};
use crate::pg::events::{self, Event, Node};
use crate::pg::lookup::{self, Owned};
use crate::pg::{spi, tenant, vector};
use memory_core::budget;
use memory_core::render;
use memory_core::request::{self, Filters, QueryRequest, ReturnMode};
use memory_core::validate;
use memory_core::when;
use memory_core::SqlState;
use pgrx::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Related bullets per item in "full" mode (docs/api.md: up to 2).
const RELATED_PER_ITEM: i64 = 2;

/// The categories this request may see: the agent's allowlist (docs/design.md "Categories and allowlists") intersected with
/// what it asked for. `None` = no restriction. Asking for a category outside the allowlist is
/// 42501, whatever the filters say.
pub fn allowed_categories(
    user: &str,
    agent: Option<&str>,
    requested: Option<&[String]>,
) -> Option<Vec<String>> {
    let Some(agent) = agent else {
        return requested.map(<[String]>::to_vec);
    };
    let configured = spi::one_opt::<bool>(
        "SELECT EXISTS (SELECT 1 FROM memory.allowlists WHERE user_id = $1)",
        &[user.into()],
        "reading allowlists",
    )
    .unwrap_or(false);
    if !configured {
        return requested.map(<[String]>::to_vec);
    }
    let allow: Vec<String> = spi::one_opt::<Vec<String>>(
        include_str!("../../sql/queries/query_allowlist.sql"),
        &[user.into(), agent.into()],
        "reading an allowlist",
    )
    .unwrap_or_default();
    if allow.is_empty() {
        raise(
            SqlState::InsufficientPrivilege,
            format!("agent \"{agent}\" has no category allowlist"),
            Some("add it to the allowlists with memory_configure".into()),
        );
    }
    match requested {
        None => Some(allow),
        Some(req) => {
            let bad: Vec<&str> = req
                .iter()
                .filter(|c| !allow.contains(c))
                .map(String::as_str)
                .collect();
            if !bad.is_empty() {
                raise(
                    SqlState::InsufficientPrivilege,
                    format!(
                        "agent \"{agent}\" may not read categories: {}",
                        bad.join(", ")
                    ),
                    Some(format!("its allowlist is: {}", allow.join(", "))),
                );
            }
            Some(req.to_vec())
        }
    }
}

fn related(user: &str, id: &str, categories: Option<&[String]>) -> Vec<String> {
    spi::rows(
        include_str!("../../sql/queries/query_related.sql"),
        &[
            user.into(),
            id.into(),
            categories.map(<[String]>::to_vec).into(),
            RELATED_PER_ITEM.into(),
        ],
        "reading related memories",
        |r| r.get::<String>(1).map(Option::unwrap_or_default),
    )
}

/// For each of `hits`, its strongest related memory not among them, as a bullet
/// (`(YYYY-MM-DD) [category] text`), by id.
pub fn related_bullets(
    user: &str,
    hits: &[Hit],
    categories: Option<&[String]>,
) -> HashMap<String, String> {
    if hits.is_empty() {
        return HashMap::new();
    }
    let ids: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
    spi::rows_generic(
        include_str!("../../sql/queries/query_related_bullets.sql"),
        &[
            user.into(),
            ids.into(),
            categories.map(<[String]>::to_vec).into(),
        ],
        "reading related memories",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                render::bullet(
                    r.get::<String>(2)?.as_deref(),
                    r.get::<String>(3)?.as_deref(),
                    &r.get::<String>(4)?.unwrap_or_default(),
                ),
            ))
        },
    )
    .into_iter()
    .collect()
}

/// The whole of memory_query once the request is parsed.
pub fn run_query(q: &QueryRequest) -> Value {
    let user = tenant::resolve(q.filters.user_id.as_deref());
    let resolved = with_entity(&user, q);
    let q = resolved.as_ref().unwrap_or(q);
    if let Some(agent) = &q.agent {
        validate::id("agent", Some(agent)).or_raise();
    }
    let categories = allowed_categories(&user, q.agent.as_deref(), q.categories.as_deref());
    let reference = q.reference_time.unwrap_or_else(when::now);
    let window = crate::pg::fulltext::time_window(&user, &q.query, reference);
    // Context modes: `rag` categories within their rag_length, so the ranking is
    // asked for more to fill what the caps leave out; `all` categories first.
    let caps = if q.context_modes {
        rag_caps(&user)
    } else {
        HashMap::new()
    };
    let asked = if caps.is_empty() {
        q.top_k
    } else {
        (q.top_k * 2).min(request::MAX_TOP_K as usize)
    };
    let mut hits = with_spaces(&user, q.agent.as_deref(), spaces_asked(q), |owners| {
        search::memories(
            owners,
            &q.query,
            q.embedding.as_deref(),
            &q.filters,
            categories.as_deref(),
            asked,
            window,
            q.rerank.unwrap_or_else(gucs::rerank),
        )
    });
    within_caps(&mut hits, &caps);
    let found = hits.len();
    if let Some(t) = q.threshold {
        hits.retain(|h| h.similarity.is_none_or(|s| s >= t));
    }
    let above_threshold = hits.len();
    hits.truncate(q.top_k);
    // The categories in context `all`, first and every time, unless the request narrows recall
    // in a way they would not pass (filters beyond the tenant and agent, kinds, a time).
    if q.context_modes && !q.filters.narrows() {
        let always = always_in_context(&user, categories.as_deref());
        hits.retain(|h| !always.iter().any(|a| a.id == h.id));
        hits.splice(0..0, always);
    }
    let (header, revision) = match &q.thread_id {
        Some(t) => delta::header(&user, t, q.since_rev, categories.as_deref()),
        None => (None, 0),
    };
    let lines: Vec<String> = hits.iter().map(Hit::line).collect();
    let enc = gucs::token_encoding();
    let fit = match q.budget_tokens {
        Some(b) => {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            budget::fit(enc, b, header.as_deref(), &refs)
        }
        None => budget::Fit {
            used_tokens: header.as_deref().map_or(0, |h| enc.count(h))
                + lines.iter().map(|l| enc.count(l)).sum::<usize>(),
            header: header.clone(),
            items: hits.len(),
        },
    };
    hits.truncate(fit.items);
    let mut items: Vec<Value> = hits
        .iter()
        .zip(&lines)
        .map(|(h, line)| item(q, &user, categories.as_deref(), h, line))
        .collect();
    let mut used_tokens = fit.used_tokens;
    if q.mode == ReturnMode::Bullets {
        // Each bullet's strongest related memory, while the budget has room: counted as the
        // lines are (docs/api.md "Bullets").
        let related = related_bullets(&user, &hits, categories.as_deref());
        for (it, h) in items.iter_mut().zip(&hits) {
            let Some(line) = related.get(&h.id) else {
                continue;
            };
            let n = enc.count(line);
            if q.budget_tokens.is_none_or(|b| used_tokens + n <= b) {
                it["related"] = json!([line]);
                used_tokens += n;
            }
        }
    }
    // Access is counted for the caller's own memories; a space's are the space's to count.
    crate::ops::access::record(
        &user,
        &hits
            .iter()
            .filter(|h| h.space.is_none())
            .map(|h| h.id.clone())
            .collect::<Vec<_>>(),
    );
    events::record(Event {
        thread: q.thread_id.as_deref(),
        memory_id: hits.first().map(|h| h.id.as_str()),
        category: hits.first().and_then(|h| h.category.as_deref()),
        sim: hits.first().and_then(|h| h.similarity).map(|s| s as f32),
        ..Event::new(&user, Node::Context, "search")
    });
    let mut out = json!({
        "header": fit.header,
        "revision": revision,
        "items": items,
        "used_tokens": used_tokens,
    });
    if items_empty(&out) {
        out["empty_reason"] = json!(empty_reason(q, &user, found, above_threshold));
    }
    if q.explain {
        out["explain"] = json!({
            "time_window": window.map(|(a, b)| json!([when::day_text(a), when::day_text(b)])),
            "reference_time": when::rfc3339(reference),
            "pool": found,
        });
    }
    out
}

/// The spaces a request narrows its reading to (`"spaces"`; every granted one when absent), and
/// none with `entity`: entities are the caller's own, so no space is read.
fn spaces_asked(q: &QueryRequest) -> Option<&[String]> {
    match &q.entity {
        Some(_) => Some(&[]),
        None => q.spaces.as_deref(),
    }
}

/// `search` run over the caller's own memories and those of every space granted to it (for
/// `agent`; `only` narrows them, docs/api.md "Spaces"): one search, one ranking, by the owners'
/// statistics together, each space's hits labelled with it (src/ops/search/memories.rs `Owners`).
pub fn with_spaces(
    user: &str,
    agent: Option<&str>,
    only: Option<&[String]>,
    search: impl Fn(&search::Owners) -> Vec<Hit>,
) -> Vec<Hit> {
    let owners = search::Owners {
        user: user.to_string(),
        spaces: crate::pg::spaces::readable(agent, only),
    };
    if owners.spaces.is_empty() {
        return search(&owners);
    }
    if crate::pg::citus::present() {
        // On Citus, one routed query per owner, merged by score, each ranked by its own
        // statistics: one statement over several owners' shards would be a multi-shard query,
        // whose correlated lookups Citus does not run (docs/citus.md "Spaces").
        return crate::pg::spaces::as_agent(agent, || {
            let mut hits = search(&search::Owners::only(user));
            for (key, name) in &owners.spaces {
                hits.extend(search(&search::Owners::only(key)).into_iter().map(|h| Hit {
                    space: Some(name.clone()),
                    ..h
                }));
            }
            hits.sort_by(|a, b| b.score.total_cmp(&a.score));
            hits
        });
    }
    crate::pg::spaces::as_agent(agent, || search(&owners))
}

/// With `"entity"`, the request narrowed to the memories linked to the entity it names
/// (docs/design.md "Entities"); `None` without one.
fn with_entity(user: &str, q: &QueryRequest) -> Option<QueryRequest> {
    let e = q.entity.as_ref()?;
    if e.chars().count() > memory_core::entities::MAX_NAME_CHARS {
        raise(
            SqlState::InvalidParameterValue,
            format!(
                "invalid \"entity\": longer than {} characters",
                memory_core::entities::MAX_NAME_CHARS
            ),
            None,
        );
    }
    let mut r = q.clone();
    r.filters.entity_ids = Some(crate::ops::entities::lookup(user, e));
    Some(r)
}

/// At most `rag_length` memories of each category in context `rag` (`caps`), best first.
fn within_caps(hits: &mut Vec<Hit>, caps: &HashMap<String, usize>) {
    if caps.is_empty() {
        return;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    hits.retain(|h| match h.category.as_ref().and_then(|c| caps.get(c)) {
        Some(cap) => {
            let n = seen
                .entry(h.category.clone().unwrap_or_default())
                .or_insert(0);
            *n += 1;
            *n <= *cap
        }
        None => true,
    });
}

/// One result as the request's `return` mode shows it.
fn item(q: &QueryRequest, user: &str, categories: Option<&[String]>, h: &Hit, line: &str) -> Value {
    let mut item = match q.mode {
        ReturnMode::Bullets => json!({ "id": h.id, "category": h.category, "text": line }),
        ReturnMode::Full => json!({
            "id": h.id, "category": h.category, "text": line, "content": h.content,
            "score": round4(h.score), "importance": h.importance, "tags": h.tags,
            "metadata": h.metadata, "updated_at": h.updated_at, "happened_at": h.happened,
            "related": related(&owner_of(user, h), &h.id, categories),
        }),
    };
    if let Some(space) = &h.space {
        item["space"] = json!(space);
    }
    if let Some(by) = &h.superseded_by {
        item["superseded_by"] = json!(by);
    }
    if q.explain {
        item["explain"] = explain(h);
    }
    item
}

/// The tenant key a hit's rows carry: the caller's, or its space's.
fn owner_of(user: &str, h: &Hit) -> String {
    match &h.space {
        Some(s) => memory_core::spaces::key(s),
        None => user.to_string(),
    }
}

/// Why nothing came back (docs/api.md "Empty results"): an empty memory and a query that
/// matched nothing look alike otherwise.
fn empty_reason(
    q: &QueryRequest,
    user: &str,
    found: usize,
    above_threshold: usize,
) -> &'static str {
    if q.filters.entity_ids.as_ref().is_some_and(Vec::is_empty) {
        "unknown_entity"
    } else if found > 0 && above_threshold == 0 {
        "below_threshold"
    } else if above_threshold > 0 {
        "over_budget"
    } else if has_memories(user) {
        "no_match"
    } else {
        "no_memories"
    }
}

/// A memory file as recall shows it (its path and summary): `(YYYY-MM-DD) [file]
/// path "title": the best passage`, the day it last changed first like a memory's, the path
/// for memory_file_read. One line, every field rendered (memory_core::render).
fn file_bullet(h: &search::FileHit) -> String {
    let title = h
        .title
        .as_deref()
        .map(|t| format!(" {}", render::quoted(t)))
        .unwrap_or_default();
    render::bullet(
        (!h.day.is_empty()).then_some(h.day.as_str()),
        Some("file"),
        &format!("{}{title}: {}", h.path, h.snippet),
    )
}

/// The categories in context `rag` with a `rag_length`, and that length.
fn rag_caps(user: &str) -> HashMap<String, usize> {
    spi::rows_generic(
        include_str!("../../sql/queries/query_rag_caps.sql"),
        &[user.into()],
        "reading rag lengths",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<i32>(2)?.unwrap_or(0).max(0) as usize,
            ))
        },
    )
    .into_iter()
    .collect()
}

/// The memories of the categories in context `all` the caller may read
/// (sql/queries/query_context_all.sql), as recall shows them: pool `context_all`, no score.
fn always_in_context(user: &str, categories: Option<&[String]>) -> Vec<Hit> {
    spi::rows_generic(
        include_str!("../../sql/queries/query_context_all.sql"),
        &[user.into(), categories.map(<[String]>::to_vec).into()],
        "reading the categories always in context",
        |r| {
            Ok(Hit {
                id: r.get::<String>(1)?.unwrap_or_default(),
                category: r.get::<String>(2)?,
                text: r.get::<String>(3)?.unwrap_or_default(),
                content: r.get::<String>(4)?,
                importance: r.get::<i16>(5)?.unwrap_or(0),
                tags: r.get::<Vec<String>>(6)?.unwrap_or_default(),
                metadata: r
                    .get::<crate::pg::json::JsonText>(7)?
                    .map(|j| j.value())
                    .unwrap_or(Value::Null),
                updated_at: r.get::<String>(8)?.unwrap_or_default(),
                happened: r.get::<String>(9)?.unwrap_or_default(),
                superseded_by: None,
                similarity: None,
                score: 0.0,
                parts: Default::default(),
                pool: search::Pool::ContextAll,
                space: None,
            })
        },
    )
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

fn items_empty(out: &Value) -> bool {
    out["items"].as_array().is_none_or(Vec::is_empty)
}

/// Whether the tenant has any active memory (only asked when a query found nothing).
fn has_memories(user: &str) -> bool {
    spi::one_opt::<bool>(
        "SELECT EXISTS (SELECT 1 FROM memory.items WHERE user_id = $1 AND state = 'active')",
        &[user.into()],
        "checking for memories",
    )
    .unwrap_or(false)
}

/// An item's `explain`: what each signal added to its score (they add up to `score`), its
/// cosine similarity and the side of the search that found it.
fn explain(h: &Hit) -> Value {
    let mut signals = serde_json::Map::new();
    for (name, v) in h.parts.named() {
        signals.insert(name.into(), json!(v));
    }
    json!({
        "score": h.score,
        "signals": signals,
        "similarity": h.similarity,
        "pool": h.pool.name(),
    })
}

/// Name of the SQL-level prepared statement `query_plan` explains the pool statement through.
const PLAN_STATEMENT: &str = "memory_ext_query_plan";

/// query_plan: the plans of the two statements memory_query runs for `q` (EXPLAIN, text format; with
/// `measure`, EXPLAIN ANALYZE: it runs them): the seeds as planned for this call, then the pool
/// statement's generic plan, as memory_query keeps it. For DBAs, and for the tests that prove
/// the indexes are used.
pub fn plan(q: &QueryRequest, measure: bool) -> String {
    let user = tenant::resolve(q.filters.user_id.as_deref());
    let categories = allowed_categories(&user, q.agent.as_deref(), q.categories.as_deref());
    // The owners memory_query reads (`with_spaces`): the caller and its granted spaces in one
    // statement; on Citus each owner is a statement of its own, explained here for the caller.
    let owners = search::Owners {
        user: user.clone(),
        spaces: if crate::pg::citus::present() {
            vec![]
        } else {
            crate::pg::spaces::readable(q.agent.as_deref(), spaces_asked(q))
        },
    };
    crate::pg::spaces::as_agent(q.agent.as_deref(), || {
        plan_for(q, &owners, categories, measure)
    })
}

/// `plan` for these owners, under the agent `plan` set.
fn plan_for(
    q: &QueryRequest,
    owners: &search::Owners,
    categories: Option<Vec<String>>,
    measure: bool,
) -> String {
    let st = search::Statements::new(
        owners,
        &q.query,
        q.embedding.as_deref(),
        &q.filters,
        categories.as_deref(),
        q.top_k,
    );
    let how = if measure {
        "ANALYZE, COSTS OFF, TIMING ON"
    } else {
        "COSTS OFF"
    };
    let lines = |t: pgrx::spi::SpiTupleTable<'_>| {
        t.map(|r| r.get::<String>(1).map(Option::unwrap_or_default))
            .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    };
    vector::with_iterative_scan(|| {
        // EXPLAIN, PREPARE and DEALLOCATE are utility statements: SPI refuses them read-only.
        Spi::connect_mut(|c| {
            let mut out = vec![];
            if let Some(sql) = &st.lexical_sql {
                out.push(
                    "-- keyword candidates (sql/queries/search_memories_lexical.sql, read as the extension's owner)"
                        .to_string(),
                );
                out.extend(crate::pg::owner::as_owner(|| {
                    c.update(&format!("EXPLAIN ({how}) {sql}"), None, &st.seed_args)
                        .and_then(lines)
                })?);
            }
            out.push(
                "-- seeds (sql/queries/search_memories_seed.sql, planned for each call)".into(),
            );
            let seed_args = st.seed_args_for(c)?;
            out.extend(lines(c.update(
                &format!("EXPLAIN ({how}) {}", st.seed_sql),
                None,
                &seed_args,
            )?)?);
            // The candidates read once: the seeds run with the arguments just explained.
            let (sql, args) = st.pool(st.seeds_with(c, &seed_args)?.all());
            // A generic plan is what EXPLAIN EXECUTE of a prepared statement shows under
            // force_generic_plan (PostgreSQL 15 has no EXPLAIN (GENERIC_PLAN)). EXECUTE's
            // arguments cannot be SPI parameters: they go in as literals of their types.
            let n = args.len();
            let exprs: Vec<String> = (1..=n)
                .map(|i| {
                    format!("quote_nullable(${i}) || '::' || format_type(pg_typeof(${i}), NULL)")
                })
                .collect();
            let row = c
                .select(&format!("SELECT {}", exprs.join(", ")), None, &args)?
                .first();
            let literals = (1..=n)
                .map(|i| row.get::<String>(i).map(Option::unwrap_or_default))
                .collect::<Result<Vec<_>, _>>()?;
            let types: Vec<&str> = literals
                .iter()
                .map(|l| l.rsplit_once("::").map_or("", |t| t.1))
                .collect();
            if !c
                .select(
                    "SELECT 1 FROM pg_prepared_statements WHERE name = $1",
                    None,
                    &[PLAN_STATEMENT.into()],
                )?
                .is_empty()
            {
                c.update(&format!("DEALLOCATE {PLAN_STATEMENT}"), None, &[])?;
            }
            c.update(
                &format!("PREPARE {PLAN_STATEMENT} ({}) AS {sql}", types.join(", ")),
                None,
                &[],
            )?;
            out.push(
                "-- pool (sql/queries/search_memories_pool.sql, one generic plan per backend)"
                    .into(),
            );
            let pool = spi::with_generic_plan(|| {
                c.update(
                    &format!(
                        "EXPLAIN ({how}) EXECUTE {PLAN_STATEMENT}({})",
                        literals.join(", ")
                    ),
                    None,
                    &[],
                )
                .and_then(lines)
            });
            c.update(&format!("DEALLOCATE {PLAN_STATEMENT}"), None, &[])?;
            out.extend(pool?);
            Ok::<_, pgrx::spi::Error>(out)
        })
        .spi("explaining a query")
    })
    .join("\n")
}

/// A memory_search row: the ranked memory with its kind and time as Postgres types.
pub struct Ranked {
    pub id: pgrx::Uuid,
    pub kind: String,
    pub category: Option<String>,
    pub text: String,
    pub score: f64,
    pub importance: i16,
    pub updated_at: TimestampWithTimeZone,
    /// When it happened (event time).
    pub happened_at: TimestampWithTimeZone,
}

/// memory_search: the same ranking for SQL users, `top_k` rows under `q`'s filters.
pub fn ranked(q: &QueryRequest, query: &str, top_k: usize) -> Vec<Ranked> {
    let user = tenant::resolve(q.filters.user_id.as_deref());
    let window = crate::pg::fulltext::time_window(&user, query, when::now());
    let mut hits = search::memories(
        &search::Owners::only(&user),
        query,
        None,
        &q.filters,
        None,
        top_k,
        window,
        gucs::rerank(),
    );
    hits.truncate(top_k);
    let ids: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
    // Kind and timestamps as Postgres types, in rank order.
    let rows: Vec<(
        pgrx::Uuid,
        String,
        TimestampWithTimeZone,
        TimestampWithTimeZone,
    )> = spi::rows(
        include_str!("../../sql/queries/query_ranked.sql"),
        &[user.as_str().into(), ids.into()],
        "reading ranked memories",
        |r| {
            Ok((
                r.get::<pgrx::Uuid>(1)?
                    .unwrap_or(pgrx::Uuid::from_bytes([0; 16])),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<TimestampWithTimeZone>(3)?
                    .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
                r.get::<TimestampWithTimeZone>(4)?
                    .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
            ))
        },
    );
    crate::ops::access::record(
        &user,
        &hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
    );
    hits.into_iter()
        .zip(rows)
        .map(|(h, (id, kind, updated_at, happened_at))| Ranked {
            id,
            kind,
            category: h.category,
            text: h.text,
            score: (h.score * 10_000.0).round() / 10_000.0,
            importance: h.importance,
            updated_at,
            happened_at,
        })
        .collect()
}

/// memory_context: the memory section of a prompt, in one call (read-before-think,
/// docs/design.md "Episodes"): compiled core blocks, the delta header, and a
/// `[MEMORY CONTEXT]` block: the memories of categories in context `all` (0.5.0), then the
/// best `memories` memories and `files` memory files, taken in turn (recall combines
/// both searches into one message). The result never exceeds `budget` tokens: the blocks go in
/// whole (a budget smaller than them is 22023), then the header and as many lines as fit, the
/// lowest-ranked leaving first.
pub fn context(
    agent_id: &str,
    thread_id: &str,
    query: &str,
    budget: usize,
    memories: usize,
    files: usize,
    summaries: &[String],
) -> String {
    let user = lookup::owner(Owned::Agent, agent_id);
    let now = spi::one_opt::<TimestampWithTimeZone>("SELECT now()", &[], "reading now()")
        .unwrap_or_else(|| raise(SqlState::NoDataFound, "now() is NULL", None));
    let blocks = blocks::compile(&user, agent_id, now);
    let enc = gucs::token_encoding();
    let block_tokens = enc.count(&blocks);
    if block_tokens > budget {
        raise(
            SqlState::InvalidParameterValue,
            format!("budget_tokens {budget} is smaller than the compiled core blocks ({block_tokens} tokens)"),
            Some("raise budget_tokens, or shorten the blocks".into()),
        );
    }
    // An agent that the tenant's allowlists leave out recalls no memories here, rather than
    // failing the whole prompt.
    let shut_out = spi::one_opt::<bool>(
        include_str!("../../sql/queries/query_shut_out.sql"),
        &[user.as_str().into(), agent_id.into()],
        "reading allowlists",
    )
    .unwrap_or(false);
    // The summaries asked for (docs/api.md "Summaries"), after the blocks: as many as fit, in
    // the order asked (none for an agent the allowlists shut out: it reads no memory, so no
    // summary either).
    let blocks = if shut_out {
        blocks
    } else {
        with_summaries(&user, agent_id, blocks, summaries, budget)
    };
    let block_tokens = enc.count(&blocks);
    let left = budget - block_tokens;
    if shut_out || left == 0 {
        return blocks;
    }
    let q = QueryRequest {
        agent: Some(agent_id.to_string()),
        query: query.to_string(),
        categories: None,
        filters: Filters {
            user_id: Some(user.clone()),
            ..Default::default()
        },
        thread_id: Some(thread_id.to_string()),
        since_rev: None,
        // Asked for one at least: the header and the categories in context `all` come with it.
        top_k: memories.max(1),
        mode: ReturnMode::Bullets,
        budget_tokens: Some(left),
        threshold: None,
        embedding: None,
        explain: true,
        reference_time: None,
        rerank: None,
        context_modes: true,
        entity: None,
        // Every space granted to the caller (for the agent), as memory_query reads them.
        spaces: None,
    };
    let r = run_query(&q);
    let header = r["header"].as_str().map(str::to_string);
    // The categories in context 'all' come first (run_query puts them there), then what the
    // query recalled and the files, in turn: a memory, a file, a memory...
    let all: Vec<&Value> = r["items"].as_array().into_iter().flatten().collect();
    let (mut items, ranked): (Vec<String>, Vec<(String, String)>) = {
        let text = |i: &&Value| i["text"].as_str().map(str::to_string);
        let always = |i: &&&Value| i["explain"]["pool"] == "context_all";
        (
            all.iter().filter(always).filter_map(text).collect(),
            all.iter()
                .filter(|i| !always(i))
                .take(memories)
                .filter_map(|i| Some((text(i)?, i["id"].as_str()?.to_string())))
                .collect(),
        )
    };
    // Under each recalled memory, its strongest related memory that is not in the context
    // already (memory_query's `related`): the first lines to leave when the budget is short.
    let related: Vec<Option<String>> = ranked
        .iter()
        .map(|(_, id)| {
            all.iter()
                .find(|i| i["id"].as_str() == Some(id.as_str()))
                .and_then(|i| i["related"][0].as_str())
                .map(str::to_string)
        })
        .collect();
    let ranked: Vec<String> = ranked.into_iter().map(|(t, _)| t).collect();
    let mut extra: Vec<Option<String>> = vec![None; items.len()];
    let found: Vec<String> = if files == 0 {
        vec![]
    } else {
        search::files(&user, query, None, files)
            .iter()
            .map(file_bullet)
            .collect()
    };
    let (mut m, mut f) = (ranked.into_iter().zip(related), found.into_iter());
    loop {
        match (m.next(), f.next()) {
            (None, None) => break,
            (a, b) => {
                if let Some((text, rel)) = a {
                    items.push(text);
                    extra.push(rel);
                }
                if let Some(file) = b {
                    items.push(file);
                    extra.push(None);
                }
            }
        }
    }
    // Joining adds separators and can merge tokens: count the assembled text, and let the
    // lowest-ranked memories go (recalled ones before those always in context; then the
    // header) until it fits.
    loop {
        let mut out = blocks.clone();
        if let Some(h) = &header {
            out.push_str("\n\n");
            out.push_str(h);
        }
        if !items.is_empty() {
            out.push_str("\n\n[MEMORY CONTEXT]");
            for (i, rel) in items.iter().zip(&extra) {
                out.push_str("\n- ");
                out.push_str(i);
                if let Some(r) = rel {
                    out.push_str("\n  related: ");
                    out.push_str(r);
                }
            }
        }
        if enc.count(&out) <= budget {
            return out;
        }
        if let Some(last) = extra.iter_mut().rev().find(|r| r.is_some()) {
            *last = None;
        } else if items.pop().is_none() {
            return blocks;
        } else {
            extra.pop();
        }
    }
}

/// `blocks` followed by a `[SUMMARIES]` section with the current answers of the summaries
/// `names` of `user` (src/ops/summaries.rs), in that order, as many as fit in `budget` tokens.
/// A name with no summary or no answer yet is left out: a prompt does not fail because a
/// summary was dropped or is not written yet; so is one resting on a memory of a category the
/// agent's allowlist does not admit.
fn with_summaries(
    user: &str,
    agent_id: &str,
    blocks: String,
    names: &[String],
    budget: usize,
) -> String {
    if names.is_empty() {
        return blocks;
    }
    let allowed = allowed_categories(user, Some(agent_id), None);
    let mut lines: Vec<String> =
        crate::ops::summaries::readable(user, Some(names), allowed.as_deref())
            .into_iter()
            .map(|(n, _, a, _, _)| format!("- {n}: {}", memory_core::render::inline(&a)))
            .collect();
    let enc = gucs::token_encoding();
    loop {
        if lines.is_empty() {
            return blocks;
        }
        let out = format!("{blocks}\n\n[SUMMARIES]\n{}", lines.join("\n"));
        if enc.count(&out) <= budget {
            return out;
        }
        lines.pop();
    }
}
