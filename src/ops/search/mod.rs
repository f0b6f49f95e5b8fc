//! The hybrid search engine: one way to search by keyword and meaning together, used by
//! memory_query and memory_search (memories), conversation_search (messages) and
//! memory_file_search (files).
//!
//! Every search starts from a [`Probe`]: the query's lexemes and tsquery inside the tenant
//! (src/pg/fulltext.rs) and its vector (supplied, or embedded; a provider that is down degrades
//! the search to keyword-only, it never fails it). Its vector side is one `dense` CTE per corpus
//! (`sql/queries/search_<corpus>_dense.sql`) with the active model's id, type and operator
//! written in as literals, so that the planner uses that model's partial HNSW index, and a
//! similarity expression of the same model. Statements are `sql/queries/search_*.sql`.
//!
//! Memories are ranked with every signal by `memory_core::rank::rank` (docs/retrieval.md);
//! messages and files by the min-max fusion of keyword and vector scores, half each
//! (`memory_core::rank::fused_order`).

mod memories;

pub use memories::{memories, Hit, Owners, Pool, Statements};

use crate::embed::{self, vector_text};
use crate::error::{raise, OrRaise};
use crate::pg::{fulltext, spi, vector};
use memory_core::rank;
use memory_core::SqlState;
use pgrx::prelude::*;

/// Candidates taken from each side (keyword, vector) before fusion, for messages and files.
const FUSED_PER_SIDE: i64 = 50;

/// The query's vector side: the vector in text form and the active model's cosine parts.
pub struct Dense {
    pub text: String,
    pub cosine: vector::Cosine,
}

/// What a search looks for: the query's vector side (`None`: keyword-only).
pub struct Probe {
    pub dense: Option<Dense>,
}

impl Probe {
    /// The query's vector: `supplied` (taken as the active model's, its size checked), or the
    /// query embedded; without a provider the search is keyword-only (`degraded` says so in a
    /// notice).
    pub fn new(query: &str, supplied: Option<&[f32]>, degraded: &str) -> Probe {
        let qvec = match supplied {
            Some(v) => {
                let m = embed::active_model().or_raise();
                m.check_supplied(v);
                Some((m, v.to_vec()))
            }
            None => embed::query_vector(query, degraded),
        };
        Probe {
            dense: qvec.map(|(m, v)| Dense {
                cosine: vector::Cosine::of(&m.id, v.len()),
                text: vector_text(&v),
            }),
        }
    }

    /// The query vector's text form, the statement parameter.
    pub fn vector(&self) -> Option<String> {
        self.dense.as_ref().map(|d| d.text.clone())
    }

    /// The `dense` CTE: `template` (a `search_*_dense.sql`) with the model's literals and
    /// `filters` filled in, or an empty CTE without a vector.
    fn dense_cte(&self, template: &str, filters: &str) -> String {
        match &self.dense {
            Some(Dense { cosine, .. }) => template
                .replace("{model}", &cosine.model)
                .replace("{vt}", &cosine.ty)
                .replace("{op}", &cosine.op)
                .replace("{filters}", filters),
            None => ", dense AS (SELECT NULL::uuid AS id, NULL::text AS user_id WHERE false)"
                .to_string(),
        }
    }

    /// The cosine similarity of `alias`'s vector to `param` (the query vector as an SQL
    /// expression, `{vt}` standing for its type) on the reference scale (memory_core::cosine:
    /// what `threshold`, `similarity` and the ranking read), NULL for rows of another model or
    /// without a vector.
    fn similarity(&self, alias: &str, param: &str) -> String {
        match &self.dense {
            Some(Dense { cosine, .. }) => {
                let vector::Cosine {
                    model,
                    ty: vt,
                    op,
                    scale,
                } = cosine;
                let q = param.replace("{vt}", vt);
                let raw = format!("(1 - ({alias}.embedding::{vt} {op} {q}))::float8");
                format!(
                    "CASE WHEN {alias}.embedding_model = {model} THEN {} END",
                    scale.sql(&raw)
                )
            }
            None => "NULL::float8".to_string(),
        }
    }
}

// ---- messages ----------------------------------------------------------------------------

/// A message conversation_search found, with its fused score.
#[derive(Clone)]
pub struct MessageHit {
    pub id: pgrx::Uuid,
    pub thread_id: String,
    pub seq: i64,
    pub role: String,
    pub content: String,
    pub created_at: TimestampWithTimeZone,
    pub score: f64,
    /// The space whose conversation it is in; `None`: the caller's own.
    pub space: Option<String>,
}

