//! Memory files (docs/api.md "Detail memory, files, checkpoints"; docs/design.md "Memory
//! files"): a small virtual file system per tenant — `memory_file_write / _read / _ls / _edit /
//! _grep / _search / _delete`. Paths follow memory_core::files's rules (22023 otherwise). The
//! work is in src/ops/files.rs.

use crate::error::{raise, OrRaise};
use crate::ops::files as ops;
use crate::pg::json::Json;
use memory_core::files as rules;
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

/// Longest regular expression `_grep` accepts.
const MAX_PATTERN_CHARS: usize = 1000;

fn path_arg(path: Option<&str>) -> String {
    rules::path(path).or_raise()
}

fn tags_arg(tags: Option<Vec<Option<String>>>) -> Option<Vec<String>> {
    super::no_nulls("tags", tags).map(|t| {
        t.into_iter()
            .map(|x| {
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
    JsonB(ops::write_checked(
        user_id, path, title, content, tags, metadata,
    ))
}

/// A file: `{path, title, content, tags, metadata, created_at, updated_at, last_accessed_at}`
/// (the last one is the time of this read). P0002 when there is no such file.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_file_read(path: Option<&str>, user_id: default!(Option<&str>, "NULL")) -> JsonB {
    let path = &path_arg(path);
    JsonB(ops::read(user_id, path))
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
    TableIterator::new(ops::ls(user_id, &prefix, limit))
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
    JsonB(ops::edit(user_id, path, old, new))
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
    TableIterator::new(ops::grep(user_id, pattern, &prefix, limit))
}

/// Hybrid search over files (the file search tool of docs/design.md "Memory files"): keyword
/// and meaning, min-max fused half and half like conversation_search; keyword only when no
/// embedding is available; files with any of `tags` only, when given. `(path, title, snippet,
/// score)`, best first.
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
    TableIterator::new(
        ops::search(user_id, query, tags, limit)
            .into_iter()
            .map(|h| (h.path, h.title, h.snippet, h.score)),
    )
}

/// Deletes a file; true when there was one.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_file_delete(path: Option<&str>, user_id: default!(Option<&str>, "NULL")) -> bool {
    let path = &path_arg(path);
    ops::delete(user_id, path)
}

/// Sets the directories an agent may write with the file tools (`memory_file_write`,
/// `memory_file_edit` through memory_tool_call and the gateway), e.g. `{episodes, projects/x}`;
/// NULL or an empty array: none (Anthropic's memory tool keeps its own `/memories`).
/// `{agent_id, paths}` with each path as stored (ending in `/`); 22023 for a path that is not a
/// clean relative directory, P0002 for an unknown agent.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_file_allowlist(agent_id: Option<&str>, paths: Option<Vec<Option<String>>>) -> JsonB {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let paths = super::no_nulls("paths", paths).map(|p| {
        let mut out: Vec<String> = vec![];
        for d in p {
            let d = rules::prefix(Some(d.trim().trim_start_matches('/'))).or_raise();
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out
    });
    JsonB(ops::set_allowlist(agent_id, paths))
}
