//! Agent tools served from SQL (docs/api.md "Agent tools"): `memory_tools`, `memory_tool_call`,
//! `memory_prompt` and the agent-level tool allowlist. The work is in src/ops/tools/, the
//! rules in crates/memory_core/src/tools/.

use super::no_nulls;
use crate::error::{raise, OrRaise};
use crate::ops::tools as ops;
use crate::pg::json::Json;
use memory_core::tools::{self, Format};
use memory_core::validate;
use memory_core::SqlState;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

/// The agent's tool definitions in `format` (`openai`, `anthropic` or `mcp`): the default set,
/// or the tools named, less what the agent may not use. 22023 for an unknown format or tool.
#[pg_extern(stable, parallel_safe)]
fn memory_tools(
    agent_id: Option<&str>,
    format: default!(Option<&str>, "'openai'"),
    tools: default!(Option<Vec<Option<String>>>, "NULL"),
) -> JsonB {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let format: Format = validate::required("format", format)
        .or_raise()
        .parse()
        .or_raise();
    let tools = no_nulls("tools", tools);
    JsonB(ops::definitions(agent_id, format, tools.as_deref()))
}

/// Runs one tool call as the agent, in `thread_id` (NULL: none): `{"content", "is_error"}`.
/// Bad arguments and refused calls come back as `is_error` with nothing changed; an unknown
/// agent, or a thread of another user, is a SQL error (the caller's mistake, not the model's).
#[pg_extern(volatile, parallel_unsafe)]
fn memory_tool_call(
    agent_id: Option<&str>,
    thread_id: Option<&str>,
    name: Option<&str>,
    arguments: Option<Json>,
) -> JsonB {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let thread_id = thread_id.map(|t| validate::id("thread_id", Some(t)).or_raise());
    let name = validate::required("name", name).or_raise();
    let args = arguments.map(|j| j.0).unwrap_or(Value::Null);
    JsonB(ops::call(agent_id, thread_id, name, &args))
}

/// The memory instructions for the agent's system prompt, naming exactly the tools
/// `memory_tools` offers it (by default, or the `tools` named, as memory_tools takes them);
/// `parts` picks among core, recall, refs, writing, files.
#[pg_extern(stable, parallel_safe)]
fn memory_prompt(
    agent_id: Option<&str>,
    parts: default!(Option<Vec<Option<String>>>, "NULL"),
    tools: default!(Option<Vec<Option<String>>>, "NULL"),
) -> String {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let parts = no_nulls("parts", parts);
    let tools = no_nulls("tools", tools);
    ops::prompt(agent_id, parts.as_deref(), tools.as_deref())
}

/// Sets the tools an agent may use at all (NULL: every tool). `{agent_id, tools}`; 22023 for
/// an unknown tool name, P0002 for an unknown agent.
#[pg_extern(volatile, parallel_unsafe)]
fn memory_tool_allowlist(agent_id: Option<&str>, tools: Option<Vec<Option<String>>>) -> JsonB {
    let agent_id = validate::id("agent_id", agent_id).or_raise();
    let tools = no_nulls("tools", tools);
    if let Some(t) = &tools {
        if let Some(bad) = t.iter().find(|n| !tools::ALL_TOOLS.contains(&n.as_str())) {
            raise(
                SqlState::InvalidParameterValue,
                format!("unknown tool \"{bad}\""),
                Some(format!("tools are: {}", tools::ALL_TOOLS.join(", "))),
            );
        }
    }
    JsonB(ops::set_allowlist(agent_id, tools))
}
