//! The memory delta header (docs/design.md "Delta header"): the first lines of a retrieval, telling the agent what
//! changed in its memory since the revision it last saw. At most three bullets, each field
//! rendered by crate::render's rule.

use crate::render;

/// One change-log row, as the header needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub rev: i64,
    pub memory_id: String,
    pub event: String,
    pub category: Option<String>,
    pub text: String,
    pub importance: Option<i64>,
}

/// docs/design.md "Delta header": "max 3 bullets".
pub const MAX_BULLETS: usize = 3;

/// The change events that are about memories (message events bump revisions but are not news).
pub fn is_memory_event(event: &str) -> bool {
    matches!(
        event,
        "created" | "updated" | "merged" | "deleted" | "soft_deleted" | "restored" | "superseded"
    )
}

/// `+created: [Personal] Preferred name is Ana (imp=2)`, in the notation of docs/design.md "Delta header".
pub fn bullet(c: &Change) -> String {
    let mark = match c.event.as_str() {
        "created" => "+created",
        "updated" => "↑updated",
        "merged" => "↔merged",
        "deleted" => "-deleted",
        "soft_deleted" => "~soft_deleted",
        "restored" => "↺restored",
        "superseded" => "⤳superseded",
        other => other,
    };
    let imp = match (c.event.as_str(), c.importance) {
        ("created", Some(i)) => format!(" (imp={i})"),
        _ => String::new(),
    };
    format!(
        "- {mark}: {}{imp}",
        render::bullet(None, c.category.as_deref(), &c.text)
    )
}

/// The header for the changes after `since_rev` (given in revision order), or `None` when no
/// memory changed. Several changes of one memory show as its latest; the three most recent
/// memories are listed, oldest first, so the header reads as a timeline.
pub fn header(since_rev: i64, changes: &[Change]) -> Option<String> {
    let mut latest: Vec<&Change> = Vec::new();
    for c in changes.iter().filter(|c| is_memory_event(&c.event)) {
        latest.retain(|x| x.memory_id != c.memory_id);
        latest.push(c);
    }
    if latest.is_empty() {
        return None;
    }
    let shown = &latest[latest.len().saturating_sub(MAX_BULLETS)..];
    let mut s = format!("Memory updates since rev {since_rev}:");
    for c in shown {
        s.push('\n');
        s.push_str(&bullet(c));
    }
    Some(s)
}

/// The line about pending consent proposals (docs/api.md "Consent"): the newest one and how
/// many wait. `- ?proposed: [city] Sam moved to Denver. (awaiting consent; 2 pending)`.
pub fn proposal_line(pending: i64, category: &str, text: &str) -> String {
    format!(
        "- ?proposed: {} (awaiting consent; {pending} pending)",
        render::bullet(None, Some(category), text)
    )
}

/// `header` (or a bare heading when nothing changed) with `line` under it: pending proposals
/// are news every time until they are decided.
pub fn with_line(header: Option<String>, since_rev: i64, line: &str) -> String {
    let head = header.unwrap_or_else(|| format!("Memory updates since rev {since_rev}:"));
    format!("{head}\n{line}")
}

/// The header when the change log no longer holds every change after `since_rev` (the purge
/// drops rows past `memory_ext.change_log_days`): listing what is left would pass part of the
/// story off as all of it.
pub fn pruned_header(since_rev: i64) -> String {
    format!("Memory updates since rev {since_rev}: too many changes since rev {since_rev} to list")
}

/// Whether the change log lost changes after `since_rev`: revisions are gapless, so the first
/// row after `since_rev` must be `since_rev + 1` (when the thread has moved on at all).
pub fn pruned(since_rev: i64, revision: i64, first_rev: Option<i64>) -> bool {
    revision > since_rev && first_rev.is_none_or(|f| f > since_rev + 1)
}

#[cfg(test)]
mod proposal_tests {
    use super::*;

    #[test]
    fn pending_proposals_add_one_line() {
        let l = proposal_line(2, "city", "Sam moved to Denver.");
        assert_eq!(
            l,
            "- ?proposed: [city] Sam moved to Denver. (awaiting consent; 2 pending)"
        );
        assert_eq!(
            with_line(None, 4, &l),
            format!("Memory updates since rev 4:\n{l}")
        );
        assert_eq!(with_line(Some("H".into()), 4, "x"), "H\nx");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(
        rev: i64,
        id: &str,
        event: &str,
        cat: Option<&str>,
        text: &str,
        imp: Option<i64>,
    ) -> Change {
        Change {
            rev,
            memory_id: id.into(),
            event: event.into(),
            category: cat.map(Into::into),
            text: text.into(),
            importance: imp,
        }
    }

    #[test]
    fn seed_format() {
        let h = header(
            41,
            &[
                ch(
                    42,
                    "a",
                    "created",
                    Some("Personal"),
                    "Preferred name is Ana",
                    Some(2),
                ),
                ch(43, "b", "updated", Some("Goals"), "Ship v1 by Sep", Some(3)),
                ch(
                    44,
                    "c",
                    "merged",
                    None,
                    "Combined 2 notes about lactose intolerance",
                    None,
                ),
            ],
        )
        .unwrap();
        assert_eq!(
            h,
            "Memory updates since rev 41:\n- +created: [Personal] Preferred name is Ana (imp=2)\n- ↑updated: [Goals] Ship v1 by Sep\n- ↔merged: Combined 2 notes about lactose intolerance"
        );
    }

    #[test]
    fn at_most_three_latest_per_memory() {
        let cs = vec![
            ch(1, "a", "created", None, "A", Some(1)),
            ch(2, "b", "created", None, "B", Some(1)),
            ch(3, "message", "message_added", None, "", None),
            ch(4, "c", "created", None, "C", Some(1)),
            ch(5, "a", "soft_deleted", None, "A", Some(1)),
            ch(6, "d", "restored", None, "D", Some(1)),
        ];
        let h = header(0, &cs).unwrap();
        assert_eq!(h.lines().count(), 4);
        assert!(h.ends_with("- ~soft_deleted: A\n- ↺restored: D"), "{h}");
        assert!(!h.contains("B"));
        assert_eq!(
            header(0, &[ch(1, "m", "message_added", None, "", None)]),
            None
        );
        assert_eq!(header(0, &[]), None);
    }

    #[test]
    fn a_superseded_memory_is_news() {
        let cs = vec![
            ch(1, "a", "created", Some("home"), "In Boston.", Some(2)),
            ch(2, "b", "created", Some("home"), "In Denver.", Some(2)),
            ch(3, "a", "superseded", Some("home"), "In Boston.", Some(2)),
        ];
        let h = header(1, &cs).unwrap();
        assert!(h.ends_with("- ⤳superseded: [home] In Boston."), "{h}");
        assert!(is_memory_event("superseded"));
    }

    #[test]
    fn a_pruned_log_says_too_many_changes() {
        assert!(!pruned(41, 41, None));
        assert!(!pruned(41, 44, Some(42)));
        assert!(pruned(41, 44, Some(43)));
        assert!(pruned(41, 44, None));
        assert_eq!(
            pruned_header(7),
            "Memory updates since rev 7: too many changes since rev 7 to list"
        );
    }
}
