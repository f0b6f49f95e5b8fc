//! Memory files (docs/api.md "Detail memory, files, checkpoints"; docs/design.md "Memory files"): a small virtual
//! file system per tenant — `memory_file_write / _read / _ls / _edit / _grep / _search /
//! _delete`. Paths are unique per user and follow memory_core::files's rules (22023 otherwise).
//!
//! Files are embedded like messages (title and the start of the content), on write or later by
//! the backfill, and searched by keyword and meaning together (`_search`).

use crate::api::embed::{self as emb, WriteEmbedding};
use crate::api::events::{self, Event, Node};
use crate::error::{raise, OrRaise, SpiOk};
use crate::pg::json::Json;
use crate::pg::{spi, tenant};
use memory_core::files as rules;
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

/// Characters of a file the embedding sees (with its title). The built-in model reads 256
/// tokens; remote models more, but a file's opening says what it is about.
const EMBED_CHARS: usize = 4000;

/// Longest regular expression `_grep` accepts.
const MAX_PATTERN_CHARS: usize = 1000;

fn embed_body(title: Option<&str>, content: &str) -> String {
    let head: String = content.chars().take(EMBED_CHARS).collect();
    match title {
        Some(t) => format!("{t}\n{head}"),
        None => head,
    }
}

fn path_arg(path: Option<&str>) -> String {
    rules::path(path).or_raise()
}

fn tags_arg(tags: Option<Vec<Option<String>>>) -> Option<Vec<String>> {
    tags.map(|t| {
        t.into_iter()
            .map(|x| {
                let x = x.unwrap_or_else(|| {
                    raise(
                        SqlState::NullValueNotAllowed,
                        "tags must not contain NULL",
                        None,
                    )
                });
                let x = x.trim().to_string();
                if x.is_empty() || x.chars().count() > 100 {
                    raise(
                        SqlState::InvalidParameterValue,
                        "a tag must have 1 to 100 characters",
                        None,
                    );
                }
                x
            })
            .collect()
    })
}

fn limit_arg(limit: Option<i32>, max: i64) -> i64 {
    let l = *validate::required("limit", limit.as_ref()).or_raise() as i64;
    validate::range("limit", l, 1, max).or_raise()
}

/// Creates or overwrites a file. `title` defaults to the content's first heading or line;
/// `tags` and `metadata` left NULL keep the existing file's. Returns `{path, id, event, chars,
/// updated_at}` with event `created`, `updated` or `noop` (nothing changed).
#[pg_extern(volatile, parallel_unsafe)]
fn memory_file_write(
    path: Option<&str>,
    content: Option<&str>,
    title: default!(Option<&str>, "NULL"),
    tags: default!(Option<Vec<Option<String>>>, "NULL"),
    metadata: default!(Option<Json>, "NULL"),
    user_id: default!(Option<&str>, "NULL"),
) -> JsonB {
    let path = &path_arg(path);
    let content = crate::pg::limits::text("content", content);
    let title = match title {
        Some(t) if t.trim().is_empty() => None,
        Some(t) if t.chars().count() > 255 => raise(
            SqlState::StringDataRightTruncation,
            "title is longer than 255 characters",
            None,
        ),
        Some(t) => Some(memory_core::text::normalize(t)),
        None => rules::default_title(content),
    };
    let tags = tags_arg(tags);
    let metadata = match metadata {
        None => None,
        Some(Json(m @ Value::Object(_))) => Some(m),
        Some(_) => raise(
            SqlState::InvalidParameterValue,
            "metadata must be a JSON object",
            None,
        ),
    };
    let user = tenant::resolve(user_id);
    // Unchanged content and title: no new embedding, no new updated_at.
    let unchanged = spi::one_opt::<Json>(
        "SELECT jsonb_build_object('path', path, 'id', id, 'event', 'noop', 'chars', char_length(content), 'updated_at', updated_at)
         FROM memory.files
         WHERE user_id = $1 AND path = $2 AND content = $3 AND title IS NOT DISTINCT FROM $4
           AND ($5::text[] IS NULL OR tags = $5) AND ($6::jsonb IS NULL OR metadata = $6)",
        &[
            user.as_str().into(),
            path.into(),
            content.into(),
            title.clone().into(),
            tags.clone().into(),
            metadata.clone().map(JsonB).into(),
        ],
        "comparing a file",
    );
    if let Some(Json(row)) = unchanged {
        return JsonB(row);
    }
    let out = write(&user, path, title.as_deref(), content, tags, metadata);
    let id = out["id"].as_str().unwrap_or_default().to_string();
    events::record(Event {
        memory_id: Some(&id),
        ..Event::new(&user, Node::Hotpath, "file_write")
    });
    JsonB(out)
}

