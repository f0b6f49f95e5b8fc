//! Anthropic's client-side memory tool (`memory_20250818`) over memory files: the commands
//! `view`, `create`, `str_replace`, `insert`, `delete` and `rename` on paths under `/memories`,
//! with the outputs and error texts of Anthropic's reference implementation (the
//! `BetaLocalFilesystemMemoryTool` of their Python SDK), since the model was trained on those.
//!
//! `/memories/notes/x.md` is the memory file `memories/notes/x.md`: the tool sees only its own
//! subtree, so it can neither read nor change episodes or other files, and a path cannot escape
//! it (`..` and `.` segments are refused, not resolved). Directories are implied by the files'
//! paths, as in memory files.
//!
//! Everything here is pure: the caller (src/store/tools.rs) reads the files a command needs,
//! calls these functions and writes what they return.

use serde_json::Value;

/// The memory-file folder that `/memories` is.
pub const ROOT: &str = "memories";

/// Line numbers are right-aligned to this width, as in the reference implementation.
const LINE_NUMBER_WIDTH: usize = 6;

/// One command, its arguments checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    View {
        path: String,
        range: Option<(i64, i64)>,
    },
    Create {
        path: String,
        text: String,
    },
    StrReplace {
        path: String,
        old: String,
        new: String,
    },
    Insert {
        path: String,
        line: i64,
        text: String,
    },
    Delete {
        path: String,
    },
    Rename {
        old: String,
        new: String,
    },
}

impl Command {
    /// Reads a tool call's input; the error is the text the model sees.
    pub fn parse(args: &Value) -> Result<Command, String> {
        let s = |k: &str| -> Result<String, String> {
            args.get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("Missing or invalid parameter `{k}`: a string is required."))
        };
        let cmd = s("command")?;
        Ok(match cmd.as_str() {
            "view" => {
                let range = match args.get("view_range") {
                    None | Some(Value::Null) => None,
                    Some(Value::Array(a)) if a.len() == 2 => {
                        match (a[0].as_i64(), a[1].as_i64()) {
                            (Some(x), Some(y)) => Some((x, y)),
                            _ => return Err(range_error()),
                        }
                    }
                    Some(_) => return Err(range_error()),
                };
                Command::View {
                    path: s("path")?,
                    range,
                }
            }
            "create" => Command::Create {
                path: s("path")?,
                text: s("file_text")?,
            },
            "str_replace" => Command::StrReplace {
                path: s("path")?,
                old: s("old_str")?,
                new: s("new_str")?,
            },
            "insert" => Command::Insert {
                path: s("path")?,
                line: args
                    .get("insert_line")
                    .and_then(Value::as_i64)
                    .ok_or("Missing or invalid parameter `insert_line`: an integer is required.")?,
                text: s("insert_text")?,
            },
            "delete" => Command::Delete { path: s("path")? },
            "rename" => Command::Rename {
                old: s("old_path")?,
                new: s("new_path")?,
            },
            other => {
                return Err(format!(
                    "Unknown command: {other}. Use one of view, create, str_replace, insert, delete, rename."
                ))
            }
        })
    }
}

fn range_error() -> String {
    "Invalid `view_range`: it should be a list of two integers, [start, end] (end -1 for the end of the file).".into()
}

/// The memory-file path of a tool path: `/memories` is `Ok(None)` (the directory itself),
/// `/memories/a/b.md` is `Ok(Some("memories/a/b.md"))`.
pub fn file_path(path: &str) -> Result<Option<String>, String> {
    let Some(rest) = path.strip_prefix("/memories") else {
        return Err(format!("Path must start with /memories, got: {path}"));
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return Err(format!("Path must start with /memories, got: {path}"));
    }
    let rel = rest.trim_start_matches('/').trim_end_matches('/');
    if rel.is_empty() {
        return Ok(None);
    }
    let escape = rel
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == ".." || seg.contains('\\'))
        || rel.chars().any(char::is_control);
    if escape {
        return Err(format!("Path {path} would escape /memories directory"));
    }
    // And every rule of memory-file paths (length, bidirectional characters, NFC), as
    // memory_file_write applies them.
    crate::files::path(Some(&format!("{ROOT}/{rel}")))
        .map(Some)
        .map_err(|e| e.to_string())
}

/// The tool path of a memory-file path under `memories/`.
pub fn tool_path(file: &str) -> String {
    match file.strip_prefix(ROOT) {
        Some(rest) => format!("/memories{rest}"),
        None => format!("/memories/{file}"),
    }
}

