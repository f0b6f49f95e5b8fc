//! The agent tools (docs/api.md "Agent tools"): `memory_tools`, `memory_prompt` and
//! `memory_tool_call`. The rules (which tools, their definitions, the checking of a model's
//! arguments, Anthropic's memory tool, the prompt) are in crates/memory_core/src/tools/; here
//! they meet the agent's rows, and each call runs through the same store code as the SQL
//! function it stands for, in a subtransaction (src/pg/subxact.rs), so a failed call leaves
//! nothing behind and comes back as text the model can act on.

mod archival;
mod blocks;
mod compaction;
mod consent;
mod conversation;
mod detail;
mod entities;
mod files;
mod memory;
mod summaries;

use crate::error::OrRaise;
use crate::ops::query;
use crate::pg::events::{self, Event, Node};
use crate::pg::lookup::{self, Owned};
use crate::pg::{spi, subxact};
use memory_core::render;
use memory_core::tools::{self, Agent, Call, Family, Format};
use pgrx::prelude::*;
use serde_json::{json, Value};

/// Most results a paged search ranks (ten pages): beyond that, matches are too weak to page to.
pub(super) const MAX_RESULTS: usize = 50;

/// The agent's tenant and what it may do.
fn agent(agent_id: &str) -> (String, Agent) {
    let user = lookup::owner(Owned::Agent, agent_id);
    let writable_blocks = spi::one_opt::<Vec<String>>(
        include_str!("../../../sql/queries/tools_writable_blocks.sql"),
        &[user.as_str().into(), agent_id.into()],
        "reading an agent's blocks",
    )
    .unwrap_or_default();
    let categories = query::allowed_categories(&user, Some(agent_id), None);
    let (tools, file_paths) = spi::row(
        "SELECT tools, file_paths FROM memory.agents WHERE user_id = $1 AND agent_id = $2",
        &[user.as_str().into(), agent_id.into()],
        "reading an agent's allowlists",
        |r| Ok((r.get::<Vec<String>>(1)?, r.get::<Vec<String>>(2)?)),
    )
    .unwrap_or_default();
    (
        user,
        Agent {
            writable_blocks,
            categories,
            tools,
            file_paths,
        },
    )
}

/// memory_tools: the definitions of the agent's tools in `format`.
pub fn definitions(agent_id: &str, format: Format, requested: Option<&[String]>) -> Value {
    let (_, a) = agent(agent_id);
    let names = tools::select(&a, requested).or_raise();
    tools::definitions(&names, &a, format)
}

/// memory_prompt: the memory instructions for the tools the agent is offered (by default, or
/// those requested, as memory_tools selects them).
pub fn prompt(agent_id: &str, parts: Option<&[String]>, requested: Option<&[String]>) -> String {
    let (_, a) = agent(agent_id);
    let names = tools::select(&a, requested).or_raise();
    tools::prompt::prompt(&names, parts).or_raise()
}

/// memory_tool_allowlist: the tools the agent may use at all (`None`: every tool), names checked.
pub fn set_allowlist(agent_id: &str, tools: Option<Vec<String>>) -> Value {
    let user = lookup::owner(Owned::Agent, agent_id);
    spi::run(
        "UPDATE memory.agents SET tools = $3, updated_at = now() WHERE user_id = $1 AND agent_id = $2",
        &[user.as_str().into(), agent_id.into(), tools.clone().into()],
        "setting an agent's tools",
    );
    json!({"agent_id": agent_id, "tools": tools})
}

/// Starts thread `thread_id` for `user` and its agent (nothing when a parallel call has just
/// started it); returns the user.
fn start_thread(user: &str, agent_id: &str, thread_id: &str) -> String {
    let thread_id = memory_core::validate::id("thread_id", Some(thread_id)).or_raise();
    crate::ops::screen::identifier("thread_id", thread_id);
    spi::run(
        include_str!("../../../sql/queries/tools_start_thread.sql"),
        &[user.into(), thread_id.into(), agent_id.into()],
        "starting a thread",
    );
    user.to_string()
}

