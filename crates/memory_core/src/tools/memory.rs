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
//! Everything here is pure: the caller (src/ops/tools/memory.rs) reads the files a command needs,
//! calls these functions and writes what they return.

use super::{enum_of, int, object, string, Call, Family, Parse, Role, Tool};
use serde_json::{json, Value};

/// The tool's entry in the table (super::TOOLS). Its arguments are the command's own
/// (`Command::parse`, with the reference implementation's error texts). For Anthropic's API it
/// is named, not described (super::definitions).
pub const TOOL: Tool = Tool {
    name: "memory",
    family: Family::Memory,
    default: false,
    roles: &[Role::MemoryDirectory],
    spec: |_| {
        (
            "Anthropic's memory tool: a directory of files under /memories that persists between \
             conversations. view a directory or a file (view_range [start, end]), create, \
             str_replace, insert (after insert_line, 0 = top), delete, rename."
                .into(),
            object(
                vec![
                    (
                        "command",
                        enum_of(
                            "What to do.",
                            &[
                                "view",
                                "create",
                                "str_replace",
                                "insert",
                                "delete",
                                "rename",
                            ]
                            .map(String::from),
                        ),
                    ),
                    (
                        "path",
                        string("A path under /memories, e.g. /memories/notes.md."),
                    ),
                    (
                        "view_range",
                        json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                               "description": "view: first and last line, 1-based; -1 for the end."}),
                    ),
                    ("file_text", string("create: the file's content.")),
                    (
                        "old_str",
                        string("str_replace: text that occurs exactly once."),
                    ),
                    ("new_str", string("str_replace: its replacement.")),
                    (
                        "insert_line",
                        int(
                            "insert: the line to insert after, 0 = top.",
                            0,
                            1_000_000,
                            0,
                        ),
                    ),
                    ("insert_text", string("insert: the text to insert.")),
                    ("old_path", string("rename: the current path.")),
                    ("new_path", string("rename: the new path.")),
                ],
                &["command"],
            ),
        )
    },
    parse: Parse::Raw(|args| Command::parse(args).map(Call::Memory)),
};

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

/// Every argument the tool takes (its definition's properties, crate::tools). Keys of other
/// commands than the one called are ignored: a model held to a strict schema sends them all.
pub const KEYS: [&str; 10] = [
    "command",
    "path",
    "view_range",
    "file_text",
    "old_str",
    "new_str",
    "insert_line",
    "insert_text",
    "old_path",
    "new_path",
];

