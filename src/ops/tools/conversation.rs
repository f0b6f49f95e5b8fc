//! The recall tools (memory_core::tools::conversation): conversation_search over the thread (or
//! every thread of the agent), conversation_search_date a page of messages between two days.

use super::{message_line, minute, page_text, paged, Cx, MAX_RESULTS};
use crate::ops::recall;
use crate::pg::{limits, spi};
use memory_core::render;
use memory_core::tools::Call;
use memory_core::tools::PAGE_SIZE;

/// The start of a day, UTC (a day of chrono's `Display`, YYYY-MM-DD).
fn midnight(day: impl std::fmt::Display) -> pgrx::datum::TimestampWithTimeZone {
    let d = day.to_string();
    let part = |i: usize| {
        d.split('-')
            .nth(i)
            .and_then(|x| x.parse::<i32>().ok())
            .unwrap_or(1)
    };
    pgrx::datum::TimestampWithTimeZone::with_timezone(
        part(0),
        part(1) as u8,
        part(2) as u8,
        0,
        0,
        0.0,
        "UTC",
    )
    .unwrap_or_else(|e| {
        crate::error::raise(
            memory_core::SqlState::InvalidParameterValue,
            format!("day {d}: {e}"),
            None,
        )
    })
}

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Cx {
        user,
        agent_id,
        thread,
        ..
    } = *cx;
    Ok(match c {
        Call::ConversationSearch {
            query,
            page,
            size,
            roles,
            start,
            end,
        } => {
            limits::query("query", &query);
            let roles = (!roles.is_empty()).then_some(roles);
            // Days in UTC, both included (as conversation_search_date reads them).
            let (start, end) = (
                start.map(midnight),
                end.and_then(|d| d.succ_opt()).map(midnight),
            );
            // Within the call's thread; without one, across the agent's conversations, each line
            // naming its thread (the model may want to say where something was said).
            let hits = match thread {
                Some(t) => recall::search(t, &query, roles, start, end, MAX_RESULTS),
                None => {
                    recall::search_agent(user, agent_id, &query, roles, start, end, MAX_RESULTS)
                }
            };
            let lines: Vec<String> = hits
                .iter()
                .map(|h| {
                    let across = thread.is_none().then_some(h.thread_id.as_str());
                    let line =
                        message_line(&minute(&h.created_at), across, h.seq, &h.role, &h.content);
                    // As archival_search labels a space's memories.
                    match &h.space {
                        Some(s) => format!("{line} (space: {})", render::inline(s)),
                        None => line,
                    }
                })
                .collect();
            paged(&lines, page, size)
        }
        Call::ConversationSearchDate { start, end, page } => {
            type Page = (
                i64,
                Vec<String>,
                Vec<String>,
                Vec<String>,
                Vec<String>,
                Vec<i64>,
            );
            let size = PAGE_SIZE;
            let (total, at, threads, role, content, seq): Page = spi::rows(
                include_str!("../../../sql/queries/tools_messages_between.sql"),
                &[
                    user.into(),
                    thread.into(),
                    start.to_string().into(),
                    end.to_string().into(),
                    ((page * size) as i64).into(),
                    (size as i64).into(),
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
                        r.get::<Vec<i64>>(6)?.unwrap_or_default(),
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
                    message_line(&at[i], other, seq[i], &role[i], &content[i])
                })
                .collect();
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            page_text(page, total as usize, size, &lines)
        }
        _ => unreachable!("the table sends only this family's calls here"),
    })
}
