//! The strings inside a checkpoint blob, for screening (docs/api.md "Screening").
//!
//! # Why
//! A LangGraph app's conversation lives in its checkpoint blobs: a message history that
//! message_append redacts was kept whole beside it. LangGraph records each blob's type; the
//! ones it writes for values it can read back without running code are `json` and `msgpack`
//! (langgraph's JsonPlusSerializer: msgpack, its own classes as extension types whose payload
//! is msgpack again). Those are decoded, each string passed through the screen, and encoded
//! again only when a string changed: an untouched blob stays byte for byte what the framework
//! wrote. Other types (`bytes`, `pickle`, `null`, `empty`, anything else) are kept as they are.

use rmpv::Value as Mp;
use serde_json::Value;

/// Extension types nest this deep at most; deeper payloads are left as they are. LangGraph's
/// messages sit one or two deep.
const MAX_EXT_DEPTH: usize = 4;
/// Arrays and maps nest this deep at most in one msgpack value (rmpv's own limit is 1,024, whose
/// recursion overflows a thread's stack in a debug build): a blob nested deeper is kept as
/// written. serde_json's limit for the `json` type is 128.
const MAX_NESTING: usize = 128;

/// `blob` of LangGraph type `kind` with every string passed through `screen`; `None` when no
/// string changed, the type is not one read here, or the blob does not decode as its type.
pub fn screened(
    kind: &str,
    blob: &[u8],
    screen: &mut dyn FnMut(&str) -> String,
) -> Option<Vec<u8>> {
    match kind {
        "json" => {
            let mut v: Value = serde_json::from_slice(blob).ok()?;
            json_strings(&mut v, screen).then(|| serde_json::to_vec(&v).ok())?
        }
        "msgpack" => {
            let mut v = decode(blob)?;
            msgpack_strings(&mut v, screen, 0).then(|| encode(&v))?
        }
        _ => None,
    }
}

fn json_strings(v: &mut Value, screen: &mut dyn FnMut(&str) -> String) -> bool {
    match v {
        Value::String(s) => {
            let out = screen(s);
            let changed = out != *s;
            *s = out;
            changed
        }
        Value::Array(a) => a.iter_mut().fold(false, |c, x| json_strings(x, screen) | c),
        Value::Object(o) => o
            .values_mut()
            .fold(false, |c, x| json_strings(x, screen) | c),
        _ => false,
    }
}

/// One whole msgpack value: `None` when `b` is not exactly one.
fn decode(b: &[u8]) -> Option<Mp> {
    let mut r = b;
    let v = rmpv::decode::read_value_with_max_depth(&mut r, MAX_NESTING).ok()?;
    r.is_empty().then_some(v)
}

fn encode(v: &Mp) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, v).ok()?;
    Some(out)
}

fn msgpack_strings(v: &mut Mp, screen: &mut dyn FnMut(&str) -> String, depth: usize) -> bool {
    match v {
        Mp::String(s) => match s.as_str() {
            Some(text) => {
                let out = screen(text);
                let changed = out != text;
                if changed {
                    *v = Mp::String(out.into());
                }
                changed
            }
            None => false,
        },
        Mp::Array(a) => a
            .iter_mut()
            .fold(false, |c, x| msgpack_strings(x, screen, depth) | c),
        // Values only: keys are a class's field names.
        Mp::Map(m) => m
            .iter_mut()
            .fold(false, |c, (_, x)| msgpack_strings(x, screen, depth) | c),
        Mp::Ext(code, data) if depth < MAX_EXT_DEPTH => {
            let Some(mut inner) = decode(data) else {
                return false;
            };
            if !msgpack_strings(&mut inner, screen, depth + 1) {
                return false;
            }
            match encode(&inner) {
                Some(bytes) => {
                    *v = Mp::Ext(*code, bytes);
                    true
                }
                None => false,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(s: &str) -> String {
        s.replace("4111 1111 1111 1111", "[REDACTED:payment_card]")
    }

    #[test]
    fn json_blobs_are_screened_and_untouched_ones_kept() {
        let b = br#"{"messages": [{"content": "card 4111 1111 1111 1111"}], "n": 1}"#;
        let out = screened("json", b, &mut redact).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["messages"][0]["content"], "card [REDACTED:payment_card]");
        assert_eq!(screened("json", br#"{"a": "fine"}"#, &mut redact), None);
        assert_eq!(screened("json", b"not json", &mut redact), None);
        assert_eq!(screened("pickle", b, &mut redact), None);
    }

    #[test]
    fn msgpack_strings_inside_extension_types_are_screened() {
        // What JsonPlusSerializer writes for a message: an extension type whose payload is
        // msgpack of (module, class, fields, method).
        let fields = Mp::Map(vec![
            (
                Mp::from("content"),
                Mp::from("my card is 4111 1111 1111 1111"),
            ),
            (Mp::from("type"), Mp::from("human")),
        ]);
        let payload = encode(&Mp::Array(vec![
            Mp::from("langchain_core.messages.human"),
            Mp::from("HumanMessage"),
            fields,
            Mp::from("model_validate_json"),
        ]))
        .unwrap();
        let blob = encode(&Mp::Array(vec![Mp::Ext(5, payload), Mp::from(7)])).unwrap();
        let out = screened("msgpack", &blob, &mut redact).unwrap();
        let Mp::Array(top) = decode(&out).unwrap() else {
            panic!()
        };
        let Mp::Ext(5, inner) = &top[0] else {
            panic!("{top:?}")
        };
        let inner = decode(inner).unwrap();
        assert_eq!(
            inner[2]["content"].as_str(),
            Some("my card is [REDACTED:payment_card]")
        );
        assert_eq!(inner[1].as_str(), Some("HumanMessage"));
        assert_eq!(top[1], Mp::from(7));
        let clean = encode(&Mp::Array(vec![Mp::from("nothing here")])).unwrap();
        assert_eq!(screened("msgpack", &clean, &mut redact), None);
        assert_eq!(screened("msgpack", &[0xc1], &mut redact), None);
    }

    #[test]
    fn hostile_blobs_are_bounded() {
        // 100,000 nested arrays: past the decoder's depth limit, left as written.
        let mut deep = vec![0x91u8; 100_000];
        deep.push(0xa0);
        assert_eq!(screened("msgpack", &deep, &mut redact), None);
        // Extension types nested 50 deep around a card: the levels past the limit are kept.
        let mut v = encode(&Mp::from("4111 1111 1111 1111")).unwrap();
        for _ in 0..50 {
            v = encode(&Mp::Ext(5, v)).unwrap();
        }
        assert_eq!(screened("msgpack", &v, &mut redact), None);
        let json = format!("{}\"x\"{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(screened("json", json.as_bytes(), &mut redact), None);
    }
}
