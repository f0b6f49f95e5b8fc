//! Agents-SDK sessions over recall memory (docs/api.md "Sessions"): the items of OpenAI's
//! Responses API (what the OpenAI Agents SDK keeps in a session) as messages of a thread, so a
//! session backend is four SQL calls and its history is searchable recall memory.
//!
//! An item is stored as a message with the role, text, tool call and tool call id a chat request
//! needs, and also verbatim: `session_get_items` returns exactly what was added, including item
//! types that have no message form (reasoning, hosted tool calls).

use serde_json::{json, Value};

/// A message's columns for one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub role: &'static str,
    pub content: String,
    pub tool_calls: Option<Value>,
    pub tool_call_id: Option<String>,
    pub name: Option<String>,
}

/// The text of a message item's `content`: a string, or the `text` of each part, one per line.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().or_else(|| p["refusal"].as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The message for `item`; the error says what is wrong with it.
pub fn stored(item: &Value) -> Result<Stored, String> {
    let Some(obj) = item.as_object() else {
        return Err("an item must be a JSON object".into());
    };
    let kind = obj.get("type").and_then(Value::as_str);
    if let Some(role) = obj.get("role").and_then(Value::as_str) {
        if kind.is_some_and(|k| k != "message") {
            return Err(format!(
                "an item of type \"{}\" has no role",
                kind.unwrap_or_default()
            ));
        }
        let role = match role {
            "user" => "user",
            "assistant" => "assistant",
            "system" | "developer" => "system",
            other => {
                return Err(format!(
                    "role must be user, assistant, system or developer, got \"{other}\""
                ))
            }
        };
        return Ok(Stored {
            role,
            content: text_of(obj.get("content").unwrap_or(&Value::Null)),
            tool_calls: None,
            tool_call_id: None,
            name: None,
        });
    }
    let s = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    match kind {
        Some("function_call") => {
            let (Some(id), Some(name)) = (s("call_id"), s("name")) else {
                return Err("a function_call item needs call_id and name".into());
            };
            Ok(Stored {
                role: "assistant",
                content: String::new(),
                tool_calls: Some(json!([{"id": id, "type": "function",
                    "function": {"name": name, "arguments": s("arguments").unwrap_or_else(|| "{}".into())}}])),
                tool_call_id: None,
                name: None,
            })
        }
        Some("function_call_output") => {
            let Some(id) = s("call_id") else {
                return Err("a function_call_output item needs call_id".into());
            };
            let output = match obj.get("output") {
                Some(Value::String(o)) => o.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            Ok(Stored {
                role: "tool",
                content: output,
                tool_calls: None,
                tool_call_id: Some(id),
                name: None,
            })
        }
        Some(_) => Ok(Stored {
            // Reasoning, hosted tool calls and the like: kept verbatim, with any text they carry.
            role: "assistant",
            content: obj
                .get("summary")
                .map(text_of)
                .or_else(|| obj.get("content").map(text_of))
                .unwrap_or_default(),
            tool_calls: None,
            tool_call_id: None,
            name: None,
        }),
        None => Err("an item needs a role or a type".into()),
    }
}

/// The item of a stored message: the verbatim item when it has one, else one made from the
/// message (a message appended by message_append).
pub fn item(
    verbatim: Option<Value>,
    role: &str,
    content: &str,
    tool_calls: Option<&Value>,
    tool_call_id: Option<&str>,
) -> Value {
    if let Some(v) = verbatim {
        return v;
    }
    if let Some(id) = tool_call_id {
        return json!({"type": "function_call_output", "call_id": id, "output": content});
    }
    if let Some(call) = tool_calls.and_then(|c| c.get(0)) {
        return json!({"type": "function_call", "call_id": call["id"],
                      "name": call["function"]["name"], "arguments": call["function"]["arguments"]});
    }
    json!({"role": role, "content": content})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_map_to_messages() {
        let m = stored(&json!({"role": "user", "content": "Hi"})).unwrap();
        assert_eq!((m.role, m.content.as_str()), ("user", "Hi"));
        let m = stored(&json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "a"}, {"type": "output_text", "text": "b"}]})).unwrap();
        assert_eq!((m.role, m.content.as_str()), ("assistant", "a\nb"));
        let m = stored(
            &json!({"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"}),
        )
        .unwrap();
        assert_eq!(m.tool_calls.unwrap()[0]["function"]["name"], "add");
        let m = stored(&json!({"type": "function_call_output", "call_id": "c1", "output": "4"}))
            .unwrap();
        assert_eq!((m.role, m.tool_call_id.as_deref()), ("tool", Some("c1")));
        let m = stored(&json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}]})).unwrap();
        assert_eq!((m.role, m.content.as_str()), ("assistant", "thinking"));
        for bad in [
            json!(1),
            json!({}),
            json!({"role": "robot", "content": "x"}),
            json!({"type": "function_call"}),
        ] {
            assert!(stored(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn messages_without_an_item_become_items() {
        assert_eq!(
            item(None, "user", "Hi", None, None),
            json!({"role": "user", "content": "Hi"})
        );
        assert_eq!(
            item(None, "tool", "4", None, Some("c1")),
            json!({"type": "function_call_output", "call_id": "c1", "output": "4"})
        );
        let v = json!({"type": "reasoning", "id": "r1"});
        assert_eq!(item(Some(v.clone()), "assistant", "", None, None), v);
    }
}
