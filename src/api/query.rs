//! memory_query, the single retrieval tool (docs/api.md, docs/design.md "One query tool"), and the functions built on
//! the same ranking: memory_search, memory_delta, memory_context.
//!
//! SQL gathers a pool (best by vector, best by BM25, and their episode neighbours) with every
//! signal; `memory_core::rank` fuses them; allowlists, threshold, top_k, the delta header and
//! the token budget are applied here.

use crate::api::blocks::compile_for;
use crate::api::events::{self, Event, Node};
use crate::embed::{self, vector_text};
use crate::error::{raise, OrRaise, SpiOk};
use crate::gucs;
use crate::pg::json::Json;
use crate::pg::lookup::{self, Owned};
use crate::pg::{spi, tenant, vector};
use memory_core::budget;
use memory_core::delta::{self, Change};
use memory_core::rank::{self, Candidate, DEFAULT_WEIGHTS};
use memory_core::request::{self, Filters, QueryRequest, ReturnMode};
use memory_core::validate;
use memory_core::SqlState;
use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

/// Related bullets per item in "full" mode (docs/api.md: up to 2).
const RELATED_PER_ITEM: i64 = 2;

/// A memory the ranking returned.
#[derive(Debug, Clone)]
pub struct Hit {
    pub id: String,
    pub category: Option<String>,
    pub text: String,
    pub content: Option<String>,
    pub importance: i16,
    pub tags: Vec<String>,
    pub metadata: Value,
    pub updated_at: String,
    pub similarity: Option<f64>,
    pub score: f64,
}

impl Hit {
    /// The Layer-1 line as it goes into a prompt: `[category] text`.
    pub fn line(&self) -> String {
        match &self.category {
            Some(c) => format!("[{c}] {}", self.text),
            None => self.text.clone(),
        }
    }
}

/// SQL conditions for the filters, with their values appended to `args` (numbered after them).
fn filter_sql(
    f: &Filters,
    categories: Option<&[String]>,
    args: &mut Vec<DatumWithOid<'static>>,
) -> String {
    let mut sql = String::new();
    let mut add = |cond: &str, v: DatumWithOid<'static>, args: &mut Vec<DatumWithOid<'static>>| {
        args.push(v);
        sql.push_str(&cond.replace('$', &format!("${}", args.len())));
    };
    if let Some(v) = &f.agent_id {
        add(" AND i.agent_id = $", v.clone().into(), args);
    }
    if let Some(v) = &f.run_id {
        add(" AND i.run_id = $", v.clone().into(), args);
    }
    if let Some(v) = &f.actor_id {
        add(" AND i.actor_id = $", v.clone().into(), args);
    }
    if let Some(v) = &f.role {
        add(" AND i.role = $", v.clone().into(), args);
    }
    if let Some(v) = &f.kind {
        add(" AND i.kind = $", v.clone().into(), args);
    }
    if let Some(v) = &f.category {
        add(" AND i.category = $", v.clone().into(), args);
    }
    if let Some(v) = &f.tags {
        add(" AND i.tags @> $::text[]", v.clone().into(), args);
    }
    if let Some(v) = f.pinned {
        add(" AND i.pinned = $", v.into(), args);
    }
    if let Some(v) = f.importance_min {
        add(" AND i.importance >= $", v.into(), args);
    }
    if let Some(v) = f.importance_max {
        add(" AND i.importance <= $", v.into(), args);
    }
    if let Some(v) = f.updated_after {
        add(
            " AND i.updated_at > $::timestamptz",
            v.to_rfc3339().into(),
            args,
        );
    }
    if let Some(v) = f.updated_before {
        add(
            " AND i.updated_at < $::timestamptz",
            v.to_rfc3339().into(),
            args,
        );
    }
    if let Some(c) = categories {
        add(" AND i.category = ANY($::text[])", c.to_vec().into(), args);
    }
    sql
}

