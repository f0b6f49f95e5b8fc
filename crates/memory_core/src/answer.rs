//! Reading a language model's JSON answer (docs/design.md "Extraction"): models wrap it in a
//! Markdown fence, and an answer cut at `max_tokens` ends in the middle of a string. What was
//! complete before the cut is kept: an answer cut in its tenth fact still has nine, and each
//! is checked like any other (crates/memory_core/src/extract.rs); the one that was cut is never
//! seen, so nothing half-said is written.

use serde_json::Value;

/// The answer without a Markdown code fence around it.
pub fn strip_fence(a: &str) -> &str {
    let t = a.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

/// The answer's JSON value, and whether it was cut short and repaired. A truncated answer is
/// cut back to the end of its last complete value inside an array or object (an element or a
/// member), and the brackets still open are closed. Err when no object can be made of it.
pub fn parse(answer: &str) -> Result<(Value, bool), String> {
    let a = strip_fence(answer);
    match serde_json::from_str::<Value>(a) {
        Ok(v) => Ok((v, false)),
        Err(e) if e.is_eof() => repair(a)
            .map(|v| (v, true))
            .ok_or_else(|| format!("the answer is cut short and nothing in it is whole ({e})")),
        Err(e) => Err(format!("the answer is not JSON ({e})")),
    }
}

/// The longest prefix of `a` that ends a value inside a container, closed.
fn repair(a: &str) -> Option<Value> {
    let start = a.find('{')?;
    let s = &a[start..];
    // Open containers, and for each point where a value inside one ended: the byte offset
    // after it and the containers open there.
    let mut open: Vec<u8> = vec![];
    let mut ends: Vec<(usize, Vec<u8>)> = vec![];
    let (mut in_str, mut escaped) = (false, false);
    for (i, b) in s.bytes().enumerate() {
        if in_str {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => open.push(b),
            b'}' | b']' => {
                open.pop()?;
                if open.is_empty() {
                    break;
                }
                ends.push((i + 1, open.clone()));
            }
            _ => {}
        }
    }
    // Latest first: the most that parses. A member cut after its key (`"a": `) is not an end.
    for (at, stack) in ends.iter().rev() {
        let mut t = s[..*at].trim_end().trim_end_matches(',').to_string();
        for c in stack.iter().rev() {
            t.push(if *c == b'{' { '}' } else { ']' });
        }
        if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&t) {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_answers_parse_as_they_are() {
        assert_eq!(
            parse("```json\n{\"facts\": []}\n```").unwrap(),
            (json!({"facts": []}), false)
        );
        assert!(parse("not json at all").is_err());
        assert!(parse("{\"a\": 1} trailing").is_err());
    }

    #[test]
    fn a_cut_answer_keeps_what_was_whole() {
        let cut = r#"{"facts": [{"turn": 1, "text": "Dana moved to Lisbon."}, {"turn": 2, "text": "Dana is vegetar"#;
        let (v, repaired) = parse(cut).unwrap();
        assert!(repaired);
        assert_eq!(
            v,
            json!({"facts": [{"turn": 1, "text": "Dana moved to Lisbon."}]})
        );
        // Cut inside the first element's object: nothing whole, nothing kept.
        assert!(parse(r#"{"facts": [{"turn": 1, "text": "Da"#).is_err());
        // Strings holding brackets and escaped quotes do not confuse the cut.
        let tricky = r#"{"facts": [{"turn": 1, "text": "a } ] \" {"}, {"turn": 2"#;
        assert_eq!(
            parse(tricky).unwrap().0,
            json!({"facts": [{"turn": 1, "text": "a } ] \" {"}]})
        );
        // A later list cut: the earlier ones whole.
        let two = r#"{"facts": [{"turn": 1, "text": "x"}], "insights": [{"summary": "y"}, {"summ"#;
        assert_eq!(
            parse(two).unwrap().0,
            json!({"facts": [{"turn": 1, "text": "x"}], "insights": [{"summary": "y"}]})
        );
    }
}
