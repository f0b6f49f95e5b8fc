//! The memory side of the search engine (memory_query, memory_search): the seeds — the best
//! memories by BM25 and by vector similarity — then the pool around them with every signal,
//! ranked by `memory_core::rank::rank` (docs/retrieval.md "How a query runs").

use super::Probe;
use crate::error::{OrRaise, SpiOk};
use crate::gucs;
use crate::pg::json::JsonText;
use crate::pg::{fulltext, spi, vector};
use memory_core::rank::{self, Candidate, Parts, DEFAULT_WEIGHTS};
use memory_core::request::Filters;
use memory_core::when::Window;
use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;
use serde_json::Value;
use std::collections::HashMap;

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
    /// When it happened (`happened_at`, UTC, RFC 3339).
    pub happened: String,
    /// The memory that superseded it, when it has been (docs/api.md "Supersede").
    pub superseded_by: Option<String>,
    pub similarity: Option<f64>,
    pub score: f64,
    /// What each signal added to `score`.
    pub parts: Parts,
    /// Which side of the search proposed it (`explain`).
    pub pool: Pool,
    /// The space it belongs to (docs/api.md "Spaces"); `None`: the caller's own.
    pub space: Option<String>,
}

/// How a memory got into the ranked pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pool {
    /// Among the best by BM25 and by vector similarity.
    Both,
    Bm25,
    Vector,
    /// An episode neighbour (one or two `follows` edges) of those.
    #[default]
    Neighbour,
    /// Not ranked: its category is in context `all`, in recall every time.
    ContextAll,
}

impl Pool {
    pub fn name(self) -> &'static str {
        match self {
            Pool::Both => "bm25+vector",
            Pool::Bm25 => "bm25",
            Pool::Vector => "vector",
            Pool::Neighbour => "neighbour",
            Pool::ContextAll => "context_all",
        }
    }
}

impl Hit {
    /// The Layer-1 line as it goes into a prompt: `(YYYY-MM-DD) [category] text`, the day it
    /// happened first, since an LLM cannot answer "when did…" from undated lines (docs/api.md
    /// "Bullets").
    pub fn line(&self) -> String {
        memory_core::render::bullet(
            self.happened.get(..10),
            self.category.as_deref(),
            &self.text,
        )
    }
}

/// The seeds of a memory search: the best by BM25 and by vector similarity, each with its
/// owner (the caller, or a space; aligned with the ids).
pub struct Seeds {
    pub lexical: Vec<pgrx::Uuid>,
    pub dense: Vec<pgrx::Uuid>,
    lexical_owners: Vec<String>,
    dense_owners: Vec<String>,
}

impl Seeds {
    /// Both sides' ids, each once, and their owners (aligned).
    pub fn all(&self) -> (Vec<pgrx::Uuid>, Vec<String>) {
        let mut ids = self.lexical.clone();
        let mut owners = self.lexical_owners.clone();
        for (d, o) in self.dense.iter().zip(&self.dense_owners) {
            if !ids.contains(d) {
                ids.push(*d);
                owners.push(o.clone());
            }
        }
        (ids, owners)
    }

    /// Which side found each seed, by the id's text (the pool statement's rows name ids as
    /// text): made once per search. Formatting the seeds' ids for every pool row instead (a
    /// pgrx Uuid is written a byte at a time through `fmt`) was 3% of a memory_query's time in
    /// `perf` at 100k memories.
    fn sides(&self) -> HashMap<String, Pool> {
        let mut out = HashMap::with_capacity(self.lexical.len() + self.dense.len());
        for u in &self.dense {
            out.insert(u.to_string(), Pool::Vector);
        }
        for u in &self.lexical {
            let id = u.to_string();
            let side = if out.contains_key(&id) {
                Pool::Both
            } else {
                Pool::Bm25
            };
            out.insert(id, side);
        }
        out
    }
}