/// The categories this request may see: the agent's allowlist (docs/design.md "Categories and allowlists") intersected with
/// what it asked for. `None` = no restriction. Asking for a category outside the allowlist is
/// 42501, whatever the filters say.
fn allowed_categories(
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
        "SELECT coalesce(array_agg(category ORDER BY category), '{}') FROM memory.allowlists WHERE user_id = $1 AND agent = $2",
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

/// The query's lexemes as Postgres' english configuration produces them.
pub fn lexemes(query: &str) -> Vec<String> {
    if query.trim().is_empty() {
        return vec![];
    }
    spi::one_opt::<Vec<String>>(
        "SELECT coalesce(array_agg(DISTINCT lexeme ORDER BY lexeme), '{}') FROM unnest(to_tsvector('english', $1))",
        &[query.into()],
        "parsing the query",
    )
    .unwrap_or_default()
}

/// The query's terms as the tenant's statistics see them, read in one statement.
struct Terms {
    /// The query's lexemes (Postgres' english configuration), sorted.
    lexemes: Vec<String>,
    /// Each lexeme's BM25 idf in the tenant, aligned with `lexemes`.
    idf: Vec<f64>,
    /// The tenant's average memory length, for BM25.
    avg_len: f64,
    /// The tsquery over the terms worth a GIN lookup (`memory_core::rank::candidate_terms`);
    /// `None` when none is.
    tsquery: Option<String>,
}

fn terms(user: &str, query: &str) -> Terms {
    let rows: Vec<(String, f64, f64, f64, String)> = if query.trim().is_empty() {
        vec![]
    } else {
        Spi::connect(|c| {
            spi::with_prepared(
                c,
                "SELECT l.lexeme, coalesce(x.df, 0)::float8, coalesce(c.docs, 0)::float8,
                        coalesce(c.total_len, 0)::float8, memory.tenant_lexeme($1)
                 FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', $2))) l
                 LEFT JOIN memory.lexicon x ON x.user_id = $1 AND x.lexeme = l.lexeme
                 LEFT JOIN memory.corpus c ON c.user_id = $1
                 ORDER BY l.lexeme",
                &[user.into(), query.into()],
                |t| {
                    t.map(|r| {
                        Ok((
                            r.get::<String>(1)?.unwrap_or_default(),
                            r.get::<f64>(2)?.unwrap_or(0.0),
                            r.get::<f64>(3)?.unwrap_or(0.0),
                            r.get::<f64>(4)?.unwrap_or(0.0),
                            r.get::<String>(5)?.unwrap_or_default(),
                        ))
                    })
                    .collect::<Result<Vec<_>, pgrx::spi::Error>>()
                },
            )
        })
        .spi("reading term statistics")
    };
    let (docs, total_len) = rows.first().map_or((0.0, 0.0), |r| (r.2, r.3));
    let dfs: Vec<(String, f64)> = rows.iter().map(|r| (r.0.clone(), r.1)).collect();
    let lookup = rank::candidate_terms(&dfs, rank::MAX_LEXICAL_MATCHES);
    Terms {
        lexemes: dfs.iter().map(|(l, _)| l.clone()).collect(),
        idf: dfs
            .iter()
            .map(|(_, df)| rank::bm25_idf(docs, *df))
            .collect(),
        avg_len: rank::bm25_avg_len(docs, total_len),
        tsquery: rows.first().and_then(|r| tsquery(&lookup, &r.4)),
    }
}

/// The tenant's own lexeme, which every memory's and file's tsvector carries
/// (`memory.tenant_lexeme`): ANDed into a tsquery, it keeps a GIN lookup inside the tenant.
pub fn tenant_lexeme(user: &str) -> String {
    spi::one_opt::<String>(
        "SELECT memory.tenant_lexeme($1)",
        &[user.into()],
        "tenant lexeme",
    )
    .unwrap_or_default()
}

/// `('a' | 'b') & '<tenant>'` — quoted tsquery text; `None` without terms.
pub fn tsquery(lex: &[String], tenant: &str) -> Option<String> {
    if lex.is_empty() {
        return None;
    }
    let q = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let terms: Vec<String> = lex.iter().map(|l| q(l)).collect();
    Some(format!("({}) & {}", terms.join(" | "), q(tenant)))
}

/// The two statements memory_query runs for a request: the seeds (custom-planned) and the pool
/// around them (one generic plan per backend), with what they need.
struct Statements {
    /// sql/queries/query_seed.sql with its slots filled, and its parameters.
    seed_sql: String,
    seed_args: Vec<DatumWithOid<'static>>,
    /// The cosine expression of the pool statement (the active model's, or NULL).
    similarity: String,
    user: String,
    vector: Option<String>,
    terms: Terms,
    filters: Filters,
    categories: Option<Vec<String>>,
}

impl Statements {
    /// The pool statement and its parameters for the seeds `ids`.
    fn pool(&self, ids: Vec<pgrx::Uuid>) -> (String, Vec<DatumWithOid<'static>>) {
        let mut args: Vec<DatumWithOid<'static>> = vec![
            self.user.clone().into(),
            ids.into(),
            self.vector.clone().into(),
            self.terms.lexemes.clone().into(),
            self.terms.idf.clone().into(),
            self.terms.avg_len.into(),
        ];
        // The seed statement's conditions again: a neighbour must pass the filters too.
        let filters = filter_sql(&self.filters, self.categories.as_deref(), &mut args);
        let sql = include_str!("../../sql/queries/query_pool.sql")
            .replace("{similarity}", &self.similarity)
            .replace("{filters}", &filters);
        (sql, args)
    }
}

