//! Memory files (docs/api.md "Detail memory, files, checkpoints"; docs/design.md "Memory
//! files"): a small virtual file system per tenant. Paths are unique per user and follow
//! memory_core::files's rules.
//!
//! Files are embedded like messages (title and the start of the content), on write or later by
//! the backfill, and searched by keyword and meaning together (src/ops/search.rs).

use crate::embed::write::for_write;
use crate::error::{raise, OrRaise};
use crate::ops::screen;
use crate::ops::search::{self, FileHit};
use crate::pg::events::{self, Event, Node};
use crate::pg::json::Json;
use crate::pg::{spi, tenant, vector};
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

/// Characters of a file the embedding sees (with its title). The built-in model reads 256
/// tokens; remote models more, but a file's opening says what it is about.
const EMBED_CHARS: usize = 4000;

fn embed_body(title: Option<&str>, content: &str) -> String {
    let head: String = content.chars().take(EMBED_CHARS).collect();
    match title {
        Some(t) => format!("{t}\n{head}"),
        None => head,
    }
}

/// memory_file_write, its arguments checked: a no-op when nothing changed, else [`write`].
pub fn write_checked(
    user_id: Option<&str>,
    path: &str,
    title: Option<String>,
    content: &str,
    tags: Option<Vec<String>>,
    metadata: Option<Value>,
) -> Value {
    let user = tenant::resolve(user_id);
    // Screened first (src/ops/screen.rs), so that "unchanged" compares what would be stored.
    let content = &screen::text("file", Some(&user), content);
    let title = title.map(|t| screen::text("file", Some(&user), &t));
    // Unchanged content and title: no new embedding, no new updated_at.
    let unchanged = spi::one_opt::<Json>(
        include_str!("../../sql/queries/files_unchanged.sql"),
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
        return row;
    }
    let out = write_screened(&user, path, title.as_deref(), content, tags, metadata);
    let id = out["id"].as_str().unwrap_or_default().to_string();
    events::record(Event {
        memory_id: Some(&id),
        ..Event::new(&user, Node::Hotpath, "file_write")
    });
    out
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
    // Screened before it is embedded or stored (src/ops/screen.rs).
    let content = screen::text("file", Some(user), content);
    let title = title.map(|t| screen::text("file", Some(user), t));
    write_screened(user, path, title.as_deref(), &content, tags, metadata)
}

/// [`write`] of a title and content already screened.
fn write_screened(
    user: &str,
    path: &str,
    title: Option<&str>,
    content: &str,
    tags: Option<Vec<String>>,
    metadata: Option<Value>,
) -> Value {
    crate::pg::limits::value_bytes("content", content.len());
    // The path names the file (and is what memory_file_read opens): refused, not rewritten.
    screen::identifier("path", path);
    let metadata = metadata.map(|m| screen::json("file", Some(user), &m));
    let tags = tags.map(|t| {
        t.iter()
            .map(|x| screen::text("file", Some(user), x))
            .collect::<Vec<_>>()
    });
    let embedding = for_write(&embed_body(title, content));
    let (vector, model) = embedding.columns();
    let Json(out) = spi::one_opt::<Json>(
        &include_str!("../../sql/queries/files_write.sql")
            .replace("{vector}", &vector::unsized_ty()),
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
    let id = out["id"].as_str().unwrap_or_default();
    if let Some(error) = embedding.record(user, "file", id) {
        pgrx::notice!("file stored without an embedding (the backfill will retry): {error}");
    }
    out
}

/// memory_file_read: the file, its access recorded; P0002 when there is none.
pub fn read(user_id: Option<&str>, path: &str) -> Value {
    let user = tenant::resolve(user_id);
    spi::one_opt::<Json>(
        include_str!("../../sql/queries/files_read.sql"),
        &[user.as_str().into(), path.into()],
        "reading a file",
    )
    .map(|j| j.0)
    .unwrap_or_else(|| {
        raise(
            SqlState::NoDataFound,
            format!("memory file \"{path}\" not found"),
            None,
        )
    })
}

/// A memory_file_ls row: path, title, tags, chars, updated_at, last_accessed_at.
pub type Listed = (
    String,
    Option<String>,
    Vec<String>,
    i32,
    TimestampWithTimeZone,
    Option<TimestampWithTimeZone>,
);

/// memory_file_ls: files under `prefix`, by path.
pub fn ls(user_id: Option<&str>, prefix: &str, limit: i64) -> Vec<Listed> {
    let user = tenant::resolve(user_id);
    spi::rows(
        include_str!("../../sql/queries/files_ls.sql"),
        &[user.as_str().into(), prefix.into(), limit.into()],
        "listing files",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?,
                r.get::<Vec<String>>(3)?.unwrap_or_default(),
                r.get::<i32>(4)?.unwrap_or(0),
                r.get::<TimestampWithTimeZone>(5)?
                    .unwrap_or_else(|| raise(SqlState::NoDataFound, "no timestamp", None)),
                r.get::<TimestampWithTimeZone>(6)?,
            ))
        },
    )
}