impl Command {
    /// Reads a tool call's input; the error is the text the model sees. An unknown key is
    /// refused, as every other tool refuses it; an optional argument given as `""` or null is
    /// absent (what a model sends when a strict schema makes every field required).
    pub fn parse(args: &Value) -> Result<Command, String> {
        let empty = serde_json::Map::new();
        let obj = match args {
            Value::Object(o) => o,
            Value::Null => &empty,
            _ => return Err("The input must be a JSON object.".into()),
        };
        if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!(
                "Unknown parameter `{}`. The memory tool takes: {}.",
                crate::render::inline(k),
                KEYS.join(", ")
            ));
        }
        let s = |k: &str| -> Result<String, String> {
            obj.get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("Missing or invalid parameter `{k}`: a string is required."))
        };
        let cmd = s("command")?;
        Ok(match cmd.as_str() {
            "view" => {
                let range = match obj.get("view_range") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(x)) if x.is_empty() => None,
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
                line: obj
                    .get("insert_line")
                    .and_then(|v| {
                        v.as_i64().or_else(|| {
                            v.as_f64()
                                .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                                .map(|f| f as i64)
                        })
                    })
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
                    "Unknown command: {}. Use one of view, create, str_replace, insert, delete, rename.",
                    crate::render::inline(other)
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
        return Err(format!(
            "Path must start with /memories, got: {}",
            crate::render::inline(path)
        ));
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return Err(format!(
            "Path must start with /memories, got: {}",
            crate::render::inline(path)
        ));
    }
    // One `/` after `/memories`, and one at the end of a directory: `/memories//x` has an
    // empty segment and is refused, as memory-file paths refuse it.
    let rel = rest.strip_prefix('/').unwrap_or(rest);
    let rel = rel.strip_suffix('/').unwrap_or(rel);
    if rel.is_empty() {
        return Ok(None);
    }
    let shown = crate::render::inline(path);
    let escape = rel
        .split('/')
        .any(|seg| seg == "." || seg == ".." || seg.contains('\\'));
    if escape {
        return Err(format!("Path {shown} would escape /memories directory"));
    }
    if rel.split('/').any(str::is_empty) {
        return Err(format!(
            "Path {shown} has an empty segment (`//`): name every directory, e.g. /memories/notes/x.md"
        ));
    }
    if let Err(why) = rel.split('/').try_for_each(crate::names::legible) {
        return Err(format!(
            "Path {shown} {why}: use names that read unambiguously"
        ));
    }
    // And every rule of memory-file paths (length, bidirectional characters, NFC), as
    // memory_file_write applies them.
    crate::files::path(Some(&format!("{ROOT}/{rel}")))
        .map(Some)
        .map_err(|e| crate::render::inline(&e.to_string()).into_owned())
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

/// Most characters one `view` of a file shows (about 4,000 tokens): a larger file, or range,
/// is shown a page at a time, the last line saying which `view_range` shows the next page, as
/// the search tools page their results. A model's context is the limit, not the file's size.
pub const VIEW_CHARS: usize = 16_000;

/// `view` of a file: its lines, numbered from 1, or those of `range` (1-based, inclusive; an
/// end of -1 is the last line), at most [`VIEW_CHARS`] characters of them.
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
    // Whole lines while they fit; a first line longer than a page is cut, and says so.
    let (mut used, mut n) = (0, 0);
    for l in shown {
        let cost = l.chars().count() + LINE_NUMBER_WIDTH + 2;
        if n > 0 && used + cost > VIEW_CHARS {
            break;
        }
        used += cost;
        n += 1;
    }
    let mut page: Vec<std::borrow::Cow<str>> = shown[..n].iter().map(|l| (*l).into()).collect();
    let mut note = String::new();
    if let Some(first) = page.first_mut() {
        if first.chars().count() > VIEW_CHARS {
            let cut: String = first.chars().take(VIEW_CHARS).collect();
            note = format!(
                "\n[line {from} is {} characters long; only its first {VIEW_CHARS} are shown]",
                first.chars().count()
            );
            *first = cut.into();
        }
    }
    if n < shown.len() {
        let last = from + n - 1;
        note.push_str(&format!(
            "\n[lines {from}-{last} of {} shown; view with view_range [{}, {}] for the next page]",
            lines.len(),
            last + 1,
            (last + n).min(lines.len())
        ));
    }
    let page: Vec<&str> = page.iter().map(|l| l.as_ref()).collect();
    Ok(format!(
        "Here's the content of {path} with line numbers:\n{}{note}",
        numbered(&page, from)
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
    let more = entries.len().saturating_sub(VIEW_ENTRIES);
    for (p, bytes) in entries.into_iter().take(VIEW_ENTRIES) {
        out.push_str(&format!("\n{}\t{base}/{p}", size(bytes)));
    }
    if more > 0 {
        out.push_str(&format!(
            "\n[{more} more entries not shown: view a directory above to see what is in it]"
        ));
    }
    out
}

/// Most entries one `view` of a directory lists (the first, by path); the rest are counted.
pub const VIEW_ENTRIES: usize = 200;

/// An edit of a file's content: the new content and the message, or the error text.
pub type Edit<'a> = dyn Fn(&str) -> Result<(String, String), String> + 'a;

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
    pub fn root_rename() -> String {
        "Cannot rename the /memories directory itself".into()
    }
    pub fn into_itself(old: &str, new: &str) -> String {
        format!("Cannot move {old} into itself ({new} is inside it)")
    }
    pub fn busy() -> String {
        "Another call changed the same memory file at the same moment; view it and try again."
            .into()
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
        for bad in ["/memories/../x", "/memories/a/./b", "/memories/a\\..\\b"] {
            assert!(
                file_path(bad).unwrap_err().contains("would escape"),
                "{bad}"
            );
        }
        for bad in ["/memories//x", "/memories/a//b", "/memories/a//"] {
            assert!(
                file_path(bad).unwrap_err().contains("empty segment"),
                "{bad}"
            );
        }
        // What cannot be displayed unambiguously: separators, zero-width and mixed scripts.
        for bad in [
            "/memories/a\u{2028}b.md",
            "/memories/no\u{200b}tes.md",
            "/memories/p\u{0430}ypal.md",
            "/memories/x\ny.md",
        ] {
            let e = file_path(bad).unwrap_err();
            assert!(!e.contains('\n') && !e.contains('\u{2028}'), "{e}");
        }
        assert_eq!(
            file_path("/memories/заметки/план.md"),
            Ok(Some("memories/заметки/план.md".into()))
        );
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
        // Unknown keys are refused; other commands' keys and "" optionals are not.
        assert!(
            Command::parse(&json!({"command": "view", "path": "/memories", "mode": "x"}))
                .unwrap_err()
                .contains("Unknown parameter `mode`")
        );
        assert_eq!(
            Command::parse(
                &json!({"command": "view", "path": "/memories", "view_range": "",
                                   "file_text": "", "old_path": null})
            ),
            Ok(Command::View {
                path: "/memories".into(),
                range: None
            })
        );
    }

    #[test]
    fn a_huge_file_is_viewed_a_page_at_a_time() {
        let line = "x".repeat(99);
        let content = vec![line.as_str(); 1000].join("\n");
        let v = view_file("/memories/big.md", &content, None).unwrap();
        assert!(v.chars().count() < VIEW_CHARS + 300, "{}", v.len());
        assert!(
            v.ends_with(
                "[lines 1-149 of 1000 shown; view with view_range [150, 298] for the next page]"
            ),
            "{}",
            &v[v.len() - 120..]
        );
        let next = view_file("/memories/big.md", &content, Some((150, 298))).unwrap();
        assert!(
            next.contains("   150\t") && !next.contains("[lines"),
            "{}",
            &next[..80]
        );
        // One line longer than a page is cut, and says so.
        let one = "y".repeat(VIEW_CHARS * 3);
        let v = view_file("/memories/one.md", &one, None).unwrap();
        assert!(v.len() < VIEW_CHARS + 300);
        assert!(
            v.contains("only its first 16000 are shown"),
            "{}",
            &v[v.len() - 100..]
        );
        // A directory lists its first entries and counts the rest.
        let files: Vec<(String, usize)> = (0..500)
            .map(|i| (format!("memories/f{i:03}.md"), 1))
            .collect();
        let d = view_dir("/memories", &files);
        assert_eq!(d.lines().count(), 2 + VIEW_ENTRIES + 1);
        assert!(
            d.ends_with(
                "[300 more entries not shown: view a directory above to see what is in it]"
            ),
            "{d}"
        );
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