fn build_pool(
    user: &str,
    query: &str,
    supplied: Option<&[f32]>,
    filters: &Filters,
    categories: Option<&[String]>,
    top_k: usize,
) -> Statements {
    let terms = terms(user, query);
    let tsq_some = terms.tsquery.is_some();
    // The query's vector: supplied (taken as the active model's), or embedded. A provider that
    // is down degrades retrieval to keyword-only; it does not fail it.
    let qvec = match supplied {
        Some(v) => {
            let m = embed::active_model().or_raise();
            m.check_supplied(v);
            Some((m, v.to_vec()))
        }
        None => embed::query_vector(query, "searching by keyword only"),
    };
    let vtext = qvec.as_ref().map(|(_, v)| vector_text(v));
    let mut seed_args: Vec<DatumWithOid<'static>> = vec![
        user.to_string().into(),
        vtext.clone().into(),
        terms.tsquery.clone().into(),
        terms.lexemes.clone().into(),
        (rank::lexical_side(top_k) as i64).into(),
        terms.idf.clone().into(),
        terms.avg_len.into(),
        (rank::vector_side(top_k) as i64).into(),
    ];
    let seed_filters = filter_sql(filters, categories, &mut seed_args);
    let (dense, similarity) = match &qvec {
        Some((m, v)) => {
            let vector::Cosine { model, ty: vt, op } = vector::Cosine::of(&m.id, v.len());
            (
                format!(
                    ", dense AS (
    SELECT i.id FROM memory.items i
    WHERE i.user_id = $1 AND i.state = 'active' AND i.embedding_model = {model} {seed_filters}
    ORDER BY i.embedding::{vt} {op} $2::{vt}
    LIMIT $8
)"
                ),
                format!("CASE WHEN r.embedding_model = {model} THEN (1 - (r.embedding::{vt} {op} (SELECT $3::{vt})))::float8 END"),
            )
        }
        None => (
            ", dense AS (SELECT NULL::uuid AS id WHERE false)".to_string(),
            "NULL::float8".to_string(),
        ),
    };
    let seed_sql = include_str!("../../sql/queries/query_seed.sql")
        // No candidate terms: a constant false, so the plan has no lexical scan at all.
        .replace("{lexical}", if tsq_some { "true" } else { "false" })
        .replace("{dense}", &dense)
        .replace("{filters}", &seed_filters);
    Statements {
        seed_sql,
        seed_args,
        similarity,
        user: user.to_string(),
        vector: vtext,
        terms,
        filters: filters.clone(),
        categories: categories.map(<[String]>::to_vec),
    }
}

/// The seeds' ids (custom plan, inside `vector::with_iterative_scan`).
fn seeds(
    c: &pgrx::spi::SpiClient<'_>,
    st: &Statements,
) -> Result<Vec<pgrx::Uuid>, pgrx::spi::Error> {
    spi::with_prepared(c, &st.seed_sql, &st.seed_args, |t| {
        Ok(t.first().get_one::<Vec<pgrx::Uuid>>()?.unwrap_or_default())
    })
}