/// Whose messages a search reads: one thread's, or those of every thread an agent reads: its
/// own and the user's unassigned ones (`threads.agent_id` NULL), the threads
/// compile_core_blocks counts in "previous messages ... in recall memory".
#[derive(Clone, Copy)]
pub enum Conversations<'a> {
    Thread(&'a str),
    Agent(&'a str),
}

/// The messages (in context or not) of `scope` for `query`, best first, at most `limit`. With
/// spaces in `owners`, an agent's conversations include every thread of the spaces (one search,
/// as for memories: `Owners`).
pub fn messages(
    owners: &Owners,
    scope: Conversations,
    query: &str,
    roles: Option<Vec<String>>,
    start: Option<TimestampWithTimeZone>,
    end: Option<TimestampWithTimeZone>,
    limit: usize,
) -> Vec<MessageHit> {
    let user = owners.user.as_str();
    let (owner, owner_arg) = owners.slot();
    let lexemes = fulltext::lexemes(user, query);
    let tsq = fulltext::tsquery(&lexemes, &fulltext::tenant_lexeme(user));
    let score = fulltext::score_query(&lexemes);
    let probe = Probe::new(query, None, "searching by keyword only");
    let sql = include_str!("../../../sql/queries/search_messages.sql")
        .replace(
            "{dense}",
            &probe.dense_cte(
                include_str!("../../../sql/queries/search_messages_dense.sql"),
                "",
            ),
        )
        .replace("{similarity}", &probe.similarity("m", "$4::{vt}"))
        // A statement text per case, so each keeps its own plan (the thread's index, or the user's).
        .replace(
            "{thread}",
            match (scope, owners.spaces.is_empty()) {
                (Conversations::Thread(_), _) => "m.thread_id = $2",
                (Conversations::Agent(_), true) => {
                    "m.thread_id IN (SELECT t.thread_id FROM memory.threads t \
                     WHERE t.user_id = $1 AND (t.agent_id = $2 OR t.agent_id IS NULL))"
                }
                // The agent's threads among the caller's own; every thread of a space.
                (Conversations::Agent(_), false) => {
                    "(m.user_id, m.thread_id) IN (SELECT t.user_id, t.thread_id FROM memory.threads t \
                     WHERE t.user_id = ANY($1::text[]) AND (t.user_id <> ($1::text[])[1] \
                     OR t.agent_id = $2 OR t.agent_id IS NULL))"
                }
            },
        )
        .replace("{owner}", owner);
    let (Conversations::Thread(key) | Conversations::Agent(key)) = scope;
    let rows: Vec<(MessageHit, f64, Option<f64>)> = vector::with_iterative_scan(|| {
        spi::rows(
            &sql,
            &[
                owner_arg,
                key.into(),
                tsq.into(),
                probe.vector().into(),
                roles.into(),
                start.into(),
                end.into(),
                FUSED_PER_SIDE.into(),
                score.clone().into(),
            ],
            "searching messages",
            |r| {
                Ok((
                    MessageHit {
                        id: r
                            .get::<pgrx::Uuid>(1)?
                            .unwrap_or(pgrx::Uuid::from_bytes([0; 16])),
                        seq: r.get::<i64>(2)?.unwrap_or(0),
                        role: r.get::<String>(3)?.unwrap_or_default(),
                        content: r.get::<String>(4)?.unwrap_or_default(),
                        created_at: r
                            .get::<TimestampWithTimeZone>(5)?
                            .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
                        score: 0.0,
                        thread_id: r.get::<String>(8)?.unwrap_or_default(),
                        space: owners.space_of(&r.get::<String>(9)?.unwrap_or_default()),
                    },
                    r.get::<f64>(6)?.unwrap_or(0.0),
                    r.get::<f64>(7)?,
                ))
            },
        )
    });
    // Ties: the later message first.
    fused(rows, limit, |a, b| b.seq.cmp(&a.seq), |h, s| h.score = s)
}

// ---- files -------------------------------------------------------------------------------

/// A file memory_file_search found: path, title, snippet, fused score.
pub struct FileHit {
    pub path: String,
    pub title: Option<String>,
    pub snippet: String,
    pub score: f64,
    /// The day it last changed (YYYY-MM-DD, UTC): recall dates what it shows.
    pub day: String,
}

/// The query terms worth a full-text lookup among the tenant's files: `rank::candidate_terms`
/// over their document frequencies (counted through the full-text index).
fn file_lookup_terms(user: &str, lexemes: &[String]) -> Vec<String> {
    if lexemes.is_empty() {
        return vec![];
    }
    let dfs: Vec<(String, f64)> = spi::rows(
        include_str!("../../../sql/queries/search_files_terms.sql"),
        &[user.into(), lexemes.to_vec().into()],
        "counting file terms",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<f64>(2)?.unwrap_or(0.0),
            ))
        },
    );
    rank::candidate_terms(&dfs, rank::MAX_LEXICAL_MATCHES)
}