/// A file: `{path, title, content, tags, metadata, created_at, updated_at, last_accessed_at}`
/// (the last one is the time of this read). P0002 when there is no such file.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_file_read(path: Option<&str>, user_id: default!(Option<&str>, "NULL")) -> JsonB {
    let path = &path_arg(path);
    let user = tenant::resolve(user_id);
    spi::one_opt::<Json>(
        "UPDATE memory.files SET last_accessed_at = now() WHERE user_id = $1 AND path = $2
         RETURNING jsonb_build_object('path', path, 'title', title, 'content', content, 'tags', tags,
                                      'metadata', metadata, 'created_at', created_at,
                                      'updated_at', updated_at, 'last_accessed_at', last_accessed_at)",
        &[user.as_str().into(), path.into()],
        "reading a file",
    )
    .map(|j| JsonB(j.0))
    .unwrap_or_else(|| {
        raise(
            SqlState::NoDataFound,
            format!("memory file \"{path}\" not found"),
            None,
        )
    })
}

/// Files under `prefix` (a directory: `notes` lists `notes/...`; NULL or '' lists all), by path.
#[pg_extern(stable, parallel_safe)]
#[allow(clippy::type_complexity)]
fn memory_file_ls(
    prefix: default!(Option<&str>, "NULL"),
    limit: default!(Option<i32>, 100),
    user_id: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(path, String),
        name!(title, Option<String>),
        name!(tags, Vec<String>),
        name!(chars, i32),
        name!(updated_at, TimestampWithTimeZone),
        name!(last_accessed_at, Option<TimestampWithTimeZone>),
    ),
> {
    let prefix = rules::prefix(prefix).or_raise();
    let limit = limit_arg(limit, 10_000);
    let user = tenant::resolve(user_id);
    let rows = Spi::connect(|c| {
        c.select(
            "SELECT path, title, tags, char_length(content), updated_at, last_accessed_at
             FROM memory.files WHERE user_id = $1 AND starts_with(path, $2)
             ORDER BY path LIMIT $3",
            None,
            &[user.as_str().into(), prefix.as_str().into(), limit.into()],
        )?
        .map(|r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?,
                r.get::<Vec<String>>(3)?.unwrap_or_default(),
                r.get::<i32>(4)?.unwrap_or(0),
                r.get::<TimestampWithTimeZone>(5)?
                    .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
                r.get::<TimestampWithTimeZone>(6)?,
            ))
        })
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .spi("listing files");
    TableIterator::new(rows)
}

/// Replaces `old` with `new` in a file, where `old` must occur exactly once (P0002 when it
/// does not occur, 22023 when it occurs more than once). Returns `{path, event, chars,
/// updated_at}`.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_file_edit(
    path: Option<&str>,
    old: Option<&str>,
    new: Option<&str>,
    user_id: default!(Option<&str>, "NULL"),
) -> JsonB {
    let path = &path_arg(path);
    let old = crate::pg::limits::text("old", old);
    let new = crate::pg::limits::text("new", new);
    let user = tenant::resolve(user_id);
    let (content, title) = Spi::connect_mut(|c| {
        let rows = c.update(
            "SELECT content, title FROM memory.files WHERE user_id = $1 AND path = $2 FOR UPDATE",
            None,
            &[user.as_str().into(), path.into()],
        )?;
        if rows.is_empty() {
            return Ok(None);
        }
        let r = rows.first();
        Ok::<_, pgrx::spi::Error>(Some((
            r.get::<String>(1)?.unwrap_or_default(),
            r.get::<String>(2)?,
        )))
    })
    .spi("reading a file to edit")
    .unwrap_or_else(|| {
        raise(
            SqlState::NoDataFound,
            format!("memory file \"{path}\" not found"),
            None,
        )
    });
    let edited = rules::replace_once(path, &content, old, new).or_raise();
    let embedding = emb::for_write(&embed_body(title.as_deref(), &edited));
    let (vector, model) = embedding.columns();
    let Json(out) = spi::one_opt::<Json>(
        &format!(
            "UPDATE memory.files SET content = $3, embedding = $4::{v}, embedding_model = $5, updated_at = now()
             WHERE user_id = $1 AND path = $2
             RETURNING jsonb_build_object('path', path, 'id', id, 'event', 'updated', 'chars', char_length(content), 'updated_at', updated_at)",
            v = crate::pg::vector::unsized_ty()
        ),
        &[
            user.as_str().into(),
            path.into(),
            edited.as_str().into(),
            vector.into(),
            model.into(),
        ],
        "editing a file",
    )
    .unwrap_or(Json(Value::Null));
    let id = out["id"].as_str().unwrap_or_default().to_string();
    if let WriteEmbedding::Failed { model, error } = &embedding {
        emb::record_failure(&user, "file", &id, model, error);
    }
    events::record(Event {
        memory_id: Some(&id),
        ..Event::new(&user, Node::Hotpath, "file_write")
    });
    JsonB(out)
}

