//! The summaries tool (memory_core::tools::summaries): memory_summary reads one summary the
//! worker keeps, or lists them, within the categories the agent may read
//! (src/ops/summaries.rs `readable`).

use super::Cx;
use crate::ops::{query, summaries};
use memory_core::render;
use memory_core::tools::Call;

pub(super) fn run(cx: &Cx, c: Call) -> Result<String, String> {
    let Call::Summary { name } = c else {
        unreachable!("the table sends only this family's calls here")
    };
    let allowed = query::allowed_categories(
        cx.user,
        cx.agent.categories.is_some().then_some(cx.agent_id),
        None,
    );
    let all = summaries::readable(cx.user, None, allowed.as_deref());
    let Some(name) = name else {
        return Ok(if all.is_empty() {
            "No summaries are written yet.".to_string()
        } else {
            all.iter()
                .map(|(n, q, _, day, _)| {
                    format!(
                        "- {}: {} (written {day})",
                        render::inline(n),
                        render::inline(q)
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        });
    };
    match all.iter().find(|s| s.0 == name) {
        Some((n, _, answer, day, stale)) => Ok(format!(
            "{} (written {day}{}): {}",
            render::inline(n),
            if *stale {
                "; memories it rests on changed since, a new version is on its way"
            } else {
                ""
            },
            render::inline(answer)
        )),
        None => Err(format!(
            "No summary \"{}\" is written yet.{}",
            render::inline(&name),
            if all.is_empty() {
                String::new()
            } else {
                format!(
                    " There are: {}.",
                    all.iter()
                        .map(|s| render::inline(&s.0).into_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        )),
    }
}
