//! The agent tools (docs/api.md "Agent tools"): `memory_tools`, `memory_prompt` and
//! `memory_tool_call`. The rules (which tools, their definitions, the checking of a model's
//! arguments, Anthropic's memory tool, the prompt) are in crates/memory_core/src/tools/; here
//! they meet the agent's rows, and each call runs through the same store code as the SQL
//! function it stands for, in a subtransaction (src/pg/subxact.rs), so a failed call leaves
//! nothing behind and comes back as text the model can act on.

use crate::error::OrRaise;
use crate::gucs;
use crate::ops::{blocks, compaction, detail, files, query, recall, search, write};
use crate::pg::events::{self, Event, Node};
use crate::pg::lookup::{self, Owned};
use crate::pg::{limits, spi, subxact};
use memory_core::blocks as rules;
use memory_core::render;
use memory_core::request::{self, Filters};
use memory_core::tools::memory::{self as memtool, says, Command};
use memory_core::tools::{self, Agent, Call, Format, PAGE_SIZE};
use memory_core::when;
use pgrx::prelude::*;
use serde_json::{json, Value};

/// Most results a paged search ranks (ten pages): beyond that, matches are too weak to page to.
const MAX_RESULTS: usize = 50;
/// Characters of a stored detail one memory_ref_get call returns.
const REF_PAGE_CHARS: i64 = 4000;