/// A file's content and title, its row locked until the transaction ends, so that an edit
/// computed from them is not lost to a concurrent one: a second editor waits here and then
/// reads the first one's result. `None` when there is no file at `path` (or it was moved or
/// deleted while this call waited).
pub fn lock(user: &str, path: &str) -> Option<(String, Option<String>)> {
    spi::row(
        "SELECT content, title FROM memory.files WHERE user_id = $1 AND path = $2 FOR UPDATE",
        &[user.into(), path.into()],
        "reading a file to edit",
        |r| Ok((r.get::<String>(1)?.unwrap_or_default(), r.get::<String>(2)?)),
    )
}

/// Stores the new content of a file locked by [`lock`]: everything else about it (id, title,
/// tags, metadata) stays. The whole new value is held to `memory_ext.max_value_bytes`.
/// `{path, id, event, chars, updated_at}`.
pub fn set_content(user: &str, path: &str, title: Option<&str>, content: &str) -> Value {
    crate::pg::limits::value_bytes("content", content.len());
    let content = &screen::text("file", Some(user), content);
    let embedding = for_write(&embed_body(title, content));
    let (vector, model) = embedding.columns();
    let Json(out) = spi::one_opt::<Json>(
        &include_str!("../../sql/queries/files_edit.sql")
            .replace("{vector}", &vector::unsized_ty()),
        &[
            user.into(),
            path.into(),
            content.into(),
            vector.into(),
            model.into(),
        ],
        "editing a file",
    )
    .unwrap_or(Json(Value::Null));
    let id = out["id"].as_str().unwrap_or_default().to_string();
    embedding.record(user, "file", &id);
    events::record(Event {
        memory_id: Some(&id),
        ..Event::new(user, Node::Hotpath, "file_write")
    });
    out
}

/// memory_file_edit: replaces the single occurrence of `old` with `new` in the locked file.
pub fn edit(user_id: Option<&str>, path: &str, old: &str, new: &str) -> Value {
    let user = tenant::resolve(user_id);
    let (content, title) = lock(&user, path).unwrap_or_else(|| {
        raise(
            SqlState::NoDataFound,
            format!("memory file \"{path}\" not found"),
            None,
        )
    });
    let edited = memory_core::files::replace_once(path, &content, old, new).or_raise();
    set_content(&user, path, title.as_deref(), &edited)
}

/// A new file at `path`, or `false` when there is one already (the memory tool's `create`,
/// which never overwrites: see sql/queries/files_create.sql).
pub fn create(user: &str, path: &str, title: Option<&str>, content: &str) -> bool {
    crate::pg::limits::value_bytes("file_text", content.len());
    let content = &screen::text("file", Some(user), content);
    let title = title.map(|t| screen::text("file", Some(user), t));
    let title = title.as_deref();
    let embedding = for_write(&embed_body(title, content));
    let (vector, model) = embedding.columns();
    let id = spi::one_opt::<String>(
        &include_str!("../../sql/queries/files_create.sql")
            .replace("{vector}", &vector::unsized_ty()),
        &[
            user.into(),
            path.into(),
            title.into(),
            content.into(),
            vector.into(),
            model.into(),
        ],
        "creating a file",
    );
    let Some(id) = id else { return false };
    embedding.record(user, "file", &id);
    events::record(Event {
        memory_id: Some(&id),
        ..Event::new(user, Node::Hotpath, "file_write")
    });
    true
}

/// Every file under the directory `dir` (ending in `/`; empty for all), by path, with its size
/// in bytes.
pub fn sizes(user: &str, dir: &str) -> Vec<(String, usize)> {
    spi::rows(
        include_str!("../../sql/queries/files_sizes.sql"),
        &[user.into(), dir.into()],
        "listing files",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<i64>(2)?.unwrap_or(0).max(0) as usize,
            ))
        },
    )
}

