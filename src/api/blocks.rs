//! Core memory (docs/api.md "Core memory"): agents, their blocks, the agent-facing edit
//! operations (Letta's `memory_append`, `memory_replace`, `memory_insert`), and
//! `compile_core_blocks`. The work is in src/ops/blocks.rs.

use crate::error::OrRaise;
use crate::ops::blocks as ops;
use memory_core::blocks;
use memory_core::validate;
use pgrx::prelude::*;
use pgrx::JsonB;

/// The agent id and label every block function checks first.
fn agent_and_label<'a>(agent_id: Option<&'a str>, label: Option<&'a str>) -> (&'a str, &'a str) {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let label = validate::required("label", label).or_raise();
    blocks::check_label(label).or_raise();
    (agent_id, label)
}

/// Creates the agent with its default `persona` and `human` blocks, or returns the existing
/// agent unchanged.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_agent(
    agent_id: Option<&str>,
    user_id: Option<&str>,
    persona: default!(Option<&str>, "''"),
    human: default!(Option<&str>, "''"),
) -> JsonB {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    // NULL is not "the default" here: the default is '', and NULL is a mistake worth naming.
    let persona = validate::required("persona", persona).or_raise();
    let human = validate::required("human", human).or_raise();
    // Validate before writing anything.
    for (label, value) in [("persona", persona), ("human", human)] {
        blocks::fits(label, value.to_string(), blocks::DEFAULT_CHAR_LIMIT).or_raise();
    }
    JsonB(ops::agent(user_id, agent_id, persona, human))
}

/// Creates or overwrites a block. It is the application's tool, but a read-only block stays
/// read-only to it as well: it changes only through `UPDATE memory.blocks` (docs/reference.md).
#[pg_extern(volatile, parallel_unsafe)]
fn block_set(
    agent_id: Option<&str>,
    label: Option<&str>,
    value: Option<&str>,
    description: default!(Option<&str>, "NULL"),
    char_limit: default!(Option<i32>, 20000),
    read_only: default!(Option<bool>, false),
) -> JsonB {
    let (agent_id, label) = agent_and_label(agent_id, label);
    let value = validate::required("value", value).or_raise();
    let char_limit = blocks::check_char_limit(
        validate::required("char_limit", char_limit.as_ref())
            .map(|v| *v as i64)
            .or_raise(),
    )
    .or_raise();
    let read_only = *validate::required("read_only", read_only.as_ref()).or_raise();
    let value = blocks::fits(label, value.to_string(), char_limit).or_raise();
    JsonB(ops::set(
        agent_id,
        label,
        &value,
        description,
        char_limit,
        read_only,
    ))
}

/// Appends `content` on a new line (Letta's `memory_append`).
#[pg_extern(volatile, parallel_unsafe)]
fn block_append(agent_id: Option<&str>, label: Option<&str>, content: Option<&str>) -> JsonB {
    let content = validate::required("content", content).or_raise();
    let (agent_id, label) = agent_and_label(agent_id, label);
    JsonB(ops::edit(agent_id, label, |b| blocks::append(b, content)))
}

/// Replaces the single occurrence of `old` with `new` (Letta's `memory_replace`).
#[pg_extern(volatile, parallel_unsafe)]
fn block_replace(
    agent_id: Option<&str>,
    label: Option<&str>,
    old: Option<&str>,
    new: Option<&str>,
) -> JsonB {
    let old = validate::required("old", old).or_raise();
    let new = validate::required("new", new).or_raise();
    let (agent_id, label) = agent_and_label(agent_id, label);
    JsonB(ops::edit(agent_id, label, |b| blocks::replace(b, old, new)))
}

/// Inserts `content` before line `line` (0-based; -1 = at the end) (Letta's `memory_insert`).
#[pg_extern(volatile, parallel_unsafe)]
fn block_insert(
    agent_id: Option<&str>,
    label: Option<&str>,
    content: Option<&str>,
    line: default!(Option<i32>, -1),
) -> JsonB {
    let content = validate::required("content", content).or_raise();
    let line = *validate::required("line", line.as_ref()).or_raise();
    let (agent_id, label) = agent_and_label(agent_id, label);
    JsonB(ops::edit(agent_id, label, |b| {
        blocks::insert(b, content, line as i64)
    }))
}

/// The text that goes into every system prompt (docs/design.md "Core memory blocks" layout).
#[pg_extern(stable, parallel_restricted)]
fn compile_core_blocks(
    agent_id: Option<&str>,
    now: default!(Option<TimestampWithTimeZone>, "now()"),
) -> String {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let now = *validate::required("now", now.as_ref()).or_raise();
    ops::compile_agent(agent_id, now)
}

