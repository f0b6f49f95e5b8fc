//! The memory-file tools (memory_core::tools::files): ls, read, grep and search over the whole
//! file tree, write, edit and delete under the directories the agent may write
//! (src/ops/files.rs).

use super::{day, Cx};
use crate::ops::{files, search};
use crate::pg::limits;
use memory_core::render;
use memory_core::tools::{self, Call};

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Cx { user, .. } = *cx;
    Ok(match c {
        Call::FileList { prefix, limit } => {
            let rows = files::ls(Some(user), &prefix, limit + 1);
            let more = rows.len() as i64 > limit;
            let lines: Vec<String> = rows
                .iter()
                .take(limit as usize)
                .map(|(path, title, _, chars, updated, _)| {
                    let title = title
                        .as_deref()
                        .map(|t| format!(" \"{}\"", render::inline(t)))
                        .unwrap_or_default();
                    format!(
                        "- {}{title} ({chars} characters, {})",
                        render::inline(path),
                        day(updated)
                    )
                })
                .collect();
            match (lines.is_empty(), more) {
                (true, _) => "No files found.".to_string(),
                (false, false) => lines.join("\n"),
                (false, true) => format!(
                    "{}\n[more files: raise limit or name a directory in prefix]",
                    lines.join("\n")
                ),
            }
        }
        Call::FileRead { path, offset } => read_file(user, &path, offset),
        Call::FileGrep {
            pattern,
            prefix,
            limit,
        } => {
            limits::query("pattern", &pattern);
            let rows = files::grep(Some(user), &pattern, &prefix, limit);
            if rows.is_empty() {
                "No matching lines.".to_string()
            } else {
                rows.iter()
                    .map(|(path, line, text)| {
                        format!(
                            "- {}:{line}: {}",
                            render::inline(path),
                            render::inline(text)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
        Call::FileSearch { query, tags, limit } => {
            limits::query("query", &query);
            let tags = (!tags.is_empty()).then_some(tags);
            let hits = files::search(Some(user), &query, tags, limit as usize);
            if hits.is_empty() {
                "No files found.".to_string()
            } else {
                hits.iter().map(file_line).collect::<Vec<_>>().join("\n")
            }
        }
        // Within the directories the application allows (checked with the arguments); through
        // the SQL functions' own paths, so a file written here is one memory_file_write wrote.
        Call::FileWrite { path, content } => {
            limits::value_bytes("content", content.len());
            let title = memory_core::files::default_title(&content);
            let r = files::write_checked(Some(user), &path, title, &content, None, None);
            let done = match r["event"].as_str() {
                Some("created") => "Created",
                Some("noop") => "Unchanged (it already reads so):",
                _ => "Rewrote",
            };
            format!("{done} {}.", render::inline(&path))
        }
        Call::FileEdit { path, old, new } => {
            limits::value_bytes("new_str", new.len());
            files::edit(Some(user), &path, &old, &new);
            format!("Edited {}.", render::inline(&path))
        }
        Call::FileDelete { path } => {
            if files::delete(Some(user), &path) {
                format!("Deleted {}.", render::inline(&path))
            } else {
                return Err(format!("There is no file {}.", render::inline(&path)));
            }
        }
        _ => unreachable!("the table sends only this family's calls here"),
    })
}

/// memory_file_read: a page of a file, its path, title and day first. The content is shown as it
/// is (the model may quote it back into an edit), inside the tool's answer; P0002 when there is
/// no such file, told to the model by the caller.
fn read_file(user: &str, path: &str, offset: i64) -> String {
    let f = files::read(Some(user), path);
    let content = f["content"].as_str().unwrap_or_default();
    let total = content.chars().count();
    let from = (offset as usize).min(total);
    let page: String = content
        .chars()
        .skip(from)
        .take(tools::READ_PAGE_CHARS)
        .collect();
    let end = from + page.chars().count();
    let title = f["title"]
        .as_str()
        .map(|t| format!(" \"{}\"", render::inline(t)))
        .unwrap_or_default();
    let updated = f["updated_at"].as_str().unwrap_or_default();
    let mut out = format!(
        "{}{title} (changed {}, {total} characters)\n{page}",
        render::inline(path),
        updated.get(..10).unwrap_or(updated)
    );
    if end < total {
        out.push_str(&format!(
            "\n[characters {from}-{end} of {total}; call memory_file_read with offset {end} for more]"
        ));
    }
    out
}

/// A file as recall and memory_file_search show it: `- path "title" (YYYY-MM-DD): snippet`, every
/// field on its line (memory_core::render).
pub fn file_line(h: &search::FileHit) -> String {
    let title = h
        .title
        .as_deref()
        .map(|t| format!(" \"{}\"", render::inline(t)))
        .unwrap_or_default();
    format!(
        "- {}{title} ({}): {}",
        render::inline(&h.path),
        h.day,
        render::inline(&h.snippet)
    )
}
