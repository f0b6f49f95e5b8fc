//! mem0's memories into memory_export's shape: what `Memory.get_all()` / `search()` and the
//! platform's `get_all` return (`{"results": [...]}`, the paginated envelope with `count` and
//! `next`, or the bare list). Each memory's `id`, `memory`, `hash`, `metadata`, `categories`,
//! `created_at`, `updated_at`, `user_id`, `agent_id`, `run_id`, `app_id`, `actor_id`, `role`,
//! `expiration_date`, `immutable`, `structured_attributes` (docs/openapi.json and
//! docs/platform/features/memory-expiration.mdx in mem0's repository).
//!
//! Where each goes (docs/migrating.md "mem0"):
//! - `user_id`: the tenant when the list has one; when it has several (a group chat), each
//!   memory's speaker, as its `actor_id`;
//! - `agent_id` → `agent_id`, `run_id` → `thread_id`, `actor_id` → `actor_id`, `role` → `role`;
//!   `app_id` stays in metadata. `remap.fields` (crate::import::Options) moves any of them;
//! - `expiration_date` → `valid_until`: recall stops finding it once that day has passed, as
//!   mem0 stops surfacing it; `as_of` an earlier day still does;
//! - `immutable` → `metadata.immutable`, which memory_write honours (an update is refused; a
//!   near duplicate is written beside it);
//! - everything else mem0 said, under `metadata.mem0`, so an export back gives it again.

use super::{text_of, uniform, Converted};
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// The fields mem0 names and memory_ext has a column for, and which column by default.
pub const FIELDS: [(&str, &str); 5] = [
    ("user_id", "tenant"),
    ("agent_id", "agent_id"),
    ("run_id", "thread_id"),
    ("actor_id", "actor_id"),
    ("app_id", "metadata"),
];

/// Where a mem0 id field may go (`remap.fields`).
pub const TARGETS: [&str; 6] = [
    "tenant",
    "agent_id",
    "thread_id",
    "run_id",
    "actor_id",
    "metadata",
];

/// The fields of a mem0 memory the converter reads; any other is kept under `metadata.mem0`.
const KNOWN: [&str; 16] = [
    "id",
    "memory",
    "text",
    "hash",
    "metadata",
    "categories",
    "created_at",
    "updated_at",
    "user_id",
    "agent_id",
    "run_id",
    "app_id",
    "actor_id",
    "role",
    "expiration_date",
    "immutable",
];

/// What a mem0 list converted to, and the mem0 users it holds.
pub struct Mem0 {
    pub converted: Converted,
    /// The distinct `user_id`s of the list, sorted.
    pub users: Vec<String>,
}

/// The end of `expiration_date`: a date lasts to its end (mem0 stops surfacing the memory the
/// next day), a time is itself. `None` when mem0 could not read it either (it fails open).
fn expires(v: &Value) -> Option<DateTime<Utc>> {
    let s = v.as_str()?.trim();
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Some(d.succ_opt()?.and_hms_opt(0, 0, 0)?.and_utc());
    }
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// A memory with the TypeScript SDKs' names (`userId`, `createdAt`, ...) in Python's.
fn snake(m: &Value) -> Value {
    let Some(o) = m.as_object() else {
        return m.clone();
    };
    let mut out = Map::new();
    for (k, v) in o {
        let mut name = String::new();
        for c in k.chars() {
            if c.is_ascii_uppercase() {
                name.push('_');
                name.push(c.to_ascii_lowercase());
            } else {
                name.push(c);
            }
        }
        out.entry(name).or_insert_with(|| v.clone());
    }
    Value::Object(out)
}

/// The list of memories of a mem0 document.
fn list(doc: &Value) -> Result<&Vec<Value>, String> {
    match doc {
        Value::Array(a) => Ok(a),
        Value::Object(m) => match m.get("results").or_else(|| m.get("memories")) {
            Some(Value::Array(a)) => Ok(a),
            _ => Err("a mem0 document is {\"results\": [...]} or a list of memories".into()),
        },
        _ => Err("a mem0 document is {\"results\": [...]} or a list of memories".into()),
    }
}