/// Ranks the tenant's memories for `query` under `filters`; the whole ranked pool, best first.
pub fn search(
    user: &str,
    query: &str,
    supplied: Option<&[f32]>,
    filters: &Filters,
    categories: Option<&[String]>,
    top_k: usize,
) -> Vec<Hit> {
    let st = build_pool(user, query, supplied, filters, categories, top_k);
    struct Row {
        hit: Hit,
        cand: Candidate,
        follows: Vec<String>,
    }
    let rows: Vec<Row> = vector::with_iterative_scan(|| {
        Spi::connect(|c| {
            let ids = seeds(c, &st)?;
            if ids.is_empty() {
                return Ok(vec![]);
            }
            let (sql, args) = st.pool(ids);
            spi::with_generic_plan(|| {
                spi::with_prepared(c, &sql, &args, |table| {
                    let mut out = vec![];
                    for r in table {
                        let id = r.get::<String>(1)?.unwrap_or_default();
                        let actor = r.get::<String>(12)?;
                        let similarity = r.get::<f64>(13)?;
                        out.push(Row {
                            hit: Hit {
                                id: id.clone(),
                                category: r.get::<String>(2)?,
                                text: r.get::<String>(3)?.unwrap_or_default(),
                                content: r.get::<String>(4)?,
                                importance: r.get::<i16>(5)?.unwrap_or(2),
                                tags: r.get::<Vec<String>>(7)?.unwrap_or_default(),
                                metadata: r.get::<Json>(8)?.map(|j| j.0).unwrap_or(Value::Null),
                                updated_at: r.get::<String>(9)?.unwrap_or_default(),
                                similarity,
                                score: 0.0,
                            },
                            cand: Candidate {
                                id,
                                similarity,
                                bm25: r.get::<f64>(14)?.unwrap_or(0.0),
                                thread_bm25: r.get::<f64>(15)?.unwrap_or(0.0),
                                importance: r.get::<i16>(5)?.unwrap_or(2),
                                pinned: r.get::<bool>(6)?.unwrap_or(false),
                                age_days: r.get::<f64>(10)?.unwrap_or(0.0),
                                actor_named: actor.is_some_and(|a| rank::names_actor(query, &a)),
                            },
                            follows: r.get::<Vec<String>>(16)?.unwrap_or_default(),
                        });
                    }
                    Ok::<_, pgrx::spi::Error>(out)
                })
            })
        })
        .spi("ranking memories")
    });
    if rows.is_empty() {
        return vec![];
    }
    let ids: Vec<String> = rows.iter().map(|r| r.hit.id.clone()).collect();
    let pos: std::collections::HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    // Episode edges between pool members (an edge out of the pool is not a neighbour's score).
    let pos = &pos;
    let edges: Vec<(usize, usize)> = rows
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.follows
                .iter()
                .filter_map(move |b| Some((i, *pos.get(b.as_str())?)))
        })
        .collect();
    let cands: Vec<Candidate> = rows.iter().map(|r| r.cand.clone()).collect();
    let weights = match gucs::rank_weights() {
        Some(s) => rank::weights_from_json(&s).or_raise(),
        None => DEFAULT_WEIGHTS,
    };
    rank::rank(&cands, &edges, &weights)
        .into_iter()
        .map(|(i, score)| Hit {
            score,
            ..rows[i].hit.clone()
        })
        .collect()
}

