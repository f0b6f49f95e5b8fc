//! The core-block tools: replace, append and insert in a block the agent may edit, under
//! Letta's names and MemGPT's (`core_memory_*`). They run in src/ops/tools/blocks.rs.

use super::{enum_of, int, object, string, Agent, Call, Family, Parse, Role, Tool};
use serde_json::Value;

fn block(agent: &Agent) -> Value {
    enum_of(
        "Label of the core memory block to edit.",
        &agent.writable_blocks,
    )
}

pub const REPLACE: Tool = Tool {
    name: "memory_replace",
    family: Family::Blocks,
    default: true,
    roles: &[Role::EditsBlocks],
    spec: |agent| {
        (
            "Replace text in one of your core memory blocks (always in your context). `old` must \
             occur exactly once in the block; to delete text, replace it with an empty string."
                .into(),
            object(
                vec![
                    ("block", block(agent)),
                    ("old", string("The exact text to replace.")),
                    ("new", string("The text to put in its place.")),
                ],
                &["block", "old", "new"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::BlockReplace {
            label: a.block()?,
            old: a.nonempty("old")?,
            new: a.text("new")?,
        })
    }),
};

pub const APPEND: Tool = Tool {
    name: "memory_append",
    family: Family::Blocks,
    default: true,
    roles: &[Role::EditsBlocks],
    spec: |agent| {
        (
            "Add a line to the end of one of your core memory blocks, for something you should \
             always keep in mind about the user or yourself."
                .into(),
            object(
                vec![
                    ("block", block(agent)),
                    ("content", string("The text to add, one or two sentences.")),
                ],
                &["block", "content"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::BlockAppend {
            label: a.block()?,
            content: a.nonempty("content")?,
        })
    }),
};

pub const INSERT: Tool = Tool {
    name: "memory_insert",
    family: Family::Blocks,
    default: false,
    roles: &[Role::EditsBlocks],
    spec: |agent| {
        (
            "Insert text at a line of one of your core memory blocks.".into(),
            object(
                vec![
                    ("block", block(agent)),
                    ("content", string("The text to insert.")),
                    (
                        "line",
                        int(
                            "Line number to insert before, from 0; -1 for the end.",
                            -1,
                            10_000,
                            -1,
                        ),
                    ),
                ],
                &["block", "content"],
            ),
        )
    },
    parse: Parse::Args(|a| {
        Ok(Call::BlockInsert {
            label: a.block()?,
            content: a.nonempty("content")?,
            line: a.int("line")?,
        })
    }),
};

/// MemGPT's names for the same tools (its prompts use them).
pub const CORE_APPEND: Tool = Tool {
    name: "core_memory_append",
    default: false,
    ..APPEND
};
pub const CORE_REPLACE: Tool = Tool {
    name: "core_memory_replace",
    default: false,
    ..REPLACE
};