/// mem0's memories as memory_export's `memories`. `fields` is `remap.fields` (mem0 field to
/// target, checked by crate::import::Options); `now` decides what has expired.
pub fn from_mem0(
    doc: &Value,
    fields: &Map<String, Value>,
    now: DateTime<Utc>,
) -> Result<Mem0, String> {
    let list = list(doc)?;
    let users: BTreeSet<String> = list
        .iter()
        .filter_map(|m| text_of(m.get("user_id")))
        .collect();
    // Several users in one list: a group chat's speakers, each memory's actor.
    let target = |f: &str| -> String {
        if let Some(t) = fields.get(f).and_then(Value::as_str) {
            return t.to_string();
        }
        if f == "user_id" && users.len() > 1 {
            return "actor_id".into();
        }
        FIELDS
            .iter()
            .find(|(k, _)| *k == f)
            .map_or("metadata", |(_, t)| t)
            .to_string()
    };
    let mut memories = vec![];
    let mut notes = vec![];
    let mut ids = Map::new();
    let (mut expired, mut unreadable, mut immutable, mut speakers) = (0, 0, 0, BTreeSet::new());
    for (i, m) in list.iter().enumerate() {
        let m = &snake(m);
        let Some(text) = text_of(m.get("memory"))
            .or_else(|| text_of(m.get("text")))
            .or_else(|| text_of(m.get("data").and_then(|d| d.get("memory"))))
        else {
            notes.push(format!("results[{i}] has no \"memory\" text: skipped"));
            continue;
        };
        let mut metadata = match m.get("metadata") {
            Some(Value::Object(o)) => o.clone(),
            _ => Map::new(),
        };
        // What mem0 said that has no column of its own, under one key.
        let mut kept = Map::new();
        for (k, v) in m.as_object().into_iter().flatten() {
            if !KNOWN.contains(&k.as_str())
                && !["score", "data", "event"].contains(&k.as_str())
                && !v.is_null()
            {
                kept.insert(k.clone(), v.clone());
            }
        }
        if let Some(h) = m.get("hash").filter(|h| h.is_string()) {
            kept.insert("hash".into(), h.clone());
        }
        let categories: Vec<String> = m
            .get("categories")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .filter_map(|c| crate::names::category(c).ok())
                    .collect()
            })
            .unwrap_or_default();
        let given = m.get("id").and_then(Value::as_str).map(str::to_string);
        let id = match &given {
            Some(s) if crate::request::is_uuid(s) => s.clone(),
            Some(s) => {
                kept.insert("id".into(), json!(s));
                ids.insert(s.clone(), json!(format!("mem0:{s}")));
                format!("mem0:{s}")
            }
            None => format!("mem0:{text}"),
        };
        let mut row = json!({
            "id": id,
            "kind": "semantic",
            "text": text,
            "tags": categories,
            "state": "active",
        });
        if let Some(c) = categories.first() {
            row["category"] = json!(c);
        }
        // In FIELDS order: mem0's own actor_id comes after a user_id made the actor, and wins.
        for (f, _) in FIELDS {
            let Some(v) = text_of(m.get(f)) else { continue };
            kept.insert(f.into(), json!(v));
            match target(f).as_str() {
                "tenant" | "metadata" => {}
                col => {
                    if f == "user_id" && col == "actor_id" {
                        speakers.insert(v.clone());
                    }
                    row[col] = json!(v);
                }
            }
        }
        if let Some(r) =
            text_of(m.get("role")).filter(|r| crate::validate::ROLES.contains(&r.as_str()))
        {
            row["role"] = json!(r);
        }
        if let Some(t) = m.get("created_at").filter(|t| t.is_string()) {
            row["created_at"] = t.clone();
            row["happened_at"] = t.clone();
        }
        if let Some(t) = m.get("updated_at").filter(|t| t.is_string()) {
            row["updated_at"] = t.clone();
        }
        if let Some(e) = m.get("expiration_date").filter(|e| !e.is_null()) {
            kept.insert("expiration_date".into(), e.clone());
            match expires(e) {
                Some(t) => {
                    if t <= now {
                        expired += 1;
                    }
                    row["valid_until"] = json!(t.to_rfc3339());
                }
                None => unreadable += 1,
            }
        }
        if m.get("immutable") == Some(&json!(true)) {
            metadata.insert("immutable".into(), json!(true));
            immutable += 1;
        }
        if !kept.is_empty() {
            metadata.insert("mem0".into(), Value::Object(kept));
        }
        row["metadata"] = Value::Object(metadata);
        memories.push(row);
    }
    if !speakers.is_empty() {
        notes.push(format!(
            "{} mem0 users ({}) kept as the actor of each memory (actor_id): one conversation's speakers",
            speakers.len(),
            speakers.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if expired > 0 {
        notes.push(format!(
            "{expired} memories had expired (expiration_date passed): imported, and not found by recall (as mem0 no longer surfaces them); memory_query with \"as_of\" an earlier day finds them"
        ));
    }
    if unreadable > 0 {
        notes.push(format!(
            "{unreadable} expiration dates could not be read: those memories do not expire (mem0 fails open too); the date is kept in metadata.mem0.expiration_date"
        ));
    }
    if immutable > 0 {
        notes.push(format!(
            "{immutable} immutable memories: an update of one is refused (forget it and write it again, or supersede it)"
        ));
    }
    uniform(&mut memories);
    Ok(Mem0 {
        converted: Converted {
            document: json!({ "memories": memories }),
            notes,
            ids,
        },
        users: users.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn mem0_memories_keep_their_ids_times_and_categories() {
        let c = from_mem0(&json!({"results": [
            {"id": "0b5f3d63-94b1-4b3c-9b74-2f1b8e6b2c11", "memory": "Likes hiking in the Alps", "hash": "abc",
             "metadata": {"source": "chat"}, "categories": ["Hobbies"], "created_at": "2024-07-20T01:23:45.123456-07:00",
             "updated_at": null, "user_id": "alex", "agent_id": "travel", "app_id": "web", "owner": "alex@x"},
            {"id": "x", "memory": "  "}
        ]}), &Map::new(), now())
        .unwrap();
        assert_eq!(c.users, ["alex"]);
        let c = c.converted;
        let m = &c.document["memories"][0];
        assert_eq!(m["id"], json!("0b5f3d63-94b1-4b3c-9b74-2f1b8e6b2c11"));
        assert_eq!(m["text"], json!("Likes hiking in the Alps"));
        assert_eq!(m["category"], json!("hobbies"));
        assert_eq!(
            m["metadata"],
            json!({"source": "chat", "mem0": {"hash": "abc", "user_id": "alex", "agent_id": "travel", "app_id": "web", "owner": "alex@x"}})
        );
        assert_eq!(m["happened_at"], json!("2024-07-20T01:23:45.123456-07:00"));
        assert_eq!(m["agent_id"], json!("travel"));
        assert_eq!(m["actor_id"], Value::Null, "one user: the tenant");
        assert_eq!(c.document["memories"].as_array().unwrap().len(), 1);
        assert_eq!(c.notes.len(), 1);
    }

    #[test]
    fn a_group_chat_keeps_its_speakers_expiry_and_immutability() {
        let c = from_mem0(&json!([
            {"id": "a2b8c3d4-5e6f-7g8h-9i0j-1k2l3m4n5o6p", "memory": "Ana runs the budget", "user_id": "ana", "run_id": "standup-3", "immutable": true},
            {"id": "2", "memory": "Bo is on the Pro trial", "user_id": "bo", "expiration_date": "2025-12-31"},
            {"id": "3", "memory": "Cy moves in March", "user_id": "cy", "expiration_date": "2026-03-01T00:00:00Z", "structured_attributes": {"day": 1}},
            {"id": "4", "memory": "Bo said Cy likes tea", "user_id": "bo", "actor_id": "cy-bot", "expiration_date": "soon"}
        ]), &Map::new(), now())
        .unwrap();
        assert_eq!(c.users, ["ana", "bo", "cy"]);
        let d = &c.converted.document["memories"];
        assert_eq!(d[0]["actor_id"], json!("ana"));
        assert_eq!(d[0]["thread_id"], json!("standup-3"));
        assert_eq!(
            d[0]["id"],
            json!("mem0:a2b8c3d4-5e6f-7g8h-9i0j-1k2l3m4n5o6p")
        );
        assert_eq!(d[0]["metadata"]["immutable"], json!(true));
        assert_eq!(
            d[1]["valid_until"],
            json!("2026-01-01T00:00:00+00:00"),
            "a date lasts its day"
        );
        assert_eq!(
            d[2]["metadata"]["mem0"]["structured_attributes"],
            json!({"day": 1})
        );
        assert_eq!(d[3]["actor_id"], json!("cy-bot"), "mem0's own actor wins");
        assert_eq!(d[3]["valid_until"], Value::Null);
        let notes = c.converted.notes.join("\n");
        assert!(
            notes.contains("3 mem0 users (ana, bo, cy) kept as the actor"),
            "{notes}"
        );
        assert!(notes.contains("1 memories had expired"), "{notes}");
        assert!(
            notes.contains("1 expiration dates could not be read"),
            "{notes}"
        );
        assert!(notes.contains("1 immutable"), "{notes}");
        assert_eq!(super::super::check_rows(&c.converted.document), Ok(()));
    }

    #[test]
    fn the_caller_moves_a_field() {
        let f = json!({"user_id": "actor_id", "app_id": "agent_id", "run_id": "metadata"});
        let c = from_mem0(
            &json!([{"memory": "x y", "user_id": "u", "app_id": "shop", "run_id": "r"}]),
            f.as_object().unwrap(),
            now(),
        )
        .unwrap();
        let m = &c.converted.document["memories"][0];
        assert_eq!(m["actor_id"], json!("u"));
        assert_eq!(m["agent_id"], json!("shop"));
        assert_eq!(m["thread_id"], Value::Null);
        assert_eq!(m["metadata"]["mem0"]["run_id"], json!("r"));
    }
}