/// The side that found the memory `id` ([`Seeds::sides`]); neither: a neighbour.
fn pool_of(sides: &HashMap<String, Pool>, id: &str) -> Pool {
    sides.get(id).copied().unwrap_or(Pool::Neighbour)
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
    if let Some(v) = &f.thread_id {
        add(" AND i.thread_id = $", v.clone().into(), args);
    }
    if let Some(v) = &f.entity_ids {
        add(
            " AND i.id IN (SELECT l.item_id FROM memory.entity_links l WHERE l.user_id = i.user_id AND l.entity_id = ANY($::uuid[]))",
            v.clone().into(),
            args,
        );
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
    if let Some(v) = f.happened_after {
        add(
            " AND i.happened_at >= $::timestamptz",
            v.to_rfc3339().into(),
            args,
        );
    }
    if let Some(v) = f.happened_before {
        add(
            " AND i.happened_at < $::timestamptz",
            v.to_rfc3339().into(),
            args,
        );
    }
    if let Some(c) = categories {
        add(" AND i.category = ANY($::text[])", c.to_vec().into(), args);
    }
    if let Some(t) = f.as_of {
        // What was true then: it had happened, and nothing had superseded it yet.
        add(
            " AND i.happened_at <= $::timestamptz AND (i.valid_until IS NULL OR i.valid_until > $::timestamptz)",
            t.to_rfc3339().into(),
            args,
        );
    }
    if let Some(k) = &f.kinds {
        add(" AND i.kind = ANY($::text[])", k.clone().into(), args);
    }
    if f.default_kinds() {
        // Steps for agents that execute stay out of conversational recall (docs/design.md
        // "Procedures and extraction").
        sql.push_str(" AND i.kind <> 'procedural'");
    }
    sql
}

/// The "state" slot of the search statements: active memories that have not expired, and
/// superseded ones when the request asks for them or for a past time (a literal, so each case
/// keeps its own plan). An active memory's `valid_until` is when it stops being true (mem0's
/// `expiration_date`, crate::ops::import): before then, and `as_of` a day before, it is found.
fn state_sql(f: &Filters) -> &'static str {
    if f.include_superseded || f.as_of.is_some() {
        "i.state IN ('active', 'superseded')"
    } else {
        "i.state = 'active' AND (i.valid_until IS NULL OR i.valid_until > now())"
    }
}

/// The query's terms as the tenant's statistics see them, read in one statement.
struct Terms {
    /// The query's lexemes (in its language and the tenant's, src/pg/fulltext.rs), sorted.
    lexemes: Vec<String>,
    /// Each lexeme's BM25 idf in the tenant, aligned with `lexemes`.
    idf: Vec<f64>,
    /// The tenant's average memory length, for BM25.
    avg_len: f64,
    /// The tsquery over the terms worth a GIN lookup (`memory_core::rank::candidate_terms`);
    /// `None` when none is.
    tsquery: Option<String>,
    /// The share of the query's lexemes, weighed by idf, that occur in the tenant's memories
    /// (`memory_core::rank::known_share`, `memory_core::rank::lexical_trust`).
    known: f64,
}

fn terms(owners: &Owners, query: &str) -> Terms {
    let user = owners.user.as_str();
    let rows: Vec<(String, f64, f64, f64, String)> = if query.trim().is_empty() {
        vec![]
    } else {
        let lexemes = fulltext::lexemes(user, query);
        // With spaces, their statistics and the caller's summed: one corpus, one ranking.
        let (sql, args): (&str, Vec<DatumWithOid<'static>>) = if owners.spaces.is_empty() {
            (
                include_str!("../../../sql/queries/search_terms.sql"),
                vec![user.into(), lexemes.into()],
            )
        } else {
            (
                include_str!("../../../sql/queries/search_terms_spaces.sql"),
                vec![user.into(), lexemes.into(), owners.keys().into()],
            )
        };
        spi::rows_generic(sql, &args, "reading term statistics", |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<f64>(2)?.unwrap_or(0.0),
                r.get::<f64>(3)?.unwrap_or(0.0),
                r.get::<f64>(4)?.unwrap_or(0.0),
                r.get::<String>(5)?.unwrap_or_default(),
            ))
        })
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
        tsquery: rows.first().and_then(|r| fulltext::tsquery(&lookup, &r.4)),
        known: rank::known_share(docs, &dfs.iter().map(|(_, df)| *df).collect::<Vec<_>>()),
    }
}

/// Whose memories a search ranks together: the caller's own and those of the spaces granted to
/// it, as (key, name) (docs/api.md "Spaces"). One search over all of them, not one per owner:
/// a space costs a larger scan, not another search (bench/results/spaces.md).
#[derive(Clone)]
pub struct Owners {
    pub user: String,
    pub spaces: Vec<(String, String)>,
}

impl Owners {
    /// The caller alone.
    pub fn only(user: &str) -> Owners {
        Owners {
            user: user.to_string(),
            spaces: vec![],
        }
    }

    /// Every owner's tenant key, the caller's first.
    pub fn keys(&self) -> Vec<String> {
        std::iter::once(self.user.clone())
            .chain(self.spaces.iter().map(|(k, _)| k.clone()))
            .collect()
    }

