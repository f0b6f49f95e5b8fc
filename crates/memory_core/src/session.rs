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

/// The message for `item`; the error says what is wrong with it. Only a non-object is refused:
/// like the SDK's own sessions, a session keeps whatever item it is given and returns it as it
/// was given (`item` stores it verbatim). The message is what recall needs: a role, the text,
/// and the tool call or tool output it carries.
pub fn stored(item: &Value) -> Result<Stored, String> {
    let Some(obj) = item.as_object() else {
        return Err("an item must be a JSON object".into());
    };
    let kind = obj.get("type").and_then(Value::as_str);
    let s = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    let text = || {
        obj.get("content")
            .map(text_of)
            .or_else(|| obj.get("summary").map(text_of))
            .or_else(|| s("text"))
            .unwrap_or_default()
    };
    if let Some(role) = obj.get("role").and_then(Value::as_str) {
        let (role, tool_call_id) = match role {
            "user" => ("user", None),
            "assistant" => ("assistant", None),
            "system" | "developer" => ("system", None),
            // A Chat Completions tool message: its output answers a call.
            "tool" => ("tool", s("tool_call_id")),
            // Any other speaker (a critic, a second agent): recall files it as the agent's.
            _ => ("assistant", None),
        };
        return Ok(Stored {
            role,
            content: text(),
            tool_calls: obj.get("tool_calls").filter(|c| c.is_array()).cloned(),
            tool_call_id,
            name: s("name"),
        });
    }
    match kind {
        Some("function_call") => Ok(Stored {
            role: "assistant",
            content: String::new(),
            tool_calls: s("call_id").map(|id| {
                json!([{"id": id, "type": "function",
                    "function": {"name": s("name").unwrap_or_default(),
                                 "arguments": s("arguments").unwrap_or_else(|| "{}".into())}}])
            }),
            tool_call_id: None,
            name: None,
        }),
        Some("function_call_output") => {
            let output = match obj.get("output") {
                Some(Value::String(o)) => o.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            Ok(Stored {
                role: "tool",
                content: output,
                tool_calls: None,
                tool_call_id: s("call_id"),
                // The tool's name is not in the item: the session fills it in from the call
                // it answers (src/ops/session.rs).
                name: s("name"),
            })
        }
        // Reasoning, hosted tool calls, or an item with neither role nor type: kept verbatim,
        // with any text it carries.
        _ => Ok(Stored {
            role: "assistant",
            content: text(),
            tool_calls: None,
            tool_call_id: None,
            name: None,
        }),
    }
}

/// The name of the tool whose call `call_id` a tool output answers, from the function calls
/// among `items`.
pub fn tool_name<'a>(items: &'a [Value], call_id: &str) -> Option<&'a str> {
    items.iter().rev().find_map(|i| {
        (i["type"] == "function_call" && i["call_id"] == call_id)
            .then(|| i["name"].as_str())
            .flatten()
    })
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
        // The SDK keeps anything: so does a session.
        for odd in [
            json!({}),
            json!({"role": "robot", "content": "x"}),
            json!({"type": "function_call"}),
            json!({"type": "message", "role": "tool", "content": "x"}),
        ] {
            assert!(stored(&odd).is_ok(), "{odd}");
        }
        let m =
            stored(&json!({"role": "tool", "tool_call_id": "c9", "name": "add", "content": "5"}))
                .unwrap();
        assert_eq!(
            (m.role, m.tool_call_id.as_deref(), m.name.as_deref()),
            ("tool", Some("c9"), Some("add"))
        );
        assert!(stored(&json!(1)).is_err());
        let items = [json!({"type": "function_call", "call_id": "c1", "name": "add"})];
        assert_eq!(tool_name(&items, "c1"), Some("add"));
        assert_eq!(tool_name(&items, "c2"), None);
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
