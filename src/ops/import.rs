//! memory_import (docs/api.md "Import"): the options and the format decided, other systems'
//! documents converted (memory_core::import), the text screened as every write's is
//! (src/ops/screen.rs), then the rows inserted by memory._import (sql/import.sql) as the
//! extension's owner: the rows go in as exported, ids, times and history kept, which only a
//! restore may do. The tenant is checked first, as the caller: a session imports only into a
//! tenant it acts for.

use crate::error::raise;
use crate::gucs;
use crate::ops::screen;
use crate::pg::{spi, tenant};
use memory_core::import::{self, Format, Options};
use memory_core::SqlState;
use pgrx::JsonB;
use serde_json::{json, Value};

fn bad(msg: impl Into<String>) -> ! {
    raise(SqlState::InvalidParameterValue, msg.into(), None)
}

/// The fields of each section that hold what someone wrote (screened), by section.
const TEXT_FIELDS: [(&str, &[&str]); 10] = [
    ("memories", &["text", "content"]),
    ("messages", &["content"]),
    ("blocks", &["value", "description"]),
    ("files", &["content", "title"]),
    ("details", &["content", "description"]),
    ("proposals", &["text"]),
    ("store_vectors", &["text"]),
    ("summaries", &["question", "answer"]),
    ("summary_versions", &["question", "answer"]),
    ("agents", &[]),
];

/// The fields of any section that hold JSON someone wrote (every string in it screened): a
/// Letta agent's system prompt is in its agent's metadata, mem0's metadata in its memory's.
const JSON_FIELDS: [&str; 5] = ["metadata", "tags", "value", "checkpoint", "data"];

/// The fields of any section that name something (refused rather than rewritten when they hold
/// what the policy does not allow: src/ops/screen.rs `identifier`).
const NAME_FIELDS: [&str; 10] = [
    "thread_id",
    "agent_id",
    "run_id",
    "actor_id",
    "category",
    "path",
    "key",
    "tool_call_id",
    "name",
    "label",
];

fn screened(user: &str, mut doc: Value) -> Value {
    for (section, rows) in doc.as_object_mut().into_iter().flatten() {
        let what = match section.as_str() {
            "memories" | "proposals" => "memory",
            "messages" => "message",
            "blocks" => "block",
            "files" => "file",
            "store_items" | "store_vectors" => "store",
            _ => "detail",
        };
        for r in rows.as_array_mut().into_iter().flatten() {
            for f in NAME_FIELDS {
                if let Some(Value::String(s)) = r.get(f) {
                    screen::identifier(f, s);
                }
            }
            if let Some(Value::Array(ns)) = r.get("namespace") {
                screen::identifiers("namespace label", ns.iter().filter_map(Value::as_str));
            }
            for f in JSON_FIELDS {
                if section == "messages" && f == "metadata" {
                    continue; // screened below with the message's other JSON
                }
                if let Some(v) = r.get(f).filter(|v| !v.is_null() && !v.is_string()) {
                    let clean = screen::json(what, Some(user), v);
                    r[f] = clean;
                }
            }
        }
    }
    for (section, fields) in TEXT_FIELDS {
        let what = match section {
            "memories" | "proposals" => "memory",
            "messages" => "message",
            "blocks" => "block",
            "files" => "file",
            "store_vectors" => "store",
            "summaries" | "summary_versions" => "summary",
            _ => "detail",
        };
        if let Some(Value::Array(rows)) = doc.get_mut(section) {
            for r in rows.iter_mut() {
                for f in fields {
                    if let Some(Value::String(s)) = r.get(*f) {
                        let clean = screen::text(what, Some(user), s);
                        r[*f] = Value::String(clean);
                    }
                }
                if section == "messages" {
                    for f in ["tool_calls", "item", "metadata"] {
                        if let Some(v) = r.get(f).filter(|v| !v.is_null()) {
                            let clean = screen::json("message", Some(user), v);
                            r[f] = clean;
                        }
                    }
                }
            }
        }
    }
    doc
}

