//! Core memory (docs/api.md "Core memory"): agents, their blocks, the agent-facing edit operations,
//! and `compile_core_blocks`, the text that goes into every system prompt.
//!
//! Each edit reads the block with `FOR UPDATE`, computes the new value in `memory_core`, and
//! writes it back: concurrent edits of one block queue on the row lock and none is lost. Any
//! error is raised before the write. Version bumps and history rows come from the triggers
//! (sql/triggers.sql), so a plain UPDATE by an application gets them too.

use crate::error::{raise, OrRaise, SpiOk};
use crate::pg::json::Json;
use crate::pg::lookup::{self, Owned};
use crate::pg::{spi, tenant};
use memory_core::blocks::{self, BlockState, BlockView, Metadata};
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::json;

/// The agent's tenant, after checking the arguments every block function shares.
fn agent_and_label(agent_id: Option<&str>, label: Option<&str>) -> (String, String, String) {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let label = validate::required("label", label).or_raise();
    blocks::check_label(label).or_raise();
    let user = lookup::owner(Owned::Agent, agent_id);
    (user, agent_id.to_string(), label.to_string())
}

fn block_json(label: &str, version: i32, chars: i64) -> JsonB {
    JsonB(json!({ "label": label, "version": version, "chars": chars }))
}

/// Applies `edit` to the locked block and stores the result.
fn edit_block(
    agent_id: Option<&str>,
    label: Option<&str>,
    edit: impl FnOnce(&BlockState) -> Result<String, blocks::BlockError>,
) -> JsonB {
    let (user, agent_id, label) = agent_and_label(agent_id, label);
    let current = Spi::connect_mut(|c| {
        let rows = c.update(
            "SELECT value, char_limit, read_only FROM memory.blocks
             WHERE user_id = $1 AND agent_id = $2 AND label = $3 FOR UPDATE",
            Some(1),
            &[
                user.as_str().into(),
                agent_id.as_str().into(),
                label.as_str().into(),
            ],
        )?;
        if rows.is_empty() {
            return Ok(None);
        }
        let row = rows.first();
        Ok::<_, pgrx::spi::Error>(Some((
            row.get::<String>(1)?.unwrap_or_default(),
            row.get::<i32>(2)?.unwrap_or(blocks::DEFAULT_CHAR_LIMIT),
            row.get::<bool>(3)?.unwrap_or(false),
        )))
    })
    .spi("reading a block");
    let Some((value, char_limit, read_only)) = current else {
        raise(
            SqlState::NoDataFound,
            format!("block \"{label}\" not found for agent \"{agent_id}\""),
            Some("create it with block_set".into()),
        )
    };
    let state = BlockState {
        label: &label,
        value: &value,
        char_limit,
        read_only,
    };
    let new_value = edit(&state).or_raise();
    let version = spi::one_opt::<i32>(
        "UPDATE memory.blocks SET value = $4
         WHERE user_id = $1 AND agent_id = $2 AND label = $3 RETURNING version",
        &[
            user.as_str().into(),
            agent_id.as_str().into(),
            label.as_str().into(),
            new_value.as_str().into(),
        ],
        "updating a block",
    )
    .unwrap_or(1);
    block_json(&label, version, blocks::chars(&new_value) as i64)
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
    let user = tenant::resolve(user_id);
    // NULL is not "the default" here: the default is '', and NULL is a mistake worth naming.
    let persona = validate::required("persona", persona).or_raise();
    let human = validate::required("human", human).or_raise();
    // Validate before writing anything.
    for (label, value) in [("persona", persona), ("human", human)] {
        blocks::fits(label, value.to_string(), blocks::DEFAULT_CHAR_LIMIT).or_raise();
    }
    let created = spi::one_opt::<bool>(
        "INSERT INTO memory.agents (user_id, agent_id) VALUES ($1, $2)
         ON CONFLICT (user_id, agent_id) DO NOTHING RETURNING true",
        &[user.as_str().into(), agent_id.into()],
        "creating an agent",
    )
    .unwrap_or(false);
    if created {
        Spi::run_with_args(
            "INSERT INTO memory.blocks (user_id, agent_id, label, description, value)
             VALUES ($1, $2, 'persona', $3, $4), ($1, $2, 'human', $5, $6)",
            &[
                user.as_str().into(),
                agent_id.into(),
                blocks::PERSONA_DESCRIPTION.into(),
                persona.into(),
                blocks::HUMAN_DESCRIPTION.into(),
                human.into(),
            ],
        )
        .spi("creating default blocks");
    }
    let blocks = Spi::get_one_with_args::<Json>(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('label', label, 'version', version,
                                                      'chars', char_length(value))
                                   ORDER BY label <> 'persona', label <> 'human', created_at, label), '[]')
         FROM memory.blocks WHERE user_id = $1 AND agent_id = $2",
        &[user.as_str().into(), agent_id.into()],
    )
    .spi("listing blocks")
    .map(|j| j.0)
    .unwrap_or_else(|| json!([]));
    JsonB(json!({ "agent_id": agent_id, "user_id": user, "created": created, "blocks": blocks }))
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
    let (user, agent_id, label) = agent_and_label(agent_id, label);
    let value = validate::required("value", value).or_raise();
    let char_limit = blocks::check_char_limit(
        validate::required("char_limit", char_limit.as_ref())
            .map(|v| *v as i64)
            .or_raise(),
    )
    .or_raise();
    let read_only = *validate::required("read_only", read_only.as_ref()).or_raise();
    let value = blocks::fits(&label, value.to_string(), char_limit).or_raise();
    let existing = spi::one_opt::<bool>(
        "SELECT read_only FROM memory.blocks WHERE user_id = $1 AND agent_id = $2 AND label = $3 FOR UPDATE",
        &[user.as_str().into(), agent_id.as_str().into(), label.as_str().into()],
        "reading a block",
    );
    if existing == Some(true) {
        Err::<(), _>(blocks::BlockError::ReadOnly {
            label: label.clone(),
        })
        .or_raise();
    }
    // description NULL keeps the existing description on overwrite.
    let version = spi::one_opt::<i32>(
        "INSERT INTO memory.blocks AS b (user_id, agent_id, label, description, value, char_limit, read_only)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (user_id, agent_id, label) DO UPDATE
            SET value = EXCLUDED.value, char_limit = EXCLUDED.char_limit, read_only = EXCLUDED.read_only,
                description = coalesce(EXCLUDED.description, b.description)
         RETURNING version",
        &[
            user.as_str().into(),
            agent_id.as_str().into(),
            label.as_str().into(),
            description.into(),
            value.as_str().into(),
            char_limit.into(),
            read_only.into(),
        ],
        "writing a block",
    )
    .unwrap_or(1);
    block_json(&label, version, blocks::chars(&value) as i64)
}