/// The agent's tenant and what it may do.
fn agent(agent_id: &str) -> (String, Agent) {
    let user = lookup::owner(Owned::Agent, agent_id);
    let writable_blocks = spi::one_opt::<Vec<String>>(
        "SELECT coalesce(array_agg(label ORDER BY label), '{}') FROM memory.blocks \
         WHERE user_id = $1 AND agent_id = $2 AND NOT read_only",
        &[user.as_str().into(), agent_id.into()],
        "reading an agent's blocks",
    )
    .unwrap_or_default();
    let categories = query::allowed_categories(&user, Some(agent_id), None);
    let tools = spi::one_opt::<Vec<String>>(
        "SELECT tools FROM memory.agents WHERE user_id = $1 AND agent_id = $2",
        &[user.as_str().into(), agent_id.into()],
        "reading an agent's tool allowlist",
    );
    (
        user,
        Agent {
            writable_blocks,
            categories,
            tools,
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
        "INSERT INTO memory.threads (user_id, thread_id, agent_id) VALUES ($1, $2, $3) \
         ON CONFLICT (user_id, thread_id) DO NOTHING",
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
    let outcome: Result<String, (String, Option<String>)> = match tools::parse(name, args, &a) {
        Err(e) => Err((e, None)),
        Ok(c) => match subxact::catching(|| run(&user, agent_id, thread_id, &a, c)) {
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

/// Runs one checked call; `Err` is a refusal the model should read (a SQL error raised inside
/// is caught by the caller's subtransaction instead).
fn run(
    user: &str,
    agent_id: &str,
    thread: Option<&str>,
    a: &Agent,
    c: Call,
) -> Result<String, String> {
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
        Call::ArchivalInsert {
            content,
            category,
            tags,
        } => {
            // Checked here too (the write path checks `text`) to name the argument the model sent.
            limits::value_bytes("content", content.len());
            // A tool call is the model's inference, not the user's statement
            // (memory_ext.tool_source): a sensitive category waits for consent.
            let mut req = json!({"user_id": user, "text": content, "kind": "archival",
                                 "agent_id": agent_id, "tags": tags,
                                 "source": gucs::tool_source()});
            if let Some(c) = category {
                req["category"] = json!(c);
            }
            if let Some(t) = thread {
                req["thread_id"] = json!(t);
            }
            let r = write::write_json(&req);
            match r["event"].as_str() {
                Some("noop") => "Already in long-term memory.".to_string(),
                Some("proposed") => {
                    let field = render::inline(r["category"].as_str().unwrap_or("this field"));
                    if r["policy"] == "corroborate" {
                        format!(
                            "Not saved yet: a change to \"{field}\" is saved once a second, \
                             independent sign says the same."
                        )
                    } else {
                        format!(
                            "Not saved yet: a change to \"{field}\" needs the user's consent. It \
                             is proposed and will be saved when the user approves it."
                        )
                    }
                }
                Some("updated") => {
                    "Long-term memory updated: it merged with a memory saying nearly the same."
                        .to_string()
                }
                _ => "Saved to long-term memory.".to_string(),
            }
        }
        Call::ArchivalSearch { query, page, tags } => {
            limits::query("query", &query);
            paged_memories(user, agent_id, a, &query, tags, page)?
        }
        Call::Query {
            query,
            top_k,
            category,
        } => {
            limits::query("query", &query);
            let mut req = json!({"query": query, "top_k": top_k, "agent": agent_id,
                                 "filters": {"user_id": user}, "return": "bullets"});
            if let Some(c) = category {
                req["categories"] = json!([c]);
            }
            if let Some(t) = thread {
                req["thread_id"] = json!(t);
            }
            let r = query::run_query(&request::parse_query(&req).or_raise());
            let lines: Vec<String> = items(&r)
                .iter()
                .map(|i| format!("- {}", i["text"].as_str().unwrap_or_default()))
                .collect();
            if lines.is_empty() {
                "No memories found.".to_string()
            } else {
                lines.join("\n")
            }
        }
        Call::ConversationSearch { query, page } => {
            limits::query("query", &query);
            // Within the call's thread; without one, across the agent's conversations, each line
            // naming its thread (the model may want to say where something was said).
            let hits = match thread {
                Some(t) => recall::search(t, &query, None, None, None, MAX_RESULTS),
                None => recall::search_agent(user, agent_id, &query, MAX_RESULTS),
            };
            let lines: Vec<String> = hits
                .iter()
                .map(|h| {
                    let across = thread.is_none().then_some(h.thread_id.as_str());
                    message_line(&minute(&h.created_at), across, &h.role, &h.content)
                })
                .collect();
            paged(&lines, page)
        }
        Call::ConversationSearchDate { start, end, page } => {
            type Page = (i64, Vec<String>, Vec<String>, Vec<String>, Vec<String>);
            let (total, at, threads, role, content): Page = spi::rows(
                include_str!("../../sql/queries/tools_messages_between.sql"),
                &[
                    user.into(),
                    thread.into(),
                    start.to_string().into(),
                    end.to_string().into(),
                    ((page * PAGE_SIZE) as i64).into(),
                    (PAGE_SIZE as i64).into(),
                    agent_id.into(),
                ],
                "listing messages by date",
                |r| {
                    Ok((
                        r.get::<i64>(1)?.unwrap_or(0),
                        r.get::<Vec<String>>(2)?.unwrap_or_default(),
                        r.get::<Vec<String>>(3)?.unwrap_or_default(),
                        r.get::<Vec<String>>(4)?.unwrap_or_default(),
                        r.get::<Vec<String>>(5)?.unwrap_or_default(),
                    ))
                },
            )
            .pop()
            .unwrap_or_default();
            // A message of another conversation than the call's names its thread.
            let lines: Vec<String> = (0..at.len())
                .map(|i| {
                    let other =
                        (thread != Some(threads[i].as_str())).then_some(threads[i].as_str());
                    message_line(&at[i], other, &role[i], &content[i])
                })
                .collect();
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            page_text(page, total as usize, &lines)
        }
        Call::RefGet { key, offset } => {
            let r = detail::get(&key, offset, REF_PAGE_CHARS);
            let content = r["content"].as_str().unwrap_or_default().to_string();
            match r["next_offset"].as_i64() {
                Some(next) => format!(
                    "{content}\n[characters {}-{} of {}; call memory_ref_get with offset {next} for more]",
                    offset,
                    next,
                    r["total"]
                ),
                None => content,
            }
        }
        // A file's whole content, after the edit, is held to memory_ext.max_value_bytes by the
        // store (src/ops/files.rs), as for memory_file_write.
        Call::Memory(cmd) => anthropic(user, cmd)?,
        Call::FileList { prefix, limit } => {
            let rows = files::ls(Some(user), &prefix, limit + 1);
            let more = rows.len() as i64 > limit;
            let lines: Vec<String> = rows
                .iter()
                .take(limit as usize)
                .map(|(path, title, _, chars, updated, _)| {
                    let title = title
                        .as_deref()
                        .map(|t| format!(" \"{}\"", render::inline(t)))
                        .unwrap_or_default();
                    format!(
                        "- {}{title} ({chars} characters, {})",
                        render::inline(path),
                        day(updated)
                    )
                })
                .collect();
            match (lines.is_empty(), more) {
                (true, _) => "No files found.".to_string(),
                (false, false) => lines.join("\n"),
                (false, true) => format!(
                    "{}\n[more files: raise limit or name a directory in prefix]",
                    lines.join("\n")
                ),
            }
        }
        Call::FileRead { path, offset } => read_file(user, &path, offset),
        Call::FileGrep {
            pattern,
            prefix,
            limit,
        } => {
            limits::query("pattern", &pattern);
            let rows = files::grep(Some(user), &pattern, &prefix, limit);
            if rows.is_empty() {
                "No matching lines.".to_string()
            } else {
                rows.iter()
                    .map(|(path, line, text)| {
                        format!(
                            "- {}:{line}: {}",
                            render::inline(path),
                            render::inline(text)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
        Call::FileSearch { query, tags, limit } => {
            limits::query("query", &query);
            let tags = (!tags.is_empty()).then_some(tags);
            let hits = files::search(Some(user), &query, tags, limit as usize);
            if hits.is_empty() {
                "No files found.".to_string()
            } else {
                hits.iter().map(file_line).collect::<Vec<_>>().join("\n")
            }
        }
        Call::DetailStore {
            content,
            description,
            kind,
        } => {
            limits::value_bytes("content", content.len());
            let r = detail::ref_store(
                Some(user),
                &content,
                &description,
                &kind,
                thread,
                Some(agent_id),
                json!({}),
            );
            format!(
                "Stored. Keep this placeholder instead of the content: {}\nretrieve_memory with \
                 memory_key \"{}\" opens it.",
                r["placeholder"].as_str().unwrap_or_default(),
                r["key"].as_str().unwrap_or_default()
            )
        }
        Call::Summarize {
            from,
            to,
            keep_last,
            focus,
        } => {
            let t = thread
                .ok_or("summarize_conversation needs a conversation: call it within a thread")?;
            if let Some(f) = &focus {
                limits::query("focus", f);
            }
            let pick = if from.is_some() || to.is_some() {
                compaction::Pick::Range { from, to }
            } else {
                compaction::Pick::KeepLast(keep_last as usize)
            };
            compacted(&compaction::compact(t, pick, focus.as_deref()))
        }
        Call::Archive { before } => {
            let t = thread
                .ok_or("archive_old_messages needs a conversation: call it within a thread")?;
            compacted(&compaction::compact(
                t,
                compaction::Pick::Before(before),
                None,
            ))
        }
        Call::DetailSearch {
            query,
            thread: within,
        } => {
            limits::query("query", &query);
            let found = detail::search(Some(user), &query, within.as_deref(), None, PAGE_SIZE);
            if found.is_empty() {
                "No stored details found.".to_string()
            } else {
                found
                    .iter()
                    .map(|(key, description, kind, _, _, chars, at, _)| {
                        format!(
                            "- {} ({}, {chars} characters, {})",
                            memory_core::detail::placeholder(key, description),
                            render::inline(kind),
                            day(at)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
    })
}

/// A compaction as the model reads it: what left the context, what the summary at its top now
/// covers, the summary and its key facts (each on its line, memory_core::render).
fn compacted(r: &Value) -> String {
    let n = r["summarized"].as_i64().unwrap_or(0);
    if n == 0 {
        return "Nothing to summarise: no message in your context matches (pinned messages, the \
                system prompt and the newest you keep stay)."
            .into();
    }
    let (from, to) = (r["date_from"].as_str(), r["date_to"].as_str());
    let days = match (from, to) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a} to {b}"),
        _ => String::new(),
    };
    let mut out = format!(
        "Summarised {n} {} into the summary at the top of your context; they stay searchable \
         with conversation_search. The summary now covers messages {}-{} ({days}), {} in \
         all.\nSummary: {}",
        if n == 1 { "message" } else { "messages" },
        r["from_seq"],
        r["to_seq"],
        r["archived"],
        render::inline(r["summary"].as_str().unwrap_or_default())
    );
    let facts: Vec<String> = r["key_facts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|f| format!("- {}", render::inline(f)))
        .collect();
    if !facts.is_empty() {
        out.push_str(&format!("\nKey facts:\n{}", facts.join("\n")));
    }
    out
}

/// A file as recall and memory_file_search show it: `- path "title" (YYYY-MM-DD): snippet`, every
/// field on its line (memory_core::render).
pub fn file_line(h: &search::FileHit) -> String {
    let title = h
        .title
        .as_deref()
        .map(|t| format!(" \"{}\"", render::inline(t)))
        .unwrap_or_default();
    format!(
        "- {}{title} ({}): {}",
        render::inline(&h.path),
        h.day,
        render::inline(&h.snippet)
    )
}

/// memory_file_read: a page of a file, its path, title and day first. The content is shown as it
/// is (the model may quote it back into an edit), inside the tool's answer; P0002 when there is
/// no such file, told to the model by the caller.
fn read_file(user: &str, path: &str, offset: i64) -> String {
    let f = files::read(Some(user), path);
    let content = f["content"].as_str().unwrap_or_default();
    let total = content.chars().count();
    let from = (offset as usize).min(total);
    let page: String = content
        .chars()
        .skip(from)
        .take(tools::READ_PAGE_CHARS)
        .collect();
    let end = from + page.chars().count();
    let title = f["title"]
        .as_str()
        .map(|t| format!(" \"{}\"", render::inline(t)))
        .unwrap_or_default();
    let updated = f["updated_at"].as_str().unwrap_or_default();
    let mut out = format!(
        "{}{title} (changed {}, {total} characters)\n{page}",
        render::inline(path),
        updated.get(..10).unwrap_or(updated)
    );
    if end < total {
        out.push_str(&format!(
            "\n[characters {from}-{end} of {total}; call memory_file_read with offset {end} for more]"
        ));
    }
    out
}

/// `YYYY-MM-DD` of a time, UTC.
fn day(at: &TimestampWithTimeZone) -> String {
    minute(at).get(..10).unwrap_or_default().to_string()
}

fn items(r: &Value) -> Vec<Value> {
    r["items"].as_array().cloned().unwrap_or_default()
}

/// `YYYY-MM-DD HH:MI` of a message's time, UTC.
fn minute(at: &TimestampWithTimeZone) -> String {
    let at = at.to_iso_string();
    at.get(..16).unwrap_or(&at).replace('T', " ")
}

/// A message as the tools show it: `- [2024-05-08 10:30] user: ...`, with `(thread t1)` after
/// the time when a search spans threads. Every field is rendered on the line (memory_core's
/// render rule): a message cannot add lines to the answer.
fn message_line(at: &str, thread: Option<&str>, role: &str, content: &str) -> String {
    let (role, content) = (render::inline(role), render::inline(content));
    match thread {
        Some(t) => format!("- [{at}] (thread {}) {role}: {content}", render::inline(t)),
        None => format!("- [{at}] {role}: {content}"),
    }
}

/// Page `page` of `lines` with MemGPT's paging line first.
fn paged(lines: &[String], page: usize) -> String {
    let body: Vec<&str> = lines
        .iter()
        .skip(page * PAGE_SIZE)
        .take(PAGE_SIZE)
        .map(String::as_str)
        .collect();
    page_text(page, lines.len(), &body)
}

/// MemGPT's paging line for page `page` of `total` results, then the page's lines.
fn page_text(page: usize, total: usize, body: &[&str]) -> String {
    let head = tools::page_line(page, total);
    if body.is_empty() {
        head
    } else {
        format!("{head}\n{}", body.join("\n"))
    }
}

/// archival_search: memory_query's ranking (the same search engine, src/ops/search/), a page
/// of it, each line with its day and tags. Only the memories on the page count as read
/// (`last_accessed_at`): the model saw those, not the other 45.
fn paged_memories(
    user: &str,
    agent_id: &str,
    a: &Agent,
    query: &str,
    tags: Vec<String>,
    page: usize,
) -> Result<String, String> {
    let filters = Filters {
        user_id: Some(user.to_string()),
        tags: (!tags.is_empty()).then_some(tags),
        ..Filters::default()
    };
    let categories =
        query::allowed_categories(user, a.categories.is_some().then_some(agent_id), None);
    let window = when::window(query, when::now());
    let mut hits = search::memories(
        user,
        query,
        None,
        &filters,
        categories.as_deref(),
        MAX_RESULTS,
        window,
        gucs::rerank(),
    );
    hits.truncate(MAX_RESULTS);
    let lines: Vec<String> = hits
        .iter()
        .map(|h| {
            if h.tags.is_empty() {
                format!("- {}", h.line())
            } else {
                let tags: Vec<String> = h
                    .tags
                    .iter()
                    .map(|t| render::inline(t).into_owned())
                    .collect();
                format!("- {} (tags: {})", h.line(), tags.join(", "))
            }
        })
        .collect();
    let shown: Vec<String> = hits
        .iter()
        .skip(page * PAGE_SIZE)
        .take(PAGE_SIZE)
        .map(|h| h.id.clone())
        .collect();
    query::touch(user, &shown);
    Ok(paged(&lines, page))
}

/// Anthropic's memory tool over the tenant's `memories/` files.
///
/// # Why every edit locks
/// Models issue tool calls in parallel. Each read-modify-write here is atomic against
/// concurrent calls on the same path: `str_replace` and `insert` lock the file's row
/// (src/ops/files.rs `lock`) and compute the edit from what the previous editor committed;
/// `create` inserts only where nothing is (a concurrent create of the same path is answered
/// "already exists"); `rename` and `delete` of a directory are one statement each, the whole
/// directory or nothing. Every acknowledged edit is in the file; a call that cannot be applied
/// answers `is_error`.
fn anthropic(user: &str, cmd: Command) -> Result<String, String> {
    let read = |file: &str| -> Option<String> {
        spi::one_opt::<String>(
            "SELECT content FROM memory.files WHERE user_id = $1 AND path = $2",
            &[user.into(), file.into()],
            "reading a memory file",
        )
    };
    let under = |file: &str| files::sizes(user, &format!("{file}/"));
    let exists_under = |file: &str| {
        spi::one_opt::<bool>(
            "SELECT EXISTS (SELECT 1 FROM memory.files WHERE user_id = $1 AND starts_with(path, $2 || '/'))",
            &[user.into(), file.into()],
            "looking for a directory",
        )
        .unwrap_or(false)
    };
    // str_replace and insert: the edit computed from the locked file and stored with its title,
    // tags and metadata kept.
    let edit = |path: &str, f: &memtool::Edit| {
        let file = memtool::file_path(path)?.ok_or_else(|| says::not_a_file(path))?;
        let (content, title) = files::lock(user, &file).ok_or_else(|| {
            if exists_under(&file) {
                says::not_a_file(path)
            } else {
                says::missing(path)
            }
        })?;
        let (edited, msg) = f(&content)?;
        files::set_content(user, &file, title.as_deref(), &edited);
        Ok(msg)
    };
    match cmd {
        Command::View { path, range } => match memtool::file_path(&path)? {
            None => Ok(memtool::view_dir(&path, &under(memtool::ROOT))),
            Some(f) => match read(&f) {
                Some(c) => memtool::view_file(&path, &c, range),
                None if exists_under(&f) => Ok(memtool::view_dir(&path, &under(&f))),
                None => Err(says::missing(&path)),
            },
        },
        Command::Create { path, text } => {
            let f = memtool::file_path(&path)?.ok_or_else(|| says::exists(&path))?;
            if exists_under(&f) {
                return Err(says::exists(&path));
            }
            let title = memory_core::files::default_title(&text);
            if files::create(user, &f, title.as_deref(), &text) {
                Ok(says::created(&path))
            } else {
                Err(says::exists(&path))
            }
        }
        Command::StrReplace { path, old, new } => {
            edit(&path, &|c: &str| memtool::str_replace(&path, c, &old, &new))
        }
        Command::Insert { path, line, text } => {
            edit(&path, &|c: &str| memtool::insert(&path, c, line, &text))
        }
        Command::Delete { path } => {
            let f = memtool::file_path(&path)?.ok_or_else(says::root)?;
            if files::delete_tree(user, &f, true) > 0 {
                Ok(says::deleted(&path))
            } else {
                Err(says::no_such(&path))
            }
        }
        Command::Rename { old, new } => {
            let from = memtool::file_path(&old)?.ok_or_else(says::root_rename)?;
            let to = memtool::file_path(&new)?.ok_or_else(says::root_rename)?;
            if to == from || to.starts_with(&format!("{from}/")) {
                return Err(says::into_itself(&old, &new));
            }
            if read(&to).is_some() || exists_under(&to) {
                return Err(says::destination_exists(&new));
            }
            // The longest path after the move must still be a memory-file path.
            let longest = under(&from)
                .iter()
                .map(|(p, _)| p.chars().count())
                .max()
                .unwrap_or(0)
                .max(from.chars().count());
            let grown = longest + to.chars().count() - from.chars().count();
            if grown > memory_core::files::MAX_PATH_CHARS {
                return Err(format!(
                    "Cannot rename {old} to {new}: a path would be {grown} characters, over the \
                     limit of {}.",
                    memory_core::files::MAX_PATH_CHARS
                ));
            }
            match files::rename(user, &from, &to) {
                0 => Err(says::no_such(&old)),
                _ => Ok(says::renamed(&old, &new)),
            }
        }
    }
}