/// The id an event names: the file's, when one file was concerned (a directory's event is one
/// event for all its files; history has a row per file).
fn one(ids: &[String]) -> Option<&str> {
    match ids {
        [id] => Some(id),
        _ => None,
    }
}

/// Moves the file `from`, or the directory `from` with every file under it, to `to` in one
/// statement (sql/queries/files_move.sql): how many files moved, 0 when there was nothing
/// there. A destination taken meanwhile fails the whole move (23505), leaving every file where
/// it was.
pub fn rename(user: &str, from: &str, to: &str) -> usize {
    screen::identifier("path", to);
    let ids = spi::rows_mut(
        include_str!("../../sql/queries/files_move.sql"),
        &[user.into(), from.into(), to.into()],
        "moving files",
        |r| r.get::<String>(1).map(Option::unwrap_or_default),
    );
    if !ids.is_empty() {
        events::record(Event {
            memory_id: one(&ids),
            ..Event::new(user, Node::Hotpath, "file_move")
        });
    }
    ids.len()
}

/// Deletes the file `path` and, with `tree`, every file under the directory `path/`, in one
/// statement: how many files were deleted.
pub fn delete_tree(user: &str, path: &str, tree: bool) -> usize {
    let ids = spi::rows_mut(
        include_str!("../../sql/queries/files_delete.sql"),
        &[user.into(), path.into(), tree.into()],
        "deleting files",
        |r| r.get::<String>(1).map(Option::unwrap_or_default),
    );
    if ids.is_empty() {
        return 0;
    }
    spi::run(
        "DELETE FROM memory.embedding_failures WHERE user_id = $1 AND target = 'file' AND row_id = ANY($2::uuid[])",
        &[user.into(), ids.clone().into()],
        "clearing embedding failures",
    );
    events::record(Event {
        memory_id: one(&ids),
        ..Event::new(user, Node::Hotpath, "file_delete")
    });
    ids.len()
}

/// memory_file_grep: lines matching `pattern` in files under `prefix`, `(path, line, text)`.
/// Whole files are tested first (one regex run per file, most fail fast); only matching files
/// are split into lines. Lines are cut at 1,000 characters in the answer. The expression runs
/// under `memory_ext.regex_timeout_ms`.
pub fn grep(
    user_id: Option<&str>,
    pattern: &str,
    prefix: &str,
    limit: i64,
) -> Vec<(String, i32, String)> {
    let user = tenant::resolve(user_id);
    let ms = crate::gucs::regex_timeout_ms();
    crate::pg::deadline::within(
        ms,
        "the regular expression",
        "memory_ext.regex_timeout_ms",
        || {
            spi::rows(
                include_str!("../../sql/queries/files_grep.sql"),
                &[
                    user.as_str().into(),
                    prefix.into(),
                    pattern.into(),
                    limit.into(),
                ],
                "searching files",
                |r| {
                    Ok((
                        r.get::<String>(1)?.unwrap_or_default(),
                        r.get::<i32>(2)?.unwrap_or(0),
                        r.get::<String>(3)?.unwrap_or_default(),
                    ))
                },
            )
        },
    )
}

/// memory_file_search: the tenant's files by keyword and meaning (src/ops/search.rs).
pub fn search(
    user_id: Option<&str>,
    query: &str,
    tags: Option<Vec<String>>,
    limit: usize,
) -> Vec<FileHit> {
    let user = tenant::resolve(user_id);
    search::files(&user, query, tags, limit)
}

/// memory_file_delete: true when there was a file.
pub fn delete(user_id: Option<&str>, path: &str) -> bool {
    delete_tree(&tenant::resolve(user_id), path, false) > 0
}

/// memory_file_allowlist: the directories `agent_id` may write with the file tools (`None` or
/// empty: none). `{agent_id, paths}`.
pub fn set_allowlist(agent_id: &str, paths: Option<Vec<String>>) -> Value {
    let user = crate::pg::lookup::owner(crate::pg::lookup::Owned::Agent, agent_id);
    let paths = paths.filter(|p| !p.is_empty());
    spi::run(
        "UPDATE memory.agents SET file_paths = $3, updated_at = now() WHERE user_id = $1 AND agent_id = $2",
        &[user.as_str().into(), agent_id.into(), paths.clone().into()],
        "setting an agent's file directories",
    );
    serde_json::json!({"agent_id": agent_id, "paths": paths})
}