/// Lines matching a regular expression (Postgres' syntax, as `~`; `(?i)` at the start for
/// case-insensitive), in files under `prefix`: `(path, line, text)` by path and line, at most
/// `limit` lines. An invalid expression is SQLSTATE 2201B.
#[pg_extern(stable, parallel_safe)]
fn memory_file_grep(
    pattern: Option<&str>,
    prefix: default!(Option<&str>, "NULL"),
    limit: default!(Option<i32>, 50),
    user_id: default!(Option<&str>, "NULL"),
) -> TableIterator<'static, (name!(path, String), name!(line, i32), name!(text, String))> {
    let pattern = validate::required("pattern", pattern).or_raise();
    if pattern.is_empty() {
        raise(
            SqlState::InvalidParameterValue,
            "pattern must not be empty",
            None,
        );
    }
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        raise(
            SqlState::InvalidParameterValue,
            format!("pattern is longer than {MAX_PATTERN_CHARS} characters"),
            None,
        );
    }
    let prefix = rules::prefix(prefix).or_raise();
    let limit = limit_arg(limit, 1000);
    let user = tenant::resolve(user_id);
    // Whole files are tested first (one regex run per file, most fail fast); only matching
    // files are split into lines. Lines are cut at 1,000 characters in the answer.
    let ms = crate::gucs::regex_timeout_ms();
    let rows = crate::pg::deadline::within(
        ms,
        "the regular expression",
        "memory_ext.regex_timeout_ms",
        || {
            Spi::connect(|c| {
        c.select(
            "SELECT f.path, l.n::int, left(l.line, 1000)
             FROM memory.files f
             CROSS JOIN LATERAL regexp_split_to_table(f.content, E'\\n') WITH ORDINALITY AS l(line, n)
             WHERE f.user_id = $1 AND starts_with(f.path, $2) AND f.content ~ $3 AND l.line ~ $3
             ORDER BY f.path, l.n
             LIMIT $4",
            None,
            &[
                user.as_str().into(),
                prefix.as_str().into(),
                pattern.into(),
                limit.into(),
            ],
        )?
        .map(|r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<i32>(2)?.unwrap_or(0),
                r.get::<String>(3)?.unwrap_or_default(),
            ))
        })
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
        })
        .spi("searching files")
        },
    );
    TableIterator::new(rows)
}

/// Candidates taken from each side (keyword, vector) before fusion.
const SEARCH_PER_SIDE: i64 = 50;

/// Hybrid search over files (the file search tool of docs/design.md "Memory files"): keyword and meaning, min-max fused
/// half and half like conversation_search; keyword only when no embedding is available; files
/// with any of `tags` only, when given. `(path, title, snippet, score)`, best first.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::type_complexity)]
fn memory_file_search(
    query: Option<&str>,
    tags: default!(Option<Vec<Option<String>>>, "NULL"),
    limit: default!(Option<i32>, 5),
    user_id: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(path, String),
        name!(title, Option<String>),
        name!(snippet, String),
        name!(score, f64),
    ),