    /// The "owner" slot of the search statements and its parameter ($1): the caller's key
    /// alone keeps the plain equality (the partition known to a generic plan; on Citus, the
    /// statement routed to one shard).
    pub(super) fn slot(&self) -> (&'static str, DatumWithOid<'static>) {
        if self.spaces.is_empty() {
            ("= $1", self.user.clone().into())
        } else {
            ("= ANY($1::text[])", self.keys().into())
        }
    }

    /// The space a row of `key` belongs to; `None` for the caller's own.
    pub(super) fn space_of(&self, key: &str) -> Option<String> {
        self.spaces
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, name)| name.clone())
    }
}

/// The two statements a memory search runs: the seeds (custom-planned) and the pool around
/// them (one generic plan per backend), with what they need.
pub struct Statements {
    /// sql/queries/search_memories_seed.sql with its slots filled, and its parameters.
    pub seed_sql: String,
    pub seed_args: Vec<DatumWithOid<'static>>,
    /// sql/queries/search_memories_lexical.sql with its slots filled (it takes `seed_args`),
    /// when the keyword candidates are read through the full-text index as the owner.
    pub lexical_sql: Option<String>,
    /// The cosine expression of the pool statement (the active model's, or NULL).
    similarity: String,
    owners: Owners,
    vector: Option<String>,
    terms: Terms,
    filters: Filters,
    categories: Option<Vec<String>>,
}

impl Statements {
    /// The seed and pool statements for a memory search.
    pub fn new(
        owners: &Owners,
        query: &str,
        supplied: Option<&[f32]>,
        filters: &Filters,
        categories: Option<&[String]>,
        top_k: usize,
    ) -> Statements {
        let terms = terms(owners, query);
        let probe = Probe::new(query, supplied, "searching by keyword only");
        let vtext = probe.vector();
        let (owner, owner_arg) = owners.slot();
        let mut seed_args: Vec<DatumWithOid<'static>> = vec![
            owner_arg,
            vtext.clone().into(),
            terms.tsquery.clone().into(),
            terms.lexemes.clone().into(),
            (rank::lexical_side(top_k) as i64).into(),
            terms.idf.clone().into(),
            terms.avg_len.into(),
            (rank::vector_side(top_k) as i64).into(),
            // $9, the keyword candidates `seeds` reads first (or NULL).
            DatumWithOid::null::<Vec<pgrx::Uuid>>(),
        ];
        let seed_filters = filter_sql(filters, categories, &mut seed_args);
        // Row-level security keeps `@@` off the GIN index for an ordinary role
        // (sql/queries/search_memories_lexical.sql): the candidates are then read as the owner,
        // when the owner reads past the policies (a caller that does too reads them itself).
        // Not on Citus, which refuses a transaction in which two users touch one tenant's
        // shards (docs/citus.md).
        let through_index = terms.tsquery.is_some()
            && !crate::pg::citus::present()
            && !crate::pg::owner::caller_bypasses_rls()
            && crate::pg::owner::bypasses_rls();
        let lexical_sql = through_index.then(|| {
            include_str!("../../../sql/queries/search_memories_lexical.sql")
                .replace("{filters}", &seed_filters)
                .replace("{state}", state_sql(filters))
                .replace("{owner}", owner)
        });
        let dense = probe.dense_cte(
            include_str!("../../../sql/queries/search_memories_dense.sql"),
            &seed_filters,
        );
        let seed_sql = include_str!("../../../sql/queries/search_memories_seed.sql")
            // No candidate terms: a constant false, so the plan has no lexical scan at all.
            .replace(
                "{lexical}",
                if terms.tsquery.is_some() {
                    "true"
                } else {
                    "false"
                },
            )
            .replace(
                "{match}",
                if through_index {
                    "i.id = ANY($9::uuid[])"
                } else {
                    "i.tsv @@ $3::tsquery"
                },
            )
            .replace("{dense}", &dense)
            .replace("{filters}", &seed_filters)
            .replace("{state}", state_sql(filters))
            .replace("{owner}", owner);
        Statements {
            seed_sql,
            seed_args,
            lexical_sql,
            // The query vector as an InitPlan (sql/queries/search_memories_pool.sql says why).
            similarity: probe.similarity("r", "(SELECT $3::{vt})"),
            owners: owners.clone(),
            vector: vtext,
            terms,
            filters: filters.clone(),
            categories: categories.map(<[String]>::to_vec),
        }
    }

    /// The pool statement and its parameters for the seeds (`Seeds::all`: ids and owners).
    pub fn pool(
        &self,
        (ids, owners): (Vec<pgrx::Uuid>, Vec<String>),
    ) -> (String, Vec<DatumWithOid<'static>>) {
        let (owner, owner_arg) = self.owners.slot();
        let mut args: Vec<DatumWithOid<'static>> = vec![
            owner_arg,
            ids.into(),
            self.vector.clone().into(),
            self.terms.lexemes.clone().into(),
            self.terms.idf.clone().into(),
            self.terms.avg_len.into(),
            owners.into(),
        ];
        // The seed statement's conditions again: a neighbour must pass the filters too.
        let filters = filter_sql(&self.filters, self.categories.as_deref(), &mut args);
        let sql = include_str!("../../../sql/queries/search_memories_pool.sql")
            .replace("{similarity}", &self.similarity)
            .replace("{filters}", &filters)
            .replace("{state}", state_sql(&self.filters))
            .replace("{owner}", owner);
        (sql, args)
    }

    /// The seed statement's parameters for this call: `seed_args`, with the keyword candidates
    /// read first as the owner when `lexical_sql` is set ($9).
    pub fn seed_args_for(
        &self,
        c: &pgrx::spi::SpiClient<'_>,
    ) -> Result<Vec<DatumWithOid<'_>>, pgrx::spi::Error> {
        // SAFETY: each datum is re-wrapped with its own type, borrowed from `self.seed_args`,
        // which outlives the result.
        let mut args: Vec<DatumWithOid<'_>> = self
            .seed_args
            .iter()
            .map(|a| unsafe { DatumWithOid::new_from_datum(a.datum(), a.oid()) })
            .collect();
        if let Some(sql) = &self.lexical_sql {
            let ids = crate::pg::owner::as_owner(|| {
                spi::with_prepared(c, sql, &self.seed_args, |t| {
                    t.first().get_one::<Vec<pgrx::Uuid>>()
                })
            })?;
            args[8] = ids.unwrap_or_default().into();
        }
        Ok(args)
    }

    /// The seeds (custom plan, inside `vector::with_iterative_scan`).
    pub fn seeds(&self, c: &pgrx::spi::SpiClient<'_>) -> Result<Seeds, pgrx::spi::Error> {
        self.seeds_with(c, &self.seed_args_for(c)?)
    }

    /// The seeds with the parameters `seed_args_for` gave.
    pub fn seeds_with(
        &self,
        c: &pgrx::spi::SpiClient<'_>,
        args: &[DatumWithOid<'_>],
    ) -> Result<Seeds, pgrx::spi::Error> {
        spi::with_prepared(c, &self.seed_sql, args, |t| {
            let row = t.first();
            Ok(Seeds {
                lexical: row.get::<Vec<pgrx::Uuid>>(1)?.unwrap_or_default(),
                dense: row.get::<Vec<pgrx::Uuid>>(2)?.unwrap_or_default(),
                lexical_owners: row.get::<Vec<String>>(3)?.unwrap_or_default(),
                dense_owners: row.get::<Vec<String>>(4)?.unwrap_or_default(),
            })
        })
    }
}