/// The tenant's files for `query` (with any of `tags`, when given), best first, at most `limit`,
/// each with a snippet; their access is recorded.
pub fn files(user: &str, query: &str, tags: Option<Vec<String>>, limit: usize) -> Vec<FileHit> {
    let lexemes = fulltext::lexemes(user, query);
    // Every query term scores the candidates; only the rarer ones look candidates up (a term in
    // every file would have the lexical side rank all of them: 55 vs 17 ms at 10,000 files).
    let tenant = fulltext::tenant_lexeme(user);
    // Scores by the terms alone (fulltext::score_query says why); lookups inside the tenant.
    let tsq = fulltext::score_query(&lexemes);
    let lookup = fulltext::tsquery(&file_lookup_terms(user, &lexemes), &tenant);
    let probe = Probe::new(query, None, "searching files by keyword only");
    let sql = include_str!("../../../sql/queries/search_files.sql")
        .replace(
            "{dense}",
            &probe.dense_cte(
                include_str!("../../../sql/queries/search_files_dense.sql"),
                "",
            ),
        )
        .replace("{similarity}", &probe.similarity("f", "$3::{vt}"));
    let rows: Vec<(FileHit, f64, Option<f64>)> = vector::with_iterative_scan(|| {
        spi::rows(
            &sql,
            &[
                user.into(),
                tsq.clone().into(),
                probe.vector().into(),
                tags.into(),
                FUSED_PER_SIDE.into(),
                lookup.into(),
            ],
            "searching files",
            |r| {
                Ok((
                    FileHit {
                        path: r.get::<String>(1)?.unwrap_or_default(),
                        title: r.get::<String>(2)?,
                        snippet: r.get::<String>(3)?.unwrap_or_default(),
                        score: 0.0,
                        day: String::new(),
                    },
                    r.get::<f64>(4)?.unwrap_or(0.0),
                    r.get::<f64>(5)?,
                ))
            },
        )
    });
    // Ties: path order.
    let mut hits = fused(rows, limit, |a, b| a.path.cmp(&b.path), |h, s| h.score = s);
    let paths: Vec<String> = hits.iter().map(|h| h.path.clone()).collect();
    // Snippets only for what is returned: ts_headline re-parses the text, ~1 ms per file.
    let snippets: std::collections::HashMap<String, (String, String)> = if paths.is_empty() {
        Default::default()
    } else {
        spi::rows_mut(
            include_str!("../../../sql/queries/search_files_snippets.sql"),
            &[user.into(), paths.into(), tsq.into()],
            "recording access",
            |r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    (
                        r.get::<String>(2)?.unwrap_or_default(),
                        r.get::<TimestampWithTimeZone>(3)?
                            .map(|t| t.to_iso_string().chars().take(10).collect())
                            .unwrap_or_default(),
                    ),
                ))
            },
        )
        .into_iter()
        .collect()
    };
    for h in &mut hits {
        if let Some((snippet, day)) = snippets.get(&h.path) {
            h.snippet = snippet.clone();
            h.day = day.clone();
        }
    }
    hits
}

// ---- fusion ------------------------------------------------------------------------------

/// Rows `(hit, keyword score, similarity)` in the fused order of their two scores (ties by
/// `tie`), at most `limit`, each given its score (rounded to 4 places) by `set`.
fn fused<H>(
    rows: Vec<(H, f64, Option<f64>)>,
    limit: usize,
    tie: impl Fn(&H, &H) -> std::cmp::Ordering,
    set: impl Fn(&mut H, f64),
) -> Vec<H> {
    let lex: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let sims: Vec<f64> = rows.iter().map(|r| r.2.unwrap_or(f64::NAN)).collect();
    let (scores, mut order) = rank::fused_order(&lex, &sims, |a, b| tie(&rows[a].0, &rows[b].0));
    order.truncate(limit);
    let mut slots: Vec<Option<H>> = rows.into_iter().map(|r| Some(r.0)).collect();
    order
        .into_iter()
        .filter_map(|i| {
            let mut h = slots[i].take()?;
            set(&mut h, (scores[i] * 10_000.0).round() / 10_000.0);
            Some(h)
        })
        .collect()
}
