//! The core-block tools (memory_core::tools::blocks): each edit through the block code of
//! memory_block_edit (src/ops/blocks.rs), answered with the block as it now reads.

use super::Cx;
use crate::ops::blocks;
use memory_core::blocks as rules;
use memory_core::tools::Call;
use serde_json::Value;

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Cx { agent_id, .. } = *cx;
    // The block as it now reads, by the prompt rule (memory_core::render): the model confirms
    // its edit against what its next prompt will show.
    let edited = |r: Value| {
        format!(
            "Core memory block \"{}\" updated ({} characters). It now reads:\n{}",
            r["label"].as_str().unwrap_or_default(),
            r["chars"],
            memory_core::render::text(r["value"].as_str().unwrap_or_default())
        )
    };
    Ok(match c {
        Call::BlockReplace { label, old, new } => edited(blocks::edit(agent_id, &label, |b| {
            rules::replace(b, &old, &new)
        })),
        Call::BlockAppend { label, content } => edited(blocks::edit(agent_id, &label, |b| {
            rules::append(b, &content)
        })),
        Call::BlockInsert {
            label,
            content,
            line,
        } => edited(blocks::edit(agent_id, &label, |b| {
            rules::insert(b, &content, line)
        })),
        _ => unreachable!("the table sends only this family's calls here"),
    })
}
