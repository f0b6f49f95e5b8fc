//! The recall tools (memory_core::tools::conversation): conversation_search over the thread (or
//! every thread of the agent), conversation_search_date a page of messages between two days.

use super::{message_line, minute, page_text, paged, Cx, MAX_RESULTS};
use crate::ops::recall;
use crate::pg::{limits, spi};
use memory_core::tools::Call;
use memory_core::tools::PAGE_SIZE;

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Cx {
        user,
        agent_id,
        thread,
        ..
    } = *cx;
    Ok(match c {
        Call::ConversationSearch { query, page, size } => {
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
                    message_line(&minute(&h.created_at), across, h.seq, &h.role, &h.content)
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
