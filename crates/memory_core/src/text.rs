//! Writing constraints (docs/design.md "Writing rules"): what a memory's text may be.
//!
//! Text is trimmed and its whitespace runs collapsed to one space, so that "the same fact" is
//! the same string (the exact-duplicate check hashes this form). Semantic and episodic memories
//! are one or two sentences: at most [`MAX_SHORT_CHARS`] characters.

use crate::error::{SqlError, SqlState};

/// docs/design.md "Writing rules": "1-2 sentences; <= 280 chars" for semantic and episodic
/// memories.
pub const MAX_SHORT_CHARS: usize = 280;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TextError {
    #[error("text is empty after normalisation")]
    Empty,
    #[error("{kind} memory text is {chars} characters, over the limit of {max}")]
    TooLong {
        kind: String,
        chars: usize,
        max: usize,
    },
}

impl SqlError for TextError {
    fn sqlstate(&self) -> SqlState {
        match self {
            TextError::Empty => SqlState::InvalidParameterValue,
            TextError::TooLong { .. } => SqlState::StringDataRightTruncation,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            TextError::TooLong { .. } => Some(
                "write one or two self-contained sentences; put longer detail in \"content\" or use kind \"archival\"".into(),
            ),
            TextError::Empty => None,
        }
    }
}

/// Trim and collapse every run of whitespace (spaces, tabs, newlines) to one space.
pub fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Normalised text that obeys the constraints of `kind`.
pub fn check(kind: &str, text: &str) -> Result<String, TextError> {
    let t = normalize(text);
    if t.is_empty() {
        return Err(TextError::Empty);
    }
    let chars = t.chars().count();
    if matches!(kind, "semantic" | "episodic") && chars > MAX_SHORT_CHARS {
        return Err(TextError::TooLong {
            kind: kind.to_string(),
            chars,
            max: MAX_SHORT_CHARS,
        });
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_whitespace() {
        assert_eq!(normalize("  Ana \t likes\n\ntea  "), "Ana likes tea");
        assert_eq!(normalize(" \n "), "");
    }

    #[test]
    fn constraints() {
        assert_eq!(check("semantic", " x "), Ok("x".into()));
        assert_eq!(check("semantic", "\n\t "), Err(TextError::Empty));
        let long = "a".repeat(281);
        let e = check("episodic", &long).unwrap_err();
        assert_eq!(e.sqlstate(), SqlState::StringDataRightTruncation);
        assert!(check("archival", &long).is_ok());
        assert!(
            check("semantic", &"é".repeat(280)).is_ok(),
            "characters, not bytes"
        );
    }
}