> {
    let query = crate::pg::limits::text("query", query);
    crate::pg::limits::query("query", query);
    if query.trim().is_empty() {
        raise(
            SqlState::InvalidParameterValue,
            "query must not be empty",
            None,
        );
    }
    let tags = tags_arg(tags);
    let limit = limit_arg(limit, 100) as usize;
    let user = tenant::resolve(user_id);
    let lexemes = crate::api::query::lexemes(query);
    // Every query term scores the candidates; only the rarer ones look candidates up (a term in
    // every file would have the lexical side rank all of them: 55 vs 17 ms at 10,000 files).
    let tenant = crate::api::query::tenant_lexeme(&user);
    let tsq = crate::api::query::tsquery(&lexemes, &tenant);
    let lookup = crate::api::query::tsquery(&lookup_terms(&user, &lexemes), &tenant);
    let qvec = crate::embed::query_vector(query, "searching files by keyword only");
    let (dense, similarity) = match &qvec {
        Some((m, v)) => {
            let crate::pg::vector::Cosine { model, ty: vt, op } =
                crate::pg::vector::Cosine::of(&m.id, v.len());
            (
                format!(
                    "SELECT f.id FROM memory.files f
                     WHERE f.user_id = $1 AND f.embedding_model = {model} AND ($4::text[] IS NULL OR f.tags && $4)
                     ORDER BY f.embedding::{vt} {op} $3::{vt} LIMIT $5"
                ),
                format!("CASE WHEN f.embedding_model = {model} THEN (1 - (f.embedding::{vt} {op} $3::{vt}))::float8 END"),
            )
        }
        None => (
            "SELECT NULL::uuid AS id WHERE false".into(),
            "NULL::float8".into(),
        ),
    };
    let sql = format!(
        "WITH lex AS (
             SELECT f.id FROM memory.files f
             WHERE $6::text IS NOT NULL AND f.user_id = $1 AND f.tsv @@ $6::tsquery AND ($4::text[] IS NULL OR f.tags && $4)
             ORDER BY ts_rank_cd(f.tsv, $2::tsquery) DESC LIMIT $5
         ), dense AS ({dense}), pool AS (SELECT id FROM lex UNION SELECT id FROM dense)
         SELECT f.path, f.title, ''::text,
                CASE WHEN $2::text IS NULL THEN 0 ELSE ts_rank_cd(f.tsv, $2::tsquery) END::float8,
                {similarity}
         FROM pool p JOIN memory.files f ON f.user_id = $1 AND f.id = p.id"
    );
    type Row = (String, Option<String>, String, f64, Option<f64>);
    let rows: Vec<Row> = crate::pg::vector::with_iterative_scan(|| {
        Spi::connect(|c| {
            c.select(
                &sql,
                None,
                &[
                    user.as_str().into(),
                    tsq.clone().into(),
                    qvec.as_ref()
                        .map(|(_, v)| crate::embed::vector_text(v))
                        .into(),
                    tags.into(),
                    SEARCH_PER_SIDE.into(),
                    lookup.into(),
                ],
            )?
            .map(|r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    r.get::<String>(2)?,
                    r.get::<String>(3)?.unwrap_or_default(),
                    r.get::<f64>(4)?.unwrap_or(0.0),
                    r.get::<f64>(5)?,
                ))
            })
            .collect::<Result<Vec<_>, pgrx::spi::Error>>()
        })
        .spi("searching files")
    });
    let lex: Vec<f64> = rows.iter().map(|r| r.3).collect();
    let sims: Vec<f64> = rows.iter().map(|r| r.4.unwrap_or(f64::NAN)).collect();
    // Ties: path order.
    let (scores, mut order) =
        memory_core::rank::fused_order(&lex, &sims, |a, b| rows[a].0.cmp(&rows[b].0));
    order.truncate(limit);
    let paths: Vec<String> = order.iter().map(|&i| rows[i].0.clone()).collect();
    // Snippets only for what is returned: ts_headline re-parses the text, ~1 ms per file.
    let snippets: std::collections::HashMap<String, String> = if paths.is_empty() {
        Default::default()
    } else {
        Spi::connect_mut(|c| {
            c.update(
                "UPDATE memory.files f SET last_accessed_at = now() WHERE f.user_id = $1 AND f.path = ANY($2)
                 RETURNING f.path,
                     CASE WHEN $3::text IS NOT NULL AND f.tsv @@ $3::tsquery
                          THEN regexp_replace(ts_headline('english', left(f.content, 20000), $3::tsquery,
                                   'MaxWords=30, MinWords=10, MaxFragments=1, StartSel=\"\", StopSel=\"\"'), '\\s+', ' ', 'g')
                          ELSE left(regexp_replace(left(f.content, 1000), '\\s+', ' ', 'g'), 200) END",
                None,
                &[user.as_str().into(), paths.into(), tsq.clone().into()],
            )?
            .map(|r| {
                Ok((
                    r.get::<String>(1)?.unwrap_or_default(),
                    r.get::<String>(2)?.unwrap_or_default(),
                ))
            })
            .collect::<Result<_, pgrx::spi::Error>>()
        })
        .spi("recording access")
    };
    let out: Vec<_> = order
        .into_iter()
        .map(|i| {
            let r = &rows[i];
            (
                r.0.clone(),
                r.1.clone(),
                snippets.get(&r.0).cloned().unwrap_or_default(),
                (scores[i] * 10_000.0).round() / 10_000.0,
            )
        })
        .collect();
    TableIterator::new(out)
}

