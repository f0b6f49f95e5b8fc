//! The memory-file tools: list, read, grep and search the whole file tree (episodes and
//! roll-ups included, where Anthropic's `memory` tool keeps to `/memories`), named after the SQL
//! functions they call. They run in src/ops/tools/files.rs.

use super::{int, object, string, Call, Family, Parse, Role, Tool};
use serde_json::json;

/// A path a model gave a file tool, as the store names it: `/episodes/x.md` and `episodes/x.md`
/// are one file (the `memory` tool's paths start with `/`). Refused as memory-file paths are.
fn file_arg(path: &str) -> Result<String, String> {
    let p = path.trim();
    crate::files::path(Some(p.strip_prefix('/').unwrap_or(p))).map_err(|e| e.to_string())
}

/// A directory a model gave a file tool; empty or `/` for every file.
fn dir_arg(prefix: Option<&str>) -> Result<String, String> {
    let p = prefix.unwrap_or("").trim();
    crate::files::prefix(Some(p.trim_start_matches('/'))).map_err(|e| e.to_string())
}

pub const LS: Tool = Tool {
    name: "memory_file_ls",
    family: Family::Files,
    default: false,
    roles: &[Role::ReadsFiles],
    spec: |_| {
        (
            "List your memory files (notes, episodes/, projects/ roll-ups, memories/) under a \
             directory, with title, size and last change."
                .into(),
            object(
                vec![
                    (
                        "prefix",
                        string("A directory, e.g. episodes/2024-05-08; empty for all files."),
                    ),
                    ("limit", int("How many files, at most.", 1, 200, 50)),
                ],
                &[],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::FileList {
            prefix: dir_arg(a.opt_text("prefix")?.as_deref())?,
            limit: a.int("limit")?,
        })
    }),
};

pub const READ: Tool = Tool {
    name: "memory_file_read",
    family: Family::Files,
    default: false,
    roles: &[Role::ReadsFiles],
    spec: |_| {
        (
            "Read one of your memory files by its path (as memory_file_ls, memory_file_search or your \
             memory context show it), 16,000 characters at a time."
                .into(),
            object(
                vec![
                    ("path", string("The file's path, e.g. episodes/2024-05-08/run-1.md.")),
                    (
                        "offset",
                        int("Character offset to read from.", 0, i64::from(i32::MAX), 0),
                    ),
                ],
                &["path"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::FileRead {
            path: file_arg(&a.nonempty("path")?)?,
            offset: a.int("offset")?,
        })
    }),
};

pub const GREP: Tool = Tool {
    name: "memory_file_grep",
    family: Family::Files,
    default: false,
    roles: &[Role::ReadsFiles],
    spec: |_| {
        (
            "Find the lines of your memory files that match a regular expression, each with \
             its path and line number."
                .into(),
            object(
                vec![
                    (
                        "pattern",
                        string("A regular expression (POSIX), e.g. deploy|release."),
                    ),
                    (
                        "prefix",
                        string("Only files under this directory; empty for all."),
                    ),
                    ("limit", int("How many lines, at most.", 1, 100, 20)),
                ],
                &["pattern"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::FileGrep {
            pattern: a.nonempty("pattern")?,
            prefix: dir_arg(a.opt_text("prefix")?.as_deref())?,
            limit: a.int("limit")?,
        })
    }),
};

pub const SEARCH: Tool = Tool {
    name: "memory_file_search",
    family: Family::Files,
    default: false,
    roles: &[Role::ReadsFiles],
    spec: |_| {
        (
            "Search your memory files (notes, episodes, project roll-ups) by meaning and \
             keywords: the best files with path, day and a snippet. Open one with memory_file_read."
                .into(),
            object(
                vec![
                    ("query", string("What to look for, in plain words.")),
                    ("tags", json!({"type": "array", "items": {"type": "string"},
                                    "description": "Only files with all of these tags."})),
                    ("limit", int("How many files, at most.", 1, 20, 3)),
                ],
                &["query"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::FileSearch {
            query: a.nonempty("query")?,
            tags: a.list("tags")?,
            limit: a.int("limit")?,
        })
    }),
};

/// A path the agent may write: under one of the directories the application allows it
/// (`Agent::file_paths`, memory_file_allowlist). The message names them.
fn writable(a: &super::Args, path: &str) -> Result<String, String> {
    let p = file_arg(path)?;
    let dirs = a.agent().file_paths.clone().unwrap_or_default();
    if dirs.iter().any(|d| p.starts_with(d.as_str())) {
        Ok(p)
    } else {
        Err(format!(
            "you may not write \"{}\"; you may write files under: {}",
            crate::render::inline(&p),
            dirs.join(", ")
        ))
    }
}

fn allowed_dirs(agent: &super::Agent) -> String {
    agent.file_paths.clone().unwrap_or_default().join(", ")
}

pub const WRITE: Tool = Tool {
    name: "memory_file_write",
    family: Family::Files,
    default: false,
    roles: &[Role::WritesFiles],
    spec: |agent| {
        (
            format!(
                "Write a memory file whole (create it, or replace its content), e.g. to fix an \
                 episode that is wrong. You may write under: {}.",
                allowed_dirs(agent)
            ),
            object(
                vec![
                    (
                        "path",
                        string("The file's path, e.g. episodes/2024-05-08/deploy.md."),
                    ),
                    ("content", string("The whole new content (markdown).")),
                ],
                &["path", "content"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::FileWrite {
            path: writable(a, &a.nonempty("path")?)?,
            content: a.text("content")?,
        })
    }),
};

pub const EDIT: Tool = Tool {
    name: "memory_file_edit",
    family: Family::Files,
    default: false,
    roles: &[Role::WritesFiles],
    spec: |agent| {
        (
            format!(
                "Replace one passage of a memory file: old_str must occur in it exactly once. \
                 You may edit files under: {}.",
                allowed_dirs(agent)
            ),
            object(
                vec![
                    ("path", string("The file's path.")),
                    (
                        "old_str",
                        string("The exact text to replace, once in the file."),
                    ),
                    ("new_str", string("The text to put there.")),
                ],
                &["path", "old_str", "new_str"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::FileEdit {
            path: writable(a, &a.nonempty("path")?)?,
            old: a.nonempty("old_str")?,
            new: a.text("new_str")?,
        })
    }),
};

pub const DELETE: Tool = Tool {
    name: "memory_file_delete",
    family: Family::Files,
    default: false,
    roles: &[Role::WritesFiles],
    spec: |agent| {
        (
            format!(
                "Delete a memory file, when the user asks you to or it is wrong through and \
                 through. You may delete files under: {}.",
                allowed_dirs(agent)
            ),
            object(vec![("path", string("The file's path."))], &["path"]),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::FileDelete {
            path: writable(a, &a.nonempty("path")?)?,
        })
    }),
};