fn numbered(lines: &[&str], first: usize) -> String {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{:>width$}\t{l}", i + first, width = LINE_NUMBER_WIDTH))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `view` of a file: its lines, numbered from 1, or those of `range` (1-based, inclusive; an
/// end of -1 is the last line).
pub fn view_file(path: &str, content: &str, range: Option<(i64, i64)>) -> Result<String, String> {
    let lines: Vec<&str> = content.split('\n').collect();
    let (from, shown): (usize, &[&str]) = match range {
        None => (1, &lines),
        Some((a, b)) => {
            let start = (a.max(1) - 1) as usize;
            let end = if b == -1 {
                lines.len()
            } else {
                (b.max(0) as usize).min(lines.len())
            };
            if start >= lines.len() || end < start {
                return Err(format!(
                    "Invalid `view_range`: {a}, {b}. The file has {} lines.",
                    lines.len()
                ));
            }
            (start + 1, &lines[start..end])
        }
    };
    Ok(format!(
        "Here's the content of {path} with line numbers:\n{}",
        numbered(shown, from)
    ))
}

/// A size as the reference implementation prints it: 0B, 512B, 1.5K, 2M.
pub fn size(bytes: usize) -> String {
    if bytes == 0 {
        return "0B".into();
    }
    let units = ["B", "K", "M", "G"];
    let i = ((usize::BITS - 1 - bytes.leading_zeros()) / 10).min(3) as usize;
    let v = bytes as f64 / 1024f64.powi(i as i32);
    if v.fract() == 0.0 {
        format!("{}{}", v as u64, units[i])
    } else {
        format!("{v:.1}{}", units[i])
    }
}

/// `view` of a directory: the files and directories up to two levels below `dir` (a tool
/// path), hidden ones (a segment starting with `.`) left out. `files` are (memory-file path,
/// bytes) of every file under it; a directory's size is the sum of the files in it.
pub fn view_dir(dir: &str, files: &[(String, usize)]) -> String {
    let base = dir.trim_end_matches('/');
    let mut entries: std::collections::BTreeMap<String, usize> = Default::default();
    let mut total = 0;
    for (file, bytes) in files {
        let rel = tool_path(file);
        let Some(rel) = rel.strip_prefix(base).map(|r| r.trim_start_matches('/')) else {
            continue;
        };
        if rel.is_empty() || rel.split('/').any(|s| s.starts_with('.')) {
            continue;
        }
        total += bytes;
        let segs: Vec<&str> = rel.split('/').collect();
        // Directories on the way, up to two levels, then the file itself if within two.
        for depth in 1..segs.len().min(3) {
            *entries
                .entry(format!("{}/", segs[..depth].join("/")))
                .or_default() += bytes;
        }
        if segs.len() <= 2 {
            entries.insert(rel.to_string(), *bytes);
        }
    }
    let mut out = format!(
        "Here're the files and directories up to 2 levels deep in {dir}, excluding hidden items:\n{}\t{dir}",
        size(total)
    );
    for (p, bytes) in entries {
        out.push_str(&format!("\n{}\t{base}/{p}", size(bytes)));
    }
    out
}

/// `str_replace`: the new content and the snippet around the change, or the error text.
pub fn str_replace(
    path: &str,
    content: &str,
    old: &str,
    new: &str,
) -> Result<(String, String), String> {
    let hits: Vec<usize> = if old.is_empty() {
        vec![]
    } else {
        content.match_indices(old).map(|(i, _)| i).collect()
    };
    match hits.len() {
        0 => Err(format!(
            "No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
        )),
        1 => {
            let changed = content[..hits[0]].matches('\n').count();
            let updated = content.replacen(old, new, 1);
            let lines: Vec<&str> = updated.split('\n').collect();
            let from = changed.saturating_sub(2);
            let to = (changed + 3).min(lines.len());
            Ok((
                updated.clone(),
                format!(
                    "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{}",
                    numbered(&lines[from..to], from + 1)
                ),
            ))
        }
        _ => {
            // Lines of every occurrence, overlapping ones included, as the reference counts them.
            let mut lines = vec![];
            let mut start = 0;
            while let Some(p) = content[start..].find(old) {
                let at = start + p;
                lines.push((content[..at].matches('\n').count() + 1).to_string());
                start = at + content[at..].chars().next().map_or(1, char::len_utf8);
            }
            Err(format!(
                "No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {}. Please ensure it is unique",
                lines.join(", ")
            ))
        }
    }
}

/// `insert`: `text` as a new line after line `line` (0 = at the top); the new content and the
/// message, or the error text.
pub fn insert(
    path: &str,
    content: &str,
    line: i64,
    text: &str,
) -> Result<(String, String), String> {
    let mut lines: Vec<&str> = content.lines().collect();
    if line < 0 || line as usize > lines.len() {
        return Err(format!(
            "Invalid `insert_line` parameter: {line}. It should be within the range [0, {}].",
            lines.len()
        ));
    }
    lines.insert(line as usize, text.trim_end_matches('\n'));
    let mut updated = lines.join("\n");
    if !updated.ends_with('\n') {
        updated.push('\n');
    }
    Ok((updated, format!("The file {path} has been edited.")))
}

/// The texts of the commands' other outcomes.
pub mod says {
    pub fn missing(path: &str) -> String {
        format!("The path {path} does not exist. Please provide a valid path.")
    }
    pub fn not_a_file(path: &str) -> String {
        format!("The path {path} is not a file.")
    }
    pub fn exists(path: &str) -> String {
        format!("File {path} already exists")
    }
    pub fn created(path: &str) -> String {
        format!("File created successfully at: {path}")
    }
    pub fn deleted(path: &str) -> String {
        format!("Successfully deleted {path}")
    }
    pub fn no_such(path: &str) -> String {
        format!("The path {path} does not exist")
    }
    pub fn root() -> String {
        "Cannot delete the /memories directory itself".into()
    }
    pub fn destination_exists(path: &str) -> String {
        format!("The destination {path} already exists")
    }
    pub fn renamed(old: &str, new: &str) -> String {
        format!("Successfully renamed {old} to {new}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_stay_under_memories() {
        assert_eq!(file_path("/memories"), Ok(None));
        assert_eq!(file_path("/memories/"), Ok(None));
        assert_eq!(
            file_path("/memories/a/b.md"),
            Ok(Some("memories/a/b.md".into()))
        );
        for bad in ["/memoriesx/a", "/etc/passwd", "memories/a", ""] {
            assert!(
                file_path(bad)
                    .unwrap_err()
                    .contains("must start with /memories"),
                "{bad}"
            );
        }
        for bad in [
            "/memories/../x",
            "/memories/a/./b",
            "/memories/a//b",
            "/memories/a\\..\\b",
        ] {
            assert!(
                file_path(bad).unwrap_err().contains("would escape"),
                "{bad}"
            );
        }
        assert_eq!(tool_path("memories/a/b.md"), "/memories/a/b.md");
        // Memory-file path rules hold too: no bidirectional controls, at most 512 characters.
        assert!(file_path("/memories/\u{202E}gnp.md").is_err());
        assert!(file_path(&format!("/memories/{}", "a".repeat(600))).is_err());
        assert_eq!(
            file_path("/memories/cafe\u{301}.md"),
            Ok(Some("memories/caf\u{e9}.md".into()))
        );
    }

    #[test]
    fn commands_parse_and_explain_what_is_wrong() {
        assert_eq!(
            Command::parse(&json!({"command": "view", "path": "/memories", "view_range": [1, 3]})),
            Ok(Command::View {
                path: "/memories".into(),
                range: Some((1, 3))
            })
        );
        assert!(Command::parse(
            &json!({"command": "view", "path": "/memories", "view_range": [1]})
        )
        .unwrap_err()
        .contains("view_range"));
        assert!(
            Command::parse(&json!({"command": "create", "path": "/memories/a"}))
                .unwrap_err()
                .contains("`file_text`")
        );
        assert!(Command::parse(&json!({"command": "chmod"}))
            .unwrap_err()
            .contains("Unknown command: chmod"));
    }

    #[test]
    fn views_number_lines_like_the_reference() {
        let c = "I like tea.\nSam is a nurse.\n";
        assert_eq!(
            view_file("/memories/p.md", c, None).unwrap(),
            "Here's the content of /memories/p.md with line numbers:\n     1\tI like tea.\n     2\tSam is a nurse.\n     3\t"
        );
        assert_eq!(
            view_file("/memories/p.md", c, Some((2, -1))).unwrap(),
            "Here's the content of /memories/p.md with line numbers:\n     2\tSam is a nurse.\n     3\t"
        );
        assert!(view_file("/memories/p.md", c, Some((9, 10))).is_err());
    }

    #[test]
    fn directory_listing_two_levels_deep_without_hidden_items() {
        let files = vec![
            ("memories/notes.md".to_string(), 100),
            ("memories/projects/a.md".to_string(), 2048),
            ("memories/projects/deep/b.md".to_string(), 10),
            ("memories/.secret".to_string(), 5),
        ];
        assert_eq!(
            view_dir("/memories", &files),
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n\
             2.1K\t/memories\n\
             100B\t/memories/notes.md\n\
             2.0K\t/memories/projects/\n\
             2K\t/memories/projects/a.md\n\
             10B\t/memories/projects/deep/"
        );
        assert_eq!(size(0), "0B");
        assert_eq!(size(1536), "1.5K");
        assert_eq!(size(3 * 1024 * 1024), "3M");
    }

    #[test]
    fn str_replace_and_insert_answer_like_the_reference() {
        let c = "a\nb\nc\nd\ne\nf\n";
        let (new, msg) = str_replace("/memories/x", c, "d", "D").unwrap();
        assert_eq!(new, "a\nb\nc\nD\ne\nf\n");
        assert_eq!(
            msg,
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     2\tb\n     3\tc\n     4\tD\n     5\te\n     6\tf"
        );
        assert_eq!(
            str_replace("/memories/x", c, "z", "Z").unwrap_err(),
            "No replacement was performed, old_str `z` did not appear verbatim in /memories/x."
        );
        assert_eq!(
            str_replace("/memories/x", "aa\nb\naa", "a", "b").unwrap_err(),
            "No replacement was performed. Multiple occurrences of old_str `a` in lines: 1, 1, 3, 3. Please ensure it is unique"
        );
        let (new, msg) = insert("/memories/x", "one\ntwo\n", 1, "between\n").unwrap();
        assert_eq!(new, "one\nbetween\ntwo\n");
        assert_eq!(msg, "The file /memories/x has been edited.");
        assert_eq!(
            insert("/memories/x", "one\ntwo\n", 3, "x").unwrap_err(),
            "Invalid `insert_line` parameter: 3. It should be within the range [0, 2]."
        );
    }
}
