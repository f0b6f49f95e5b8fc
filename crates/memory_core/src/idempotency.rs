//! Writes that can be retried (docs/api.md "Idempotency"): a call that carries an idempotency
//! key is remembered by the key and a fingerprint of what it asked for. A repeat with the same
//! body gets the first call's answer; the same key with another body is refused, as payment
//! APIs do, because a client that reuses a key for a different write has a bug that silently
//! dropping the second write would hide.
//!
//! This module decides what "the same body" means; src/ops/idempotency.rs keeps the keys.

use serde_json::{Map, Value};

/// The request field (memory_write, batch items, store_put) and the argument name of the SQL
/// functions that take one.
pub const FIELD: &str = "idempotency_key";

/// What a call asked for, as the text whose SHA-256 is its fingerprint: the operation, then the
/// request as canonical JSON (object keys sorted at every depth, no spaces) without the key.
/// Canonical so that the same request sent by another driver, with its keys in another order,
/// is the same body; `1` and `1.0` stay different numbers, as JSON has them.
pub fn body(op: &str, request: &Value) -> String {
    let mut v = request.clone();
    if let Value::Object(m) = &mut v {
        m.remove(FIELD);
    }
    let mut out = String::with_capacity(64);
    out.push_str(op);
    out.push('\n');
    canonical(&v, &mut out);
    out
}

/// The body of a SQL function's call: its named arguments as one JSON object (NULL arguments
/// left out, as a request leaves out fields it does not set).
pub fn call_body(op: &str, args: &[(&str, Value)]) -> String {
    let m: Map<String, Value> = args
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    body(op, &Value::Object(m))
}

fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_key_and_the_order_of_fields_are_not_the_body() {
        let a = json!({"text": "x", "tags": ["a", "b"], "idempotency_key": "k1", "metadata": {"z": 1, "a": 2}});
        let b: Value = serde_json::from_str(
            r#"{"metadata": {"a": 2, "z": 1}, "idempotency_key": "k2", "tags": ["a", "b"], "text": "x"}"#,
        )
        .unwrap();
        assert_eq!(body("write", &a), body("write", &b));
        assert_eq!(
            body("write", &a),
            "write\n{\"metadata\":{\"a\":2,\"z\":1},\"tags\":[\"a\",\"b\"],\"text\":\"x\"}"
        );
    }

    #[test]
    fn another_operation_value_or_order_of_items_is_another_body() {
        let a = json!({"text": "x", "tags": ["a", "b"]});
        assert_ne!(body("write", &a), body("store_put", &a));
        assert_ne!(
            body("write", &a),
            body("write", &json!({"text": "y", "tags": ["a", "b"]}))
        );
        assert_ne!(
            body("write", &a),
            body("write", &json!({"text": "x", "tags": ["b", "a"]}))
        );
        assert_ne!(body("w", &json!({"n": 1})), body("w", &json!({"n": 1.0})));
        // A nested idempotency_key is data, not the key.
        assert_ne!(
            body("w", &json!({"metadata": {"idempotency_key": "a"}})),
            body("w", &json!({"metadata": {"idempotency_key": "b"}}))
        );
    }

    #[test]
    fn a_calls_null_arguments_are_left_out() {
        assert_eq!(
            call_body(
                "message_append",
                &[("content", json!("hi")), ("name", Value::Null)]
            ),
            body("message_append", &json!({"content": "hi"}))
        );
    }
}