/// Appends `content` on a new line (Letta's `memory_append`).
#[pg_extern(volatile, parallel_unsafe)]
fn block_append(agent_id: Option<&str>, label: Option<&str>, content: Option<&str>) -> JsonB {
    let content = validate::required("content", content).or_raise();
    edit_block(agent_id, label, |b| blocks::append(b, content))
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
    edit_block(agent_id, label, |b| blocks::replace(b, old, new))
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
    edit_block(agent_id, label, |b| blocks::insert(b, content, line as i64))
}

/// Everything `compile_core_blocks` renders, read in one query. Dates are formatted by
/// Postgres in the session's TimeZone, as docs/design.md "Core memory blocks" shows them ("2026-01-23 10:30:00 PST").
const COMPILE_QUERY: &str = include_str!("../../sql/queries/compile_blocks.sql");

/// The agent's blocks and metadata, rendered (docs/design.md "Core memory blocks" layout).
pub fn compile_for(user: &str, agent_id: &str, now: TimestampWithTimeZone) -> String {
    let (date, modified, messages, memories, rows) = Spi::connect(|c| {
        let t = c
            .select(
                COMPILE_QUERY,
                Some(1),
                &[user.into(), agent_id.into(), now.into()],
            )?
            .first();
        Ok::<_, pgrx::spi::Error>((
            t.get::<String>(1)?.unwrap_or_default(),
            t.get::<String>(2)?,
            t.get::<i64>(3)?.unwrap_or(0),
            t.get::<i64>(4)?.unwrap_or(0),
            t.get::<Json>(5)?.map(|j| j.0).unwrap_or_else(|| json!([])),
        ))
    })
    .spi("compiling blocks");
    let views: Vec<BlockView> = rows
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| BlockView {
            label: b["label"].as_str().unwrap_or_default().to_string(),
            description: b["description"].as_str().map(str::to_string),
            value: b["value"].as_str().unwrap_or_default().to_string(),
            char_limit: b["char_limit"].as_i64().unwrap_or(0) as i32,
            read_only: b["read_only"].as_bool().unwrap_or(false),
        })
        .collect();
    let meta = Metadata {
        system_date: date,
        blocks_modified: modified,
        recall_messages: messages,
        archival_memories: memories,
    };
    blocks::compile(&views, &meta)
}

#[pg_extern(stable, parallel_restricted)]
fn compile_core_blocks(
    agent_id: Option<&str>,
    now: default!(Option<TimestampWithTimeZone>, "now()"),
) -> String {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let now = *validate::required("now", now.as_ref()).or_raise();
    let user = lookup::owner(Owned::Agent, agent_id);
    compile_for(&user, agent_id, now)
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