/// The query terms worth a full-text lookup among the tenant's files: `rank::candidate_terms`
/// over their document frequencies (counted through the full-text index).
fn lookup_terms(user: &str, lexemes: &[String]) -> Vec<String> {
    if lexemes.is_empty() {
        return vec![];
    }
    let dfs: Vec<(String, f64)> = Spi::connect(|c| {
        c.select(
            "SELECT l, (SELECT count(*) FROM memory.files f
                        WHERE f.user_id = $1
                          AND f.tsv @@ (quote_literal(l) || ' & ' || quote_literal(memory.tenant_lexeme($1)))::tsquery)::float8
             FROM unnest($2::text[]) l",
            None,
            &[user.into(), lexemes.to_vec().into()],
        )?
        .map(|r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<f64>(2)?.unwrap_or(0.0),
            ))
        })
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .spi("counting file terms");
    memory_core::rank::candidate_terms(&dfs, memory_core::rank::MAX_LEXICAL_MATCHES)
}

/// Deletes a file; true when there was one.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_file_delete(path: Option<&str>, user_id: default!(Option<&str>, "NULL")) -> bool {
    let path = &path_arg(path);
    let user = tenant::resolve(user_id);
    let id = spi::one_opt::<String>(
        "DELETE FROM memory.files WHERE user_id = $1 AND path = $2 RETURNING id::text",
        &[user.as_str().into(), path.into()],
        "deleting a file",
    );
    match id {
        Some(id) => {
            Spi::run_with_args(
                "DELETE FROM memory.embedding_failures WHERE user_id = $1 AND target = 'file' AND row_id = $2::uuid",
                &[user.as_str().into(), id.as_str().into()],
            )
            .spi("clearing embedding failures");
            events::record(Event {
                memory_id: Some(&id),
                ..Event::new(&user, Node::Hotpath, "file_delete")
            });
            true
        }
        None => false,
    }
}

/// Creates or overwrites a file (memory_file_write after its checks; episodes): `tags` and
/// `metadata` left `None` keep an existing file's. Returns `{path, id, event, chars, updated_at}`.
pub fn write(
    user: &str,
    path: &str,
    title: Option<&str>,
    content: &str,
    tags: Option<Vec<String>>,
    metadata: Option<Value>,
) -> Value {
    let embedding = emb::for_write(&embed_body(title, content));
    let (vector, model) = embedding.columns();
    let Json(out) = spi::one_opt::<Json>(
        &format!(
            "INSERT INTO memory.files AS f (user_id, path, title, content, tags, metadata, embedding, embedding_model)
             VALUES ($1, $2, $3, $4, coalesce($5, '{{}}'), coalesce($6, '{{}}'), $7::{v}, $8)
             ON CONFLICT (user_id, path) DO UPDATE
                SET title = EXCLUDED.title, content = EXCLUDED.content,
                    tags = coalesce($5, f.tags), metadata = coalesce($6, f.metadata),
                    embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
                    updated_at = now()
             RETURNING jsonb_build_object('path', f.path, 'id', f.id,
                                          'event', CASE WHEN xmax = 0 THEN 'created' ELSE 'updated' END,
                                          'chars', char_length(f.content), 'updated_at', f.updated_at)",
            v = crate::pg::vector::unsized_ty()
        ),
        &[
            user.into(),
            path.into(),
            title.into(),
            content.into(),
            tags.into(),
            metadata.map(JsonB).into(),
            vector.into(),
            model.into(),
        ],
        "writing a file",
    )
    .unwrap_or(Json(Value::Null));
    if let WriteEmbedding::Failed { model, error } = &embedding {
        let id = out["id"].as_str().unwrap_or_default();
        emb::record_failure(user, "file", id, model, error);
        pgrx::notice!("file stored without an embedding (the backfill will retry): {error}");
    }
    out
}