/// `compile_core_blocks` for the tenant `user_id`: the form Citus runs wholly on that tenant's
/// worker (docs/citus.md "One round trip"). Strict: a NULL argument returns NULL. Volatile, not
/// stable like the original: it sets the call's tenant.
#[pg_extern(volatile, parallel_unsafe, strict)]
fn compile_core_blocks_for(
    user_id: &str,
    agent_id: &str,
    now: default!(TimestampWithTimeZone, "now()"),
) -> String {
    crate::pg::citus::routed(user_id, || compile_core_blocks(Some(agent_id), Some(now)))
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    fn setup() {
        Spi::run("SET memory_ext.user_id = 'u1'").unwrap();
        Spi::run("SELECT memory_agent('a1', 'u1', 'I am Sage.', 'Name: Ana')").unwrap();
    }

    #[pg_test]
    fn agent_is_created_once() {
        setup();
        let again =
            Spi::get_one::<pgrx::JsonB>("SELECT memory_agent('a1', 'u1', 'other', 'other')")
                .unwrap()
                .unwrap();
        assert_eq!(again.0["created"], false);
        let persona = Spi::get_one::<String>(
            "SELECT value FROM memory.blocks WHERE agent_id = 'a1' AND label = 'persona'",
        )
        .unwrap();
        assert_eq!(persona.as_deref(), Some("I am Sage."));
    }

    #[pg_test]
    fn edits_bump_version_and_write_history() {
        setup();
        let r = Spi::get_one::<pgrx::JsonB>("SELECT block_append('a1', 'human', 'Likes tea')")
            .unwrap()
            .unwrap();
        assert_eq!(r.0["version"], 2);
        assert_eq!(r.0["chars"], 19);
        let n = Spi::get_one::<i64>(
            "SELECT count(*) FROM memory.history WHERE entity = 'block' AND event = 'UPDATE'
               AND old_ref = 'Name: Ana' AND new_ref = E'Name: Ana\\nLikes tea'",
        )
        .unwrap();
        assert_eq!(n, Some(1));
    }

    #[pg_test(error = "block \"persona\" is read-only")]
    fn read_only_blocks_refuse_edits() {
        setup();
        Spi::run("UPDATE memory.blocks SET read_only = true WHERE label = 'persona'").unwrap();
        Spi::run("SELECT block_replace('a1', 'persona', 'Sage', 'Bob')").unwrap();
    }

    #[pg_test]
    fn compile_has_both_blocks_and_metadata() {
        setup();
        let s = Spi::get_one::<String>("SELECT compile_core_blocks('a1')")
            .unwrap()
            .unwrap();
        assert!(s.starts_with("<memory_blocks>\n"));
        assert!(s.contains("<persona>\n<description>\n"));
        assert!(s.contains("- chars_current=10\n- chars_limit=20000\n"));
        assert!(s.ends_with("</memory_metadata>"));
    }
}

/// The `<memory_blocks>` section alone, without the metadata's clock and counts, and its
/// SHA-256 (hex): `{text, hash}`. Put first in a system prompt, it stays byte-identical, and the
/// hash equal, until a block changes, so a backend knows when its cached prompt prefix changed.
#[pg_extern(stable, parallel_safe)]
fn compile_blocks(agent_id: Option<&str>) -> JsonB {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    JsonB(ops::compile_cached(agent_id))
}

/// Attaches block `block_id` — of another of the caller's agents, or of a space granted to it —
/// to agent `agent_id`: one block, seen and edited by every agent it is attached to, read-only
/// when asked or when the caller may not write it. `{agent_id, block_id, label, space, read_only}`.
#[pg_extern(volatile, parallel_unsafe)]
fn block_attach(
    agent_id: Option<&str>,
    block_id: Option<pgrx::Uuid>,
    read_only: default!(Option<bool>, false),
) -> JsonB {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let block_id = validate::required("block_id", block_id.as_ref())
        .or_raise()
        .to_string();
    let read_only = *validate::required("read_only", read_only.as_ref()).or_raise();
    JsonB(ops::attach(agent_id, &block_id, read_only))
}

/// Takes an attached block out of agent `agent_id`'s prompt; the block stays where it lives.
/// `{agent_id, block_id, detached}`.
#[pg_extern(volatile, parallel_unsafe)]
fn block_detach(agent_id: Option<&str>, block_id: Option<pgrx::Uuid>) -> JsonB {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let block_id = validate::required("block_id", block_id.as_ref())
        .or_raise()
        .to_string();
    JsonB(ops::detach(agent_id, &block_id))
}