pub fn import(doc: &Value, options: &Value) -> Value {
    let opts = Options::parse(options).unwrap_or_else(|e| bad(format!("options: {e}")));
    let (doc, decoded) = import::decoded(doc).unwrap_or_else(|e| bad(e));
    let doc = doc.as_ref();
    let format = match opts.format {
        Some(f) => f,
        None => import::detect(doc).unwrap_or_else(|e| bad(e)),
    };
    let mut user = None;
    let (document, mut notes, ids) = match format {
        Format::MemoryExt => {
            if !doc.is_object() {
                bad("a memory_export document is a JSON object");
            }
            (doc.clone(), vec![], Default::default())
        }
        Format::Mem0 => {
            let m = import::from_mem0(doc, &opts.fields, memory_core::when::now())
                .unwrap_or_else(|e| bad(e));
            // The tenant: the caller's remap, else the session's, else the list's one user.
            if opts.user_id.is_none() && tenant::acting().is_none() && m.users.len() == 1 {
                user = m.users.first().cloned();
            }
            (m.converted.document, m.converted.notes, m.converted.ids)
        }
        Format::LettaAf => {
            let c = import::from_letta(doc, gucs::token_encoding()).unwrap_or_else(|e| bad(e));
            (c.document, c.notes, c.ids)
        }
    };
    let user = tenant::resolve(opts.user_id.as_deref().or(user.as_deref()));
    notes.splice(0..0, decoded);
    // Every row as its write path would check it, before anything is screened or inserted.
    import::check_rows(&document).unwrap_or_else(|e| bad(format!("import: {e}")));
    // One import into a tenant at a time: two at once (a model or a script retrying) would each
    // count the other's rows as its own in `inserted` (sql/import.sql counts a section's rows
    // before and after). The second waits, then finds the rows there and skips them.
    spi::run(
        "SELECT pg_advisory_xact_lock(hashtextextended($1 || '/import', 7324))",
        &[user.as_str().into()],
        "waiting for another import into this tenant",
    );
    // Screened as the owner, as the rows are then inserted: screening records its decisions as
    // events, and Citus refuses a transaction in which two users write to one tenant's shards
    // (docs/citus.md).
    let document = crate::pg::owner::as_owner(|| screened(&user, document));
    let out = crate::pg::owner::as_owner(|| {
        spi::one_opt::<JsonB>(
            "SELECT memory._import($1, $2, $3, $4)",
            &[
                user.as_str().into(),
                JsonB(document).into(),
                JsonB(Value::Object(opts.agent_ids.clone())).into(),
                JsonB(Value::Object(opts.thread_ids.clone())).into(),
            ],
            "importing",
        )
    })
    .map(|j| j.0)
    .unwrap_or(Value::Null);
    let mut out = out;
    // As the owner too: on Citus one transaction must not write a tenant's shards as two users.
    notes.extend(crate::pg::owner::as_owner(|| embed_imported(&user)));
    out["format"] = json!(match format {
        Format::MemoryExt => "memory_ext",
        Format::Mem0 => "mem0",
        Format::LettaAf => "letta_af",
    });
    out["notes"] = json!(notes);
    if !ids.is_empty() {
        // The UUIDs sql/import.sql made of the ids that were not UUIDs (memory._import_row).
        out["ids"] = spi::one_opt::<JsonB>(
            "SELECT jsonb_object_agg(key, md5(value)::uuid) FROM jsonb_each_text($1)",
            &[JsonB(Value::Object(ids)).into()],
            "mapping ids",
        )
        .map_or(Value::Null, |j| j.0);
    }
    out
}

/// Rows the built-in model embeds within the import's own statement, at most: past this the
/// worker (or memory_reembed) embeds the rest, and the notes say so.
const EMBED_IN_IMPORT: i64 = 20_000;
/// Rows embedded per batch (one call of the model).
const EMBED_BATCH: i32 = 64;

/// Vectors for what the import brought (it carries none but a caller's own): with the built-in
/// model, embedded here, batch by batch, so the memories are found by meaning at once in any
/// database; with a remote model (which nothing an application calls waits on) left to the
/// worker. Returns a note when rows still wait, saying how many and for what.
///
/// # Why
/// The worker serves one database (`memory_ext.database`): in any other, imported memories were
/// not found by meaning until someone called memory_reembed, and nothing said so.
fn embed_imported(user: &str) -> Option<String> {
    if gucs::embedding_provider() == gucs::EmbeddingProvider::Builtin {
        let mut done = 0;
        while done < EMBED_IN_IMPORT {
            pgrx::check_for_interrupts!();
            let n = crate::embed::reembed::reembed_tenant(user, EMBED_BATCH);
            if n == 0 {
                break;
            }
            done += n;
        }
    }
    let waiting = spi::one_opt::<JsonB>(
        include_str!("../../sql/queries/import_waiting.sql"),
        &[user.into()],
        "counting rows without vectors",
    )
    .map(|j| j.0)
    .unwrap_or_default();
    let parts: Vec<String> = waiting
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let n = v.as_i64().filter(|n| *n > 0)?;
            let one = match k.as_str() {
                "memories" => "memory",
                "messages" => "message",
                "files" => "file",
                _ => "store text",
            };
            Some(if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {k}")
            })
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    let database = gucs::database();
    Some(format!(
        "without vectors yet, so not found by meaning: {}; the background worker embeds them in database \"{database}\" (memory_ext.database), and in any other database SELECT memory_reembed() does, until it returns 0",
        parts.join(", ")
    ))
}
