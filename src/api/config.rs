//! memory_configure (docs/api.md "Categories and allowlists", docs/design.md "Categories and allowlists"): a tenant's categories and
//! its agents' category allowlists, replaced as a whole.

use crate::error::{raise, OrRaise, SpiOk};
use crate::gucs;
use crate::pg::json::Json;
use crate::pg::tenant;
use memory_core::{validate, SqlState};
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

fn bad(field: &str, reason: &str) -> ! {
    raise(
        SqlState::InvalidParameterValue,
        format!("invalid \"{field}\": {reason}"),
        None,
    )
}

/// `{"categories": [...], "allowlists": {...}}`. Categories are docs/design.md's YAML as JSON: either a
/// list of `{"name", "context": "all"|"rag", "rag_length"}` or `{"system": [...], "custom": [...]}`;
/// allowlists map an agent to its category names. Optional `"user_id"` (else the current tenant).
/// Replaces the tenant's previous configuration atomically; returns the counts.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_configure(config: Option<Json>) -> JsonB {
    let Json(cfg) = validate::required("config", config.as_ref()).or_raise();
    let obj = cfg
        .as_object()
        .unwrap_or_else(|| bad("config", "must be a JSON object"));
    if let Some(k) = obj
        .keys()
        .find(|k| !["categories", "allowlists", "user_id"].contains(&k.as_str()))
    {
        bad(k, "unknown key");
    }
    let user = tenant::resolve(match obj.get("user_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => bad("user_id", "must be a string"),
    });
    // (name, context, rag_length, custom)
    let mut cats: Vec<(String, String, Option<i32>, bool)> = vec![];
    let max = gucs::max_categories();
    let mut add = |list: &Value, custom: bool, field: &str| {
        for (i, c) in list
            .as_array()
            .unwrap_or_else(|| bad(field, "must be an array"))
            .iter()
            .enumerate()
        {
            if cats.len() >= max {
                bad(
                    "categories",
                    &format!("more than {max} categories (memory_ext.max_categories)"),
                );
            }
            let f = format!("{field}[{i}]");
            let o = c
                .as_object()
                .unwrap_or_else(|| bad(&f, "must be an object with \"name\""));
            if let Some(k) = o
                .keys()
                .find(|k| !["name", "context", "rag_length"].contains(&k.as_str()))
            {
                bad(&format!("{f}.{k}"), "unknown key");
            }
            let name = o
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.trim().is_empty() && n.chars().count() <= 100)
                .unwrap_or_else(|| {
                    bad(
                        &format!("{f}.name"),
                        "must be a non-empty string of at most 100 characters",
                    )
                });
            let context = match o.get("context") {
                None | Some(Value::Null) => "rag",
                Some(Value::String(s)) if s == "all" || s == "rag" => s.as_str(),
                _ => bad(&format!("{f}.context"), "must be \"all\" or \"rag\""),
            };
            let rag_length = match o.get("rag_length") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_i64()
                        .filter(|n| (1..=10_000).contains(n))
                        .unwrap_or_else(|| {
                            bad(
                                &format!("{f}.rag_length"),
                                "must be an integer between 1 and 10000",
                            )
                        }) as i32,
                ),
            };
            if cats.iter().any(|c| c.0 == name) {
                bad(
                    &format!("{f}.name"),
                    &format!("category \"{name}\" is listed twice"),
                );
            }
            cats.push((name.to_string(), context.to_string(), rag_length, custom));
        }
    };
    match obj.get("categories") {
        None | Some(Value::Null) => {}
        Some(v @ Value::Array(_)) => add(v, false, "categories"),
        Some(Value::Object(o)) => {
            if let Some(k) = o
                .keys()
                .find(|k| !["system", "custom"].contains(&k.as_str()))
            {
                bad(
                    &format!("categories.{k}"),
                    "unknown key (use system, custom)",
                );
            }
            if let Some(v) = o.get("system") {
                add(v, false, "categories.system");
            }
            if let Some(v) = o.get("custom") {
                add(v, true, "categories.custom");
            }
        }
        Some(_) => bad(
            "categories",
            "must be an array or {\"system\": [...], \"custom\": [...]}",
        ),
    }
    let mut allow: Vec<(String, String)> = vec![];
    match obj.get("allowlists") {
        None | Some(Value::Null) => {}
        Some(Value::Object(o)) => {
            for (agent, list) in o {
                if agent.trim().is_empty() || agent.chars().count() > 200 {
                    bad(
                        "allowlists",
                        "agent names must be non-empty and at most 200 characters",
                    );
                }
                let f = format!("allowlists.{agent}");
                for c in list
                    .as_array()
                    .unwrap_or_else(|| bad(&f, "must be an array of category names"))
                {
                    let c = c
                        .as_str()
                        .unwrap_or_else(|| bad(&f, "must be an array of category names"));
                    if !cats.iter().any(|x| x.0 == c) {
                        bad(
                            &f,
                            &format!("category \"{c}\" is not among the configured categories"),
                        );
                    }
                    if !allow.contains(&(agent.clone(), c.to_string())) {
                        allow.push((agent.clone(), c.to_string()));
                    }
                }
            }
        }
        Some(_) => bad(
            "allowlists",
            "must be an object mapping agents to category lists",
        ),
    }
    // Replace atomically: this statement and the inserts run in the caller's transaction.
    Spi::run_with_args(
        "DELETE FROM memory.categories WHERE user_id = $1",
        &[user.as_str().into()],
    )
    .spi("clearing categories");
    for (name, context, rag_length, custom) in &cats {
        Spi::run_with_args(
            "INSERT INTO memory.categories (user_id, name, context, rag_length, custom) VALUES ($1, $2, $3, $4, $5)",
            &[user.as_str().into(), name.as_str().into(), context.as_str().into(), (*rag_length).into(), (*custom).into()],
        )
        .spi("storing a category");
    }
    for (agent, cat) in &allow {
        Spi::run_with_args(
            "INSERT INTO memory.allowlists (user_id, agent, category) VALUES ($1, $2, $3)",
            &[
                user.as_str().into(),
                agent.as_str().into(),
                cat.as_str().into(),
            ],
        )
        .spi("storing an allowlist");
    }
    let agents: std::collections::BTreeSet<&str> = allow.iter().map(|a| a.0.as_str()).collect();
    JsonB(json!({ "user_id": user, "categories": cats.len(), "allowlists": agents.len() }))
}
