//! Consent by chat (memory_core::tools::consent): memory_proposals lists what waits for the
//! user; memory_consent acts on the user's answer. The model's word is not the answer: the
//! user's own message in the call's thread, written since the change was proposed, is read
//! (memory_core::consent::answer) and decides; the decision is memory_approve's or
//! memory_reject's (src/ops/write.rs, src/ops/consent.rs), recorded as made by the user in
//! that thread and turn.

use super::{day, Cx};
use crate::pg::spi;
use memory_core::consent;
use memory_core::render;
use memory_core::tools::Call;
use pgrx::datum::TimestampWithTimeZone;

/// Proposals one memory_proposals answer lists (the oldest first: they expire first).
const LISTED: i64 = 20;

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    Ok(match c {
        Call::Proposals => {
            let rows = spi::rows(
                include_str!("../../../sql/queries/tools_proposals.sql"),
                &[cx.user.into(), LISTED.into()],
                "listing proposals",
                |r| {
                    Ok((
                        r.get::<String>(1)?.unwrap_or_default(),
                        r.get::<String>(2)?.unwrap_or_default(),
                        r.get::<String>(3)?.unwrap_or_default(),
                        r.get::<TimestampWithTimeZone>(4)?,
                    ))
                },
            );
            if rows.is_empty() {
                "No changes wait for the user's consent.".to_string()
            } else {
                rows.iter()
                    .map(|(id, category, text, expires)| {
                        format!(
                            "- {id} [{}] {} (expires {})",
                            render::inline(category),
                            render::inline(text),
                            expires.as_ref().map(day).unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
        Call::Consent { proposal, answer } => answer_proposal(cx, &proposal, &answer)?,
        _ => unreachable!("the table sends only this family's calls here"),
    })
}

/// memory_consent: the proposal decided as the user's message says, or a refusal saying why.
fn answer_proposal(cx: &Cx, id: &str, reported: &str) -> Result<String, String> {
    let thread = cx.thread.ok_or(
        "memory_consent needs the conversation in which the user answered: call it within a \
         thread",
    )?;
    let Some((status, policy, expired, proposed_at)) = spi::row(
        include_str!("../../../sql/queries/tools_proposal.sql"),
        &[cx.user.into(), id.into()],
        "reading a proposal",
        |r| {
            Ok((
                r.get::<String>(1)?.unwrap_or_default(),
                r.get::<String>(2)?.unwrap_or_default(),
                r.get::<bool>(3)?.unwrap_or(false),
                r.get::<TimestampWithTimeZone>(4)?,
            ))
        },
    ) else {
        return Err(format!(
            "There is no proposal {id}: call memory_proposals to see what waits."
        ));
    };
    if policy == "flag" {
        return Err(
            "This change was held by screening (it may hold a secret): only the application can \
             decide it, not a chat."
                .into(),
        );
    }
    if status != "pending" {
        return Err(format!("This proposal is already {status}."));
    }
    if expired {
        return Err("This proposal has expired; the change can be proposed again.".into());
    }
    // The user's messages in this thread since the change was proposed, newest first.
    let said: Vec<(i64, String)> = spi::rows(
        include_str!("../../../sql/queries/tools_user_answers.sql"),
        &[cx.user.into(), thread.into(), proposed_at.into()],
        "reading the user's answer",
        |r| {
            Ok((
                r.get::<i64>(1)?.unwrap_or(0),
                r.get::<String>(2)?.unwrap_or_default(),
            ))
        },
    );
    let Some((turn, message)) = consent::quoted_message(reported, &said) else {
        return Err(
            "The user has not answered in this conversation since the change was proposed: ask \
             them, and record their answer when they give it."
                .into(),
        );
    };
    let Some(yes) = consent::answer(message) else {
        return Err(format!(
            "The user's message (turn {turn}) does not clearly say yes or no: ask them plainly."
        ));
    };
    if consent::answer(reported).is_some_and(|r| r != yes) {
        return Err(format!(
            "The user's message (turn {turn}) says {}, not what you reported: record what the \
             user said.",
            if yes { "yes" } else { "no" }
        ));
    }
    let by = format!("user in thread {thread}, turn {turn}");
    Ok(if yes {
        crate::ops::write::approve(id, Some(by));
        "Approved by the user: the change is saved to memory.".to_string()
    } else {
        crate::ops::consent::reject(id, Some(by));
        "Rejected by the user: nothing is changed.".to_string()
    })
}
