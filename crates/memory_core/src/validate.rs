//! Argument rules shared by every function: ids, roles, required values.
//!
//! # Why so strict
//! Ids end up in primary keys, XML tags and log lines. Rejecting control characters and absurd
//! lengths at the edge keeps every later layer simple, and gives the caller a message that
//! names the argument instead of a constraint name.

use crate::error::{SqlError, SqlState};

/// Longest id we accept (agent_id, thread_id, user_id, run_id ...), in characters. Real ids are
/// UUIDs (36) or slugs; 200 leaves room for composite keys without letting a 1 MB string in.
pub const MAX_ID_CHARS: usize = 200;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArgError {
    #[error("{arg} must not be null")]
    Null { arg: &'static str },
    #[error("{arg} must not be empty")]
    Empty { arg: &'static str },
    #[error("{arg} is {chars} characters long, over the limit of {max}")]
    IdTooLong {
        arg: &'static str,
        chars: usize,
        max: usize,
    },
    #[error("{arg} must not contain control characters")]
    ControlChars { arg: &'static str },
    #[error("invalid role \"{role}\"")]
    Role { role: String },
    #[error("{arg} must be between {min} and {max}, got {value}")]
    Range {
        arg: &'static str,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("{arg}: {reason}")]
    Invalid { arg: &'static str, reason: String },
    #[error("{arg} is {bytes} bytes, over the limit of {max}")]
    TooLarge {
        arg: &'static str,
        bytes: usize,
        max: usize,
    },
}

impl SqlError for ArgError {
    fn sqlstate(&self) -> SqlState {
        match self {
            ArgError::Null { .. } => SqlState::NullValueNotAllowed,
            ArgError::TooLarge { .. } => SqlState::StringDataRightTruncation,
            _ => SqlState::InvalidParameterValue,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            ArgError::Role { .. } => {
                Some("role must be one of system, user, assistant, tool".into())
            }
            _ => None,
        }
    }
}

/// A required argument: present.
pub fn required<'a, T: ?Sized>(arg: &'static str, v: Option<&'a T>) -> Result<&'a T, ArgError> {
    v.ok_or(ArgError::Null { arg })
}

/// A caller-chosen id: non-empty after trimming, at most [`MAX_ID_CHARS`], no control characters.
/// Returns it unchanged (ids are compared exactly; we do not trim silently).
pub fn id<'a>(arg: &'static str, v: Option<&'a str>) -> Result<&'a str, ArgError> {
    let v = required(arg, v)?;
    if v.trim().is_empty() {
        return Err(ArgError::Empty { arg });
    }
    let chars = v.chars().count();
    if chars > MAX_ID_CHARS {
        return Err(ArgError::IdTooLong {
            arg,
            chars,
            max: MAX_ID_CHARS,
        });
    }
    if v.chars().any(char::is_control) {
        return Err(ArgError::ControlChars { arg });
    }
    Ok(v)
}

/// An optional id: `None` stays `None`; a given one follows [`id`].
pub fn optional_id<'a>(arg: &'static str, v: Option<&'a str>) -> Result<Option<&'a str>, ArgError> {
    v.map(|s| id(arg, Some(s))).transpose()
}

/// Largest message content or text argument we accept, in bytes (16 MiB). Postgres allows
/// 1 GB, but each byte passes through tokenisation and full-text indexing on the write path;
/// outputs larger than this belong in detail memory (`memory_ref_store`), not in a message.
pub const MAX_TEXT_BYTES: usize = 16 * 1024 * 1024;

/// A required text argument no larger than [`MAX_TEXT_BYTES`].
pub fn text<'a>(arg: &'static str, v: Option<&'a str>) -> Result<&'a str, ArgError> {
    let v = required(arg, v)?;
    if v.len() > MAX_TEXT_BYTES {
        return Err(ArgError::TooLarge {
            arg,
            bytes: v.len(),
            max: MAX_TEXT_BYTES,
        });
    }
    Ok(v)
}

/// The four chat roles of docs/design.md "Recall and archival memory".
pub const ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

pub fn role(v: Option<&str>) -> Result<&str, ArgError> {
    let v = required("role", v)?;
    if ROLES.contains(&v) {
        Ok(v)
    } else {
        Err(ArgError::Role {
            role: v.chars().take(40).collect(),
        })
    }
}

/// An integer argument within `min..=max`.
pub fn range(arg: &'static str, value: i64, min: i64, max: i64) -> Result<i64, ArgError> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(ArgError::Range {
            arg,
            value,
            min,
            max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert_eq!(id("agent_id", Some("planner")), Ok("planner"));
        assert_eq!(
            id("agent_id", None),
            Err(ArgError::Null { arg: "agent_id" })
        );
        assert_eq!(
            id("agent_id", Some("  ")),
            Err(ArgError::Empty { arg: "agent_id" })
        );
        assert!(matches!(
            id("agent_id", Some(&"x".repeat(201))),
            Err(ArgError::IdTooLong { chars: 201, .. })
        ));
        assert_eq!(
            id("thread_id", Some("a\nb")),
            Err(ArgError::ControlChars { arg: "thread_id" })
        );
        assert_eq!(optional_id("run_id", None), Ok(None));
    }

    #[test]
    fn roles_and_ranges() {
        assert_eq!(role(Some("tool")), Ok("tool"));
        let e = role(Some("robot")).unwrap_err();
        assert_eq!(e.sqlstate(), SqlState::InvalidParameterValue);
        assert_eq!(e.to_string(), "invalid role \"robot\"");
        assert_eq!(
            role(None).unwrap_err().sqlstate(),
            SqlState::NullValueNotAllowed
        );
        assert!(range("limit", 0, 1, 100).is_err());
        assert_eq!(range("limit", 5, 1, 100), Ok(5));
    }
}

/// Parses the text form of a jsonb argument (`arg` names it in the error). serde_json's depth
/// limit (128 levels) is kept on purpose: it bounds the recursion of everything that walks the
/// value afterwards. jsonb itself stores deeper documents and numbers beyond f64 (`1e400`);
/// both are refused here with a message that says which.
pub fn json_text(arg: &'static str, text: &str) -> Result<serde_json::Value, ArgError> {
    // A number too small for a float parses as 0.0 without an error: json_shape finds it.
    if let Err(reason) = json_shape(text) {
        return Err(ArgError::Invalid {
            arg,
            reason: reason.to_string(),
        });
    }
    serde_json::from_str(text).map_err(|e| {
        let why = e.to_string();
        let reason = if why.contains("recursion limit") {
            "JSON nested more than 128 levels deep".to_string()
        } else if why.contains("number out of range") {
            "JSON number out of range (numbers must fit a 64-bit float)".to_string()
        } else {
            format!("invalid JSON: {why}")
        };
        ArgError::Invalid { arg, reason }
    })
}

/// Deepest nesting a stored JSON document may have: serde_json's own limit, which every reader
/// of a stored value goes through (see [`json_text`]).
pub const MAX_JSON_DEPTH: usize = 128;

/// Checks a JSON document's text (as jsonb prints it) without building it: nested at most
/// [`MAX_JSON_DEPTH`] levels, every number within a 64-bit float. One pass over the bytes, so
/// a value of megabytes (a checkpoint) is checked for the cost of reading it, and a write that
/// no reader could read back is refused at the door. The reason, or `Ok`.
pub fn json_shape(text: &str) -> Result<(), &'static str> {
    let b = text.as_bytes();
    let (mut depth, mut i, mut in_string) = (0usize, 0usize, false);
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err("JSON nested more than 128 levels deep");
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let literal = &text[start..i];
                let mantissa = literal.split(['e', 'E']).next().unwrap_or_default();
                let nonzero = mantissa.bytes().any(|d| matches!(d, b'1'..=b'9'));
                // Too small counts as out of range too: `1e-400` read back as 0.0.
                let ok = literal
                    .parse::<f64>()
                    .is_ok_and(|v| v.is_finite() && (v != 0.0 || !nonzero));
                if !ok {
                    return Err("JSON number out of range (numbers must fit a 64-bit float)");
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod json_tests {
    use super::*;

    #[test]
    fn shapes_are_checked_without_parsing() {
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert!(json_shape(&deep).unwrap_err().contains("128 levels"));
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert_eq!(json_shape(&ok), Ok(()));
        assert!(json_shape(r#"{"n": 1e400}"#)
            .unwrap_err()
            .contains("out of range"));
        assert!(json_shape(r#"{"n": -1.5e300, "s": "[[[1e400 \\" ]]"}"#).is_ok());
        assert!(json_shape(r#"{"n": 1e-400}"#).is_err());
        assert!(json_shape(r#"{"n": -2.5E-999}"#).is_err());
        assert!(json_shape(r#"{"n": 0.0e-400, "m": 0, "k": -0.0, "s": 5e-324}"#).is_ok());
        assert!(json_shape(r#"{"k\"[": [1, 2.5, -3e-7, {"x": null}]}"#).is_ok());
    }

    #[test]
    fn deep_and_huge_json_are_argument_errors() {
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        let e = json_text("request", &deep).unwrap_err();
        assert_eq!(
            e.to_string(),
            "request: JSON nested more than 128 levels deep"
        );
        assert_eq!(e.sqlstate(), SqlState::InvalidParameterValue);
        let e = json_text("request", r#"{"metadata": {"n": 1e400}}"#).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert!(json_text("request", r#"{"n": 1e300}"#).is_ok());
        // jsonb prints 1e-400 in full: read as a float it is 0.0.
        let tiny = format!("{{\"n\": 0.{}1}}", "0".repeat(399));
        assert!(json_text("request", &tiny)
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        let ok = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(json_text("request", &ok).is_ok());
    }
}

/// A required text argument no larger than `max` bytes (the pgrx side passes the
/// `memory_ext.max_value_bytes` setting).
pub fn text_max<'a>(
    arg: &'static str,
    v: Option<&'a str>,
    max: usize,
) -> Result<&'a str, ArgError> {
    let v = required(arg, v)?;
    max_bytes(arg, v.len(), max)?;
    Ok(v)
}

/// `bytes` of argument `arg` within `max`: 22001 otherwise.
pub fn max_bytes(arg: &'static str, bytes: usize, max: usize) -> Result<(), ArgError> {
    if bytes > max {
        return Err(ArgError::TooLarge { arg, bytes, max });
    }
    Ok(())
}

/// A query text of at most `max` characters (22023 otherwise: a query is a question, not a
/// document).
pub fn query_chars(arg: &'static str, q: &str, max: usize) -> Result<(), ArgError> {
    // Bytes bound characters from above: count only when the bytes alone may be over.
    if q.len() > max {
        let chars = q.chars().count();
        if chars > max {
            return Err(ArgError::IdTooLong { arg, chars, max });
        }
    }
    Ok(())
}

/// At most `max` elements in a batch argument.
pub fn batch_len(arg: &'static str, len: usize, max: usize) -> Result<(), ArgError> {
    if len > max {
        return Err(ArgError::Invalid {
            arg,
            reason: format!("{len} elements, at most {max} allowed (memory_ext.max_batch)"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    #[test]
    fn limits_name_the_argument_and_the_bound() {
        assert!(text_max("content", Some("abc"), 3).is_ok());
        let e = text_max("content", Some("abcd"), 3).unwrap_err();
        assert_eq!(e.sqlstate(), SqlState::StringDataRightTruncation);
        assert_eq!(e.to_string(), "content is 4 bytes, over the limit of 3");
        assert!(query_chars("query", "ééé", 3).is_ok());
        assert_eq!(
            query_chars("query", "abcd", 3).unwrap_err().sqlstate(),
            SqlState::InvalidParameterValue
        );
        assert!(batch_len("inputs", 1001, 1000)
            .unwrap_err()
            .to_string()
            .contains("at most 1000"));
    }
}