/// Ranks the memories of `owners` for `query` under `filters`, in one ranking; the whole ranked
/// pool, best first, each hit of a space labelled with it.
/// `window`: the event time the query names (memory_core::when), preferred. `rerank`: the
/// built-in cross-encoder reads the best `memory_ext.rerank_depth` (`memory_core::rank::rank_reranked`).
#[allow(clippy::too_many_arguments)]
pub fn memories(
    owners: &Owners,
    query: &str,
    supplied: Option<&[f32]>,
    filters: &Filters,
    categories: Option<&[String]>,
    top_k: usize,
    window: Option<Window>,
    rerank: bool,
) -> Vec<Hit> {
    let user = owners.user.as_str();
    let st = Statements::new(owners, query, supplied, filters, categories, top_k);
    struct Row {
        hit: Hit,
        cand: Candidate,
        follows: Vec<String>,
        related: Vec<String>,
    }
    let rows: Vec<Row> = vector::with_iterative_scan(|| {
        Spi::connect(|c| {
            let seeds = st.seeds(c)?;
            let all = seeds.all();
            if all.0.is_empty() {
                return Ok(vec![]);
            }
            let sides = seeds.sides();
            let (sql, args) = st.pool(all);
            // One generic plan per backend, for the caller alone and with spaces (its lookups
            // are by key: sql/queries/search_memories_pool.sql).
            let pool = || {
                spi::rows_prepared(c, &sql, &args, |r| {
                    let id = r.get::<String>(1)?.unwrap_or_default();
                    let actor = r.get::<String>(12)?;
                    let similarity = r.get::<f64>(13)?;
                    Ok(Row {
                        hit: Hit {
                            id: id.clone(),
                            category: r.get::<String>(2)?,
                            text: r.get::<String>(3)?.unwrap_or_default(),
                            content: r.get::<String>(4)?,
                            importance: r.get::<i16>(5)?.unwrap_or(2),
                            tags: r.get::<Vec<String>>(7)?.unwrap_or_default(),
                            metadata: r
                                .get::<JsonText>(8)?
                                .map(|j| j.value())
                                .unwrap_or(Value::Null),
                            updated_at: r.get::<String>(9)?.unwrap_or_default(),
                            happened: r.get::<String>(18)?.unwrap_or_default(),
                            superseded_by: r.get::<String>(20)?,
                            similarity,
                            score: 0.0,
                            parts: Parts::default(),
                            pool: pool_of(&sides, &id),
                            space: owners.space_of(&r.get::<String>(22)?.unwrap_or_default()),
                        },
                        cand: Candidate {
                            id,
                            similarity,
                            bm25: r.get::<f64>(14)?.unwrap_or(0.0),
                            thread_bm25: r.get::<f64>(15)?.unwrap_or(0.0),
                            importance: r.get::<i16>(5)?.unwrap_or(2),
                            pinned: r.get::<bool>(6)?.unwrap_or(false),
                            happened_days: r.get::<f64>(10)?.unwrap_or(0.0),
                            actor_named: actor.is_some_and(|a| rank::names_actor(query, &a)),
                            entity_named: false,
                            conversational: r.get::<bool>(17)?.unwrap_or(false),
                            insight: r.get::<bool>(21)?.unwrap_or(false),
                        },
                        follows: r.get::<Vec<String>>(16)?.unwrap_or_default(),
                        related: r.get::<Vec<String>>(19)?.unwrap_or_default(),
                    })
                })
            };
            spi::with_generic_plan(pool)
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
    // Edges between pool members (an edge out of the pool is not a neighbour's score).
    let pos = &pos;
    let between = |pick: fn(&Row) -> &Vec<String>| -> Vec<(usize, usize)> {
        rows.iter()
            .enumerate()
            .flat_map(|(i, r)| {
                pick(r)
                    .iter()
                    .filter_map(move |b| Some((i, *pos.get(b.as_str())?)))
            })
            .collect()
    };
    let edges = rank::Edges {
        follows: between(|r| &r.follows),
        related: between(|r| &r.related),
    };
    let mut cands: Vec<Candidate> = rows.iter().map(|r| r.cand.clone()).collect();
    let mut weights = match gucs::rank_weights() {
        Some(s) => rank::weights_from_json(&s).or_raise(),
        None => DEFAULT_WEIGHTS,
    };
    // A query most of whose words the tenant never wrote (asked in another language than its
    // memories) has keyword matches on names only: the keyword side counts for less, and the
    // priors with it (rank::trusting).
    weights = rank::trusting(weights, st.terms.known);
    // The memories linked to an entity the query names (docs/design.md "Entities"): one read
    // of the links, only when the query names one, and nothing read when the signal is off.
    let named = if weights.entity > 0.0 {
        crate::ops::entities::named_in(user, query)
    } else {
        vec![]
    };
    if !named.is_empty() {
        let linked = crate::ops::entities::linked(user, &named, &ids);
        for c in &mut cands {
            c.entity_named = linked.contains(&c.id);
        }
    }
    let mut ranked = rank::rank(&cands, &edges, window, &weights);
    if rerank && !query.trim().is_empty() {
        let best: Vec<usize> = ranked
            .iter()
            .take(gucs::rerank_depth())
            .map(|s| s.index)
            .collect();
        let texts: Vec<&str> = best.iter().map(|&i| rows[i].hit.text.as_str()).collect();
        // Like a provider that is down (src/ops/search/mod.rs), a missing reranker degrades
        // the query to the fused order with a notice; it does not fail it.
        match crate::embed::rerank::scores(query, &texts) {
            Ok(logits) => {
                let judged: Vec<(usize, f32)> = best.into_iter().zip(logits).collect();
                ranked = rank::rank_reranked(&cands, &edges, window, &weights, &judged);
            }
            Err(e) => pgrx::notice!("memory_query: not reranked: {e}"),
        }
    }
    ranked
        .into_iter()
        .map(|s| Hit {
            score: s.score,
            parts: s.parts,
            ..rows[s.index].hit.clone()
        })
        .collect()
}