/// Changes of the thread after `since` as the header renders them, restricted to what the
/// caller may see (an agent's header must not leak categories its allowlist hides), and the
/// first revision the change log still has after `since` (before that filter).
fn changes(
    user: &str,
    thread: &str,
    since: i64,
    categories: Option<&[String]>,
) -> (Vec<Change>, Option<i64>) {
    let all = Spi::connect(|c| {
        c.select(
            "SELECT rev, memory_id, event, meta->>'category', coalesce(meta->>'text', ''), (meta->>'importance')::bigint
             FROM memory.change_log WHERE user_id = $1 AND thread_id = $2 AND rev > $3 ORDER BY rev",
            None,
            &[user.into(), thread.into(), since.into()],
        )?
        .map(|r| {
            Ok(Change {
                rev: r.get::<i64>(1)?.unwrap_or(0),
                memory_id: r.get::<String>(2)?.unwrap_or_default(),
                event: r.get::<String>(3)?.unwrap_or_default(),
                category: r.get::<String>(4)?,
                text: r.get::<String>(5)?.unwrap_or_default(),
                importance: r.get::<i64>(6)?,
            })
        })
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .spi("reading the change log");
    let first = all.first().map(|c| c.rev);
    let visible = all
        .into_iter()
        .filter(|ch| match categories {
            None => true,
            Some(allowed) => ch.category.as_ref().is_some_and(|c| allowed.contains(c)),
        })
        .collect();
    (visible, first)
}

/// The delta header for a thread since `since_rev` (or since what was last reported to it),
/// with the thread's revision; records what was reported.
fn header_for(
    user: &str,
    thread: &str,
    since_rev: Option<i64>,
    categories: Option<&[String]>,
) -> (Option<String>, i64) {
    let (revision, reported) = Spi::connect(|c| {
        let rows = c.select(
            "SELECT revision, reported_rev FROM memory.threads WHERE user_id = $1 AND thread_id = $2",
            Some(1),
            &[user.into(), thread.into()],
        )?;
        if rows.is_empty() {
            return Ok((0, 0));
        }
        let r = rows.first();
        Ok::<_, pgrx::spi::Error>((r.get::<i64>(1)?.unwrap_or(0), r.get::<i64>(2)?.unwrap_or(0)))
    })
    .spi("reading a thread's revision");
    let since = since_rev.unwrap_or(reported);
    let header = if revision > since {
        let (visible, first) = changes(user, thread, since, categories);
        if delta::pruned(since, revision, first) {
            Some(delta::pruned_header(since))
        } else {
            delta::header(since, &visible)
        }
    } else {
        None
    };
    if revision > reported {
        Spi::run_with_args(
            "UPDATE memory.threads SET reported_rev = greatest(reported_rev, $3) WHERE user_id = $1 AND thread_id = $2",
            &[user.into(), thread.into(), revision.into()],
        )
        .spi("recording the reported revision");
    }
    (header, revision)
}

fn related(user: &str, id: &str, categories: Option<&[String]>) -> Vec<String> {
    Spi::connect(|c| {
        c.select(
            "SELECT CASE WHEN i.category IS NULL THEN i.text ELSE '[' || i.category || '] ' || i.text END
             FROM memory.relations r JOIN memory.items i ON i.user_id = r.user_id AND i.id = r.to_id
             WHERE r.user_id = $1 AND r.from_id = $2::uuid AND r.relation_type = 'related_to'
               AND i.state = 'active' AND ($3::text[] IS NULL OR i.category = ANY($3))
             ORDER BY r.strength DESC LIMIT $4",
            None,
            &[user.into(), id.into(), categories.map(<[String]>::to_vec).into(), RELATED_PER_ITEM.into()],
        )?
        .map(|r| r.get::<String>(1).map(Option::unwrap_or_default))
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .spi("reading related memories")
}

fn touch(user: &str, ids: &[String]) {
    if ids.is_empty() {
        return;
    }
    // Parsed once per backend, planned per call (`spi::with_custom_plan` says why).
    spi::with_custom_plan(|| {
        spi::run_kept(
            "UPDATE memory.items SET last_accessed_at = now(), access_count = access_count + 1
             WHERE user_id = $1 AND id = ANY($2::uuid[])",
            &[user.into(), ids.to_vec().into()],
            "recording access",
        )
    });
}

/// The whole of memory_query once the request is parsed.
pub fn run_query(q: &QueryRequest) -> Value {
    let user = tenant::resolve(q.filters.user_id.as_deref());
    if let Some(agent) = &q.agent {
        validate::id("agent", Some(agent)).or_raise();
    }
    let categories = allowed_categories(&user, q.agent.as_deref(), q.categories.as_deref());
    let mut hits = search(
        &user,
        &q.query,
        q.embedding.as_deref(),
        &q.filters,
        categories.as_deref(),
        q.top_k,
    );
    if let Some(t) = q.threshold {
        hits.retain(|h| h.similarity.is_none_or(|s| s >= t));
    }
    hits.truncate(q.top_k);
    let (header, revision) = match &q.thread_id {
        Some(t) => header_for(&user, t, q.since_rev, categories.as_deref()),
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
    let items: Vec<Value> = hits
        .iter()
        .zip(&lines)
        .map(|(h, line)| match q.mode {
            ReturnMode::Bullets => json!({ "id": h.id, "category": h.category, "text": line }),
            ReturnMode::Full => json!({
                "id": h.id, "category": h.category, "text": line, "content": h.content,
                "score": (h.score * 10_000.0).round() / 10_000.0, "importance": h.importance, "tags": h.tags,
                "metadata": h.metadata, "updated_at": h.updated_at,
                "related": related(&user, &h.id, categories.as_deref()),
            }),
        })
        .collect();
    touch(
        &user,
        &hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
    );
    events::record(Event {
        thread: q.thread_id.as_deref(),
        memory_id: hits.first().map(|h| h.id.as_str()),
        category: hits.first().and_then(|h| h.category.as_deref()),
        sim: hits.first().and_then(|h| h.similarity).map(|s| s as f32),
        ..Event::new(&user, Node::Context, "search")
    });
    json!({
        "header": fit.header,
        "revision": revision,
        "items": items,
        "used_tokens": fit.used_tokens,
    })
}

/// The single retrieval tool (docs/design.md "One query tool").
#[pg_extern(volatile, parallel_unsafe)]
fn memory_query(request: Option<Json>) -> JsonB {
    let Json(v) = validate::required("request", request.as_ref()).or_raise();
    let q = request::parse_query(v).or_raise();
    crate::pg::limits::query("query", &q.query);
    JsonB(run_query(&q))
}

/// Name of the SQL-level prepared statement `query_plan` explains the pool statement through.
const PLAN_STATEMENT: &str = "memory_ext_query_plan";

/// The plans of the two statements memory_query runs for `request` (EXPLAIN, text format; with
/// `measure`, EXPLAIN ANALYZE: it runs them): the seeds as planned for this call, then the pool
/// statement's generic plan, as memory_query keeps it. For DBAs, and for the tests that prove
/// the indexes are used.
#[pg_extern(volatile, parallel_unsafe, schema = "memory")]
fn query_plan(request: Option<Json>, measure: default!(Option<bool>, false)) -> String {
    let Json(v) = validate::required("request", request.as_ref()).or_raise();
    let q = request::parse_query(v).or_raise();
    let user = tenant::resolve(q.filters.user_id.as_deref());
    let categories = allowed_categories(&user, q.agent.as_deref(), q.categories.as_deref());
    let st = build_pool(
        &user,
        &q.query,
        q.embedding.as_deref(),
        &q.filters,
        categories.as_deref(),
        q.top_k,
    );
    let how = if measure.unwrap_or(false) {
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
            let mut out =
                vec!["-- seeds (sql/queries/query_seed.sql, planned for each call)".to_string()];
            out.extend(lines(c.update(
                &format!("EXPLAIN ({how}) {}", st.seed_sql),
                None,
                &st.seed_args,
            )?)?);
            let ids = seeds(c, &st)?;
            let (sql, args) = st.pool(ids);
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
            out.push("-- pool (sql/queries/query_pool.sql, one generic plan per backend)".into());
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

/// The same ranking for SQL users.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::type_complexity)]
fn memory_search(
    query: Option<&str>,
    user_id: default!(Option<&str>, "NULL"),
    top_k: default!(Option<i32>, 5),
    filters: default!(Option<Json>, "'{}'"),
) -> TableIterator<
    'static,
    (
        name!(id, pgrx::Uuid),
        name!(kind, String),
        name!(category, Option<String>),
        name!(text, String),
        name!(score, f64),
        name!(importance, i16),
        name!(updated_at, TimestampWithTimeZone),
    ),
> {
    let query = validate::required("query", query).or_raise();
    crate::pg::limits::query("query", query);
    let top_k = *validate::required("top_k", top_k.as_ref()).or_raise();
    let top_k = validate::range("top_k", top_k as i64, 1, request::MAX_TOP_K).or_raise() as usize;
    let mut req = json!({ "filters": filters.map(|j| j.0).unwrap_or_else(|| json!({})) });
    if let Some(u) = user_id {
        req["filters"]["user_id"] = json!(u);
    }
    let q = request::parse_query(&req).or_raise();
    let user = tenant::resolve(q.filters.user_id.as_deref());
    let mut hits = search(&user, query, None, &q.filters, None, top_k);
    hits.truncate(top_k);
    let ids: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
    // Kind and timestamps as Postgres types, in rank order.
    let rows: Vec<(pgrx::Uuid, String, TimestampWithTimeZone)> = Spi::connect(|c| {
        c.select(
            "SELECT i.id, i.kind, i.updated_at FROM unnest($2::uuid[]) WITH ORDINALITY x(id, n)
             JOIN memory.items i ON i.user_id = $1 AND i.id = x.id ORDER BY x.n",
            None,
            &[user.as_str().into(), ids.into()],
        )?
        .map(|r| {
            Ok((
                r.get::<pgrx::Uuid>(1)?
                    .unwrap_or(pgrx::Uuid::from_bytes([0; 16])),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<TimestampWithTimeZone>(3)?
                    .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
            ))
        })
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .spi("reading ranked memories");
    touch(
        &user,
        &hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
    );
    TableIterator::new(hits.into_iter().zip(rows).map(|(h, (id, kind, at))| {
        (
            id,
            kind,
            h.category,
            h.text,
            (h.score * 10_000.0).round() / 10_000.0,
            h.importance,
            at,
        )
    }))
}

/// The delta header alone (empty string when nothing changed).
#[pg_extern(volatile, parallel_unsafe)]
fn memory_delta(thread_id: Option<&str>, since_rev: Option<i64>) -> String {
    let thread_id = validate::id("thread_id", thread_id).or_raise();
    let since = *validate::required("since_rev", since_rev.as_ref()).or_raise();
    validate::range("since_rev", since, 0, i64::MAX).or_raise();
    let user = lookup::owner(Owned::Thread, thread_id);
    header_for(&user, thread_id, Some(since), None)
        .0
        .unwrap_or_default()
}

/// The memory section of a prompt, in one call (read-before-think, docs/design.md "Episodes"): compiled core
/// blocks, the delta header, and a `[MEMORY CONTEXT]` block of recalled memories. The result
/// never exceeds `budget_tokens`: the blocks go in whole (a budget smaller than them is 22023),
/// then the header and as many memories, best first, as fit.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_context(
    agent_id: Option<&str>,
    thread_id: Option<&str>,
    query: Option<&str>,
    budget_tokens: default!(Option<i32>, 2048),
) -> String {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let thread_id = validate::id("thread_id", thread_id).or_raise();
    let query = validate::required("query", query).or_raise();
    let budget = *validate::required("budget_tokens", budget_tokens.as_ref()).or_raise();
    let budget =
        validate::range("budget_tokens", budget as i64, 1, request::MAX_BUDGET).or_raise() as usize;
    let user = lookup::owner(Owned::Agent, agent_id);
    let now = spi::one_opt::<TimestampWithTimeZone>("SELECT now()", &[], "reading now()")
        .unwrap_or_else(|| raise(SqlState::NoDataFound, "now() is NULL", None));
    let blocks = compile_for(&user, agent_id, now);
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
        "SELECT EXISTS (SELECT 1 FROM memory.allowlists WHERE user_id = $1)
            AND NOT EXISTS (SELECT 1 FROM memory.allowlists WHERE user_id = $1 AND agent = $2)",
        &[user.as_str().into(), agent_id.into()],
        "reading allowlists",
    )
    .unwrap_or(false);
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
        top_k: 10,
        mode: ReturnMode::Bullets,
        budget_tokens: Some(left),
        threshold: None,
        embedding: None,
    };
    let r = run_query(&q);
    let header = r["header"].as_str().map(str::to_string);
    let mut items: Vec<String> = r["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["text"].as_str().map(str::to_string))
        .collect();
    // Joining adds separators and can merge tokens: count the assembled text, and let the
    // lowest-ranked memories go (then the header) until it fits.
    loop {
        let mut out = blocks.clone();
        if let Some(h) = &header {
            out.push_str("\n\n");
            out.push_str(h);
        }
        if !items.is_empty() {
            out.push_str("\n\n[MEMORY CONTEXT]");
            for i in &items {
                out.push_str("\n- ");
                out.push_str(i);
            }
        }
        if enc.count(&out) <= budget {
            return out;
        }
        if items.pop().is_none() {
            return blocks;
        }
    }
}
