//! The entity tool (memory_core::tools::entities): memory_entity finds an entity by one of its
//! names, as the resolver would (src/ops/entities.rs), and answers with its other names, its
//! relations and the memories about it, within the categories the agent may read.

use super::Cx;
use crate::ops::{entities, query};
use crate::pg::spi;
use memory_core::entities::{self as rules, Resolved};
use memory_core::render;
use memory_core::tools::Call;

/// Relations and memories one answer lists at most (the newest first).
const RELATIONS: i64 = 20;
const MEMORIES: i64 = 10;

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Call::Entity { name } = c else {
        unreachable!("the table sends only this family's calls here")
    };
    let known = entities::known(cx.user);
    let i = match rules::resolve(&name, None, &known) {
        Resolved::Known(i) | Resolved::Alias(i) => i,
        Resolved::New => match rules::named_in(&name, &known).first() {
            Some(i) => *i,
            None => {
                return Err(format!(
                    "No one and nothing called \"{}\" is known yet.",
                    render::inline(&name)
                ))
            }
        },
    };
    let e = &known[i];
    let categories = query::allowed_categories(
        cx.user,
        cx.agent.categories.is_some().then_some(cx.agent_id),
        None,
    );
    let relations: Vec<String> = spi::rows(
        include_str!("../../../sql/queries/tools_entity_relations.sql"),
        &[
            cx.user.into(),
            e.id.as_str().into(),
            categories.clone().into(),
            RELATIONS.into(),
        ],
        "reading an entity's relations",
        |r| {
            Ok(format!(
                "- {}: {} {}",
                render::inline(&r.get::<String>(1)?.unwrap_or_default()),
                render::inline(&r.get::<String>(2)?.unwrap_or_default()),
                render::inline(&r.get::<String>(3)?.unwrap_or_default())
            ))
        },
    );
    let memories: Vec<String> = spi::rows(
        include_str!("../../../sql/queries/tools_entity_memories.sql"),
        &[
            cx.user.into(),
            e.id.as_str().into(),
            categories.into(),
            MEMORIES.into(),
        ],
        "reading an entity's memories",
        |r| {
            Ok(format!(
                "- {}",
                render::bullet(
                    r.get::<String>(1)?.as_deref(),
                    r.get::<String>(2)?.as_deref(),
                    &r.get::<String>(3)?.unwrap_or_default()
                )
            ))
        },
    );
    let mut out = format!("{} ({}", render::inline(&e.name), render::inline(&e.kind));
    if !e.aliases.is_empty() {
        let aliases: Vec<String> = e
            .aliases
            .iter()
            .map(|a| render::inline(a).into_owned())
            .collect();
        out.push_str(&format!("; also called {}", aliases.join(", ")));
    }
    out.push(')');
    if !relations.is_empty() {
        out.push_str(&format!("\nRelations:\n{}", relations.join("\n")));
    }
    if memories.is_empty() {
        out.push_str("\nNo memories about it that you may read.");
    } else {
        out.push_str(&format!("\nMemories:\n{}", memories.join("\n")));
    }
    Ok(out)
}
