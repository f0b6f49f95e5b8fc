//! Memory files (docs/design.md "Memory files"): path rules and the exact-once string edit.
//!
//! Paths are relative, `/`-separated, like `episodes/2026-01-17/backup-fix.md`. They are keys,
//! not file-system paths, but agents and people read them as paths, so the rules are the ones
//! that keep them unambiguous: no absolute paths, no `.`/`..` segments, no empty segments, no
//! control characters, at most 512 characters (docs/design.md "Memory files").

use crate::error::{SqlError, SqlState};

pub const MAX_PATH_CHARS: usize = 512;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FileError {
    #[error("{arg} must not be null")]
    Null { arg: &'static str },
    #[error("invalid {arg} \"{path}\": {reason}")]
    Path {
        arg: &'static str,
        path: String,
        reason: &'static str,
    },
    #[error("old text not found in \"{path}\"")]
    NotFound { path: String },
    #[error("old text occurs {count} times in \"{path}\"; it must match exactly once")]
    Ambiguous { path: String, count: usize },
    #[error("old text must not be empty")]
    EmptyOld,
}

impl SqlError for FileError {
    fn sqlstate(&self) -> SqlState {
        match self {
            FileError::Null { .. } => SqlState::NullValueNotAllowed,
            FileError::NotFound { .. } => SqlState::NoDataFound,
            _ => SqlState::InvalidParameterValue,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            FileError::Path { .. } => Some(
                "use a relative path such as \"notes/projects/hdrpop.md\": no leading \"/\", no \"..\" or \".\" segments, no empty segments, at most 512 characters".into(),
            ),
            FileError::Ambiguous { .. } => {
                Some("include more surrounding text in old so that it matches once".into())
            }
            _ => None,
        }
    }
}

/// Control, bidirectional and invisible characters are written as escapes: echoed raw,
/// U+202E would reverse the rest of the error message on the reader's screen.
fn shown(p: &str) -> String {
    crate::names::shown(p)
}

fn check_segments(arg: &'static str, p: &str) -> Result<(), FileError> {
    let bad = |reason| {
        Err(FileError::Path {
            arg,
            path: shown(p),
            reason,
        })
    };
    if p.chars().count() > MAX_PATH_CHARS {
        return bad("longer than 512 characters");
    }
    if p.chars().any(char::is_control) {
        return bad("contains control characters");
    }
    if p.chars().any(is_bidi_control) {
        return bad("contains bidirectional control characters");
    }
    if p.starts_with('/') || p.starts_with('\\') || p.get(1..3) == Some(":\\") {
        return bad("absolute paths are not allowed");
    }
    for seg in p.split('/') {
        match seg {
            "" => return bad("empty path segment"),
            "." | ".." => return bad("\".\" and \"..\" segments are not allowed"),
            s if s.trim().is_empty() => return bad("blank path segment"),
            // A path is read by people and models: what cannot be displayed unambiguously
            // (separators, zero-width characters, letters of two scripts in one word) is
            // refused, as for categories (crate::names).
            s => {
                if let Err(reason) = crate::names::legible(s) {
                    return bad(reason);
                }
            }
        }
    }
    Ok(())
}

/// Unicode's bidirectional formatting characters (embeddings, overrides, isolates, marks): in
/// a path they make one name display as another (`U+202E` reverses what follows).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A path in Unicode normalisation form C.
///
/// # Why
/// `notes/café.md` typed on one keyboard (é as one code point) and pasted from another (e +
/// combining accent) list identically but were two files. Every path is stored and looked up
/// in NFC, the form most input produces, so both spellings name the same file.
fn nfc(p: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    p.nfc().collect()
}

/// A file path: required, non-empty, relative, clean, in NFC.
pub fn path(v: Option<&str>) -> Result<String, FileError> {
    let p = v.ok_or(FileError::Null { arg: "path" })?;
    if p.is_empty() {
        return Err(FileError::Path {
            arg: "path",
            path: String::new(),
            reason: "empty",
        });
    }
    if p.ends_with('/') {
        return Err(FileError::Path {
            arg: "path",
            path: shown(p),
            reason: "a file path must not end with \"/\"",
        });
    }
    check_segments("path", p)?;
    Ok(nfc(p))
}

/// A directory prefix for `_ls` / `_grep`: NULL or empty means every file; otherwise a clean
/// path, with or without a trailing `/`. Returned with the trailing `/`, so that `notes`
/// matches `notes/a.md` but not `notes2/a.md`.
pub fn prefix(v: Option<&str>) -> Result<String, FileError> {
    match v {
        None | Some("") => Ok(String::new()),
        Some(p) => {
            let trimmed = p.strip_suffix('/').unwrap_or(p);
            check_segments("prefix", trimmed)?;
            Ok(format!("{}/", nfc(trimmed)))
        }
    }
}

/// `content` with `old` replaced by `new`, where `old` must occur exactly once.
pub fn replace_once(path: &str, content: &str, old: &str, new: &str) -> Result<String, FileError> {
    if old.is_empty() {
        return Err(FileError::EmptyOld);
    }
    let count = content.matches(old).take(2).count();
    match count {
        0 => Err(FileError::NotFound { path: shown(path) }),
        1 => Ok(content.replacen(old, new, 1)),
        _ => Err(FileError::Ambiguous {
            path: shown(path),
            count: content.matches(old).count(),
        }),
    }
}

/// The title a file gets when the writer gives none: its first markdown heading, else its first
/// non-empty line, at most 255 characters (docs/design.md "Memory files").
pub fn default_title(content: &str) -> Option<String> {
    let line = content
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?
        .trim_start_matches('#')
        .trim();
    if line.is_empty() {
        return None;
    }
    Some(line.chars().take(255).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            path(Some("episodes/2026-01-17/run.md")),
            Ok("episodes/2026-01-17/run.md".to_string())
        );
        assert_eq!(path(Some("notes.md")), Ok("notes.md".to_string()));
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "..",
            "./a",
            "a//b",
            "a/",
            "a\nb",
            "C:\\x",
            "a/ /b",
        ] {
            let e = path(Some(bad)).unwrap_err();
            assert_eq!(e.sqlstate(), SqlState::InvalidParameterValue, "{bad:?}");
            assert!(e.hint().is_some());
        }
        assert!(path(Some(&"a".repeat(512))).is_ok());
        assert!(path(Some(&"a".repeat(513))).is_err());
        assert!(
            path(Some(&"é".repeat(512))).is_ok(),
            "characters, not bytes"
        );
        assert_eq!(
            path(None).unwrap_err().sqlstate(),
            SqlState::NullValueNotAllowed
        );
        assert!(
            path(Some("a..b/c.md")).is_ok(),
            "dots inside a name are fine"
        );
    }

    #[test]
    fn prefixes() {
        assert_eq!(prefix(None), Ok(String::new()));
        assert_eq!(prefix(Some("")), Ok(String::new()));
        assert_eq!(prefix(Some("notes")), Ok("notes/".into()));
        assert_eq!(prefix(Some("notes/x/")), Ok("notes/x/".into()));
        assert!(prefix(Some("/notes")).is_err());
        assert!(prefix(Some("../notes")).is_err());
    }

    #[test]
    fn edits() {
        assert_eq!(replace_once("p", "a b c", "b", "x"), Ok("a x c".into()));
        assert_eq!(
            replace_once("p", "a b c", "z", "x").unwrap_err().sqlstate(),
            SqlState::NoDataFound
        );
        let e = replace_once("p", "b b b", "b", "x").unwrap_err();
        assert_eq!(
            e,
            FileError::Ambiguous {
                path: "p".into(),
                count: 3
            }
        );
        assert_eq!(e.sqlstate(), SqlState::InvalidParameterValue);
        assert_eq!(replace_once("p", "abc", "", "x"), Err(FileError::EmptyOld));
        assert_eq!(replace_once("p", "abc", "abc", ""), Ok(String::new()));
    }

    #[test]
    fn titles() {
        assert_eq!(
            default_title("\n# Backup fix\nbody").as_deref(),
            Some("Backup fix")
        );
        assert_eq!(
            default_title("plain first line\n").as_deref(),
            Some("plain first line")
        );
        assert_eq!(default_title("  \n"), None);
        assert_eq!(default_title("#\n"), None);
    }
}

#[cfg(test)]
mod unicode_tests {
    use super::*;

    #[test]
    fn paths_are_nfc_and_bidi_controls_are_refused() {
        let composed = path(Some("notes/caf\u{e9}.md")).unwrap();
        let decomposed = path(Some("notes/cafe\u{301}.md")).unwrap();
        assert_eq!(composed, decomposed);
        assert_eq!(prefix(Some("cafe\u{301}")).unwrap(), "caf\u{e9}/");
        for p in ["notes/\u{202E}dm.exe", "a\u{2066}b.md", "x\u{200F}.md"] {
            let e = path(Some(p)).unwrap_err();
            assert!(e.to_string().contains("bidirectional"), "{e}");
        }
    }
}