/// memory_tool_call: `{"content", "is_error"}`; every call is an event (`tool:<name>`).
pub fn call(agent_id: &str, thread_id: Option<&str>, name: &str, args: &Value) -> Value {
    let (user, a) = agent(agent_id);
    if let Some(t) = thread_id {
        // A thread the agent names for the first time is started here, as message_append
        // starts one: an MCP host configured with a new thread's id (`memory-mcp --thread`)
        // works from its first call, before any message has been written.
        let owner = lookup::find_owner(Owned::Thread, t)
            .unwrap_or_else(|| start_thread(&user, agent_id, t));
        if owner != user {
            crate::error::raise(
                memory_core::SqlState::InsufficientPrivilege,
                format!("thread \"{t}\" belongs to another user than agent \"{agent_id}\""),
                None,
            );
        }
    }
    // A refusal of the checks or of the store is text for the model; a SQL error raised
    // inside is caught by the subtransaction and told in the model's terms
    // (memory_core::tools::error_text), its SQLSTATE kept in the event.
    let cx = Cx {
        user: &user,
        agent_id,
        thread: thread_id,
        agent: &a,
    };
    let outcome: Result<String, (String, Option<String>)> = match tools::parse(name, args, &a) {
        Err(e) => Err((e, None)),
        Ok(c) => match subxact::catching(|| {
            // tools::parse accepts only the table's names, so the lookup finds the tool.
            let tool = tools::tool(name).expect("a parsed call names a tool of the table");
            run(&cx, tool.family, c)
        }) {
            Ok(Ok(content)) => Ok(content),
            Ok(Err(refused)) => Err((refused, None)),
            Err(caught) => Err((
                tools::error_text(&caught.sqlstate, &caught.message),
                Some(caught.sqlstate),
            )),
        },
    };
    let op = format!("tool:{name}");
    events::record(Event {
        thread: thread_id,
        status: if outcome.is_ok() { "ok" } else { "error" },
        sqlstate: outcome.as_ref().err().and_then(|e| e.1.as_deref()),
        ..Event::new(&user, Node::Context, &op)
    });
    match outcome {
        Ok(content) => json!({"content": content, "is_error": false}),
        Err((e, _)) => json!({"content": e, "is_error": true}),
    }
}

/// `YYYY-MM-DD` of a time, UTC.
pub(super) fn day(at: &TimestampWithTimeZone) -> String {
    minute(at).get(..10).unwrap_or_default().to_string()
}

/// `YYYY-MM-DD HH:MI` of a message's time, UTC.
pub(super) fn minute(at: &TimestampWithTimeZone) -> String {
    let at = at.to_iso_string();
    at.get(..16).unwrap_or(&at).replace('T', " ")
}

/// A message as the tools show it: `- [2024-05-08 10:30] (turn 12) user: ...`, with the
/// thread before the turn when a search spans threads (`(thread t1, turn 12)`). The turn is
/// the message's number in its thread (seq), what summarize_conversation and
/// archive_old_messages take. Every field is rendered on the line (memory_core's render rule):
/// a message cannot add lines to the answer.
pub(super) fn message_line(
    at: &str,
    thread: Option<&str>,
    seq: i64,
    role: &str,
    content: &str,
) -> String {
    let (role, content) = (render::inline(role), render::inline(content));
    match thread {
        Some(t) => format!(
            "- [{at}] (thread {}, turn {seq}) {role}: {content}",
            render::inline(t)
        ),
        None => format!("- [{at}] (turn {seq}) {role}: {content}"),
    }
}

/// Page `page` of `lines`, `size` to a page, with MemGPT's paging line first.
pub(super) fn paged(lines: &[String], page: usize, size: usize) -> String {
    let body: Vec<&str> = lines
        .iter()
        .skip(page * size)
        .take(size)
        .map(String::as_str)
        .collect();
    page_text(page, lines.len(), size, &body)
}

/// MemGPT's paging line for page `page` of `total` results, then the page's lines.
pub(super) fn page_text(page: usize, total: usize, size: usize, body: &[&str]) -> String {
    let head = tools::page_line(page, total, size);
    if body.is_empty() {
        head
    } else {
        format!("{head}\n{}", body.join("\n"))
    }
}

/// Who is calling a tool: the agent's tenant, the agent, the call's thread and what the agent
/// may do.
#[derive(Clone, Copy)]
pub(super) struct Cx<'a> {
    pub user: &'a str,
    pub agent_id: &'a str,
    pub thread: Option<&'a str>,
    pub agent: &'a Agent,
}

/// Runs one checked call in its family's file (the table, memory_core::tools::TOOLS, names the
/// family); `Err` is a refusal the model should read (a SQL error raised inside is caught by the
/// caller's subtransaction instead).
fn run(cx: &Cx, family: Family, c: Call) -> Result<String, String> {
    match family {
        Family::Blocks => blocks::run(cx, c),
        Family::Archival => archival::run(cx, c),
        Family::Conversation => conversation::run(cx, c),
        Family::Detail => detail::run(cx, c),
        Family::Files => files::run(cx, c),
        Family::Compaction => compaction::run(cx, c),
        Family::Memory => memory::run(cx, c),
        Family::Consent => consent::run(cx, c),
        Family::Entities => entities::run(cx, c),
        Family::Summaries => summaries::run(cx, c),
    }
}
