//! The delta header (docs/design.md "Delta header"): what changed in a thread's memories since
//! the revision a caller (or the thread's last header) saw, rendered by `memory_core::delta`.

use crate::pg::spi;
use memory_core::delta::{self, Change};

/// Changes of the thread after `since` as the header renders them, restricted to what the
/// caller may see (an agent's header must not leak categories its allowlist hides), and the
/// first revision the change log still has after `since` (before that filter).
fn changes(
    user: &str,
    thread: &str,
    since: i64,
    categories: Option<&[String]>,
) -> (Vec<Change>, Option<i64>) {
    let all = spi::rows(
        include_str!("../../sql/queries/delta_changes.sql"),
        &[user.into(), thread.into(), since.into()],
        "reading the change log",
        |r| {
            Ok(Change {
                rev: r.get::<i64>(1)?.unwrap_or(0),
                memory_id: r.get::<String>(2)?.unwrap_or_default(),
                event: r.get::<String>(3)?.unwrap_or_default(),
                category: r.get::<String>(4)?,
                text: r.get::<String>(5)?.unwrap_or_default(),
                importance: r.get::<i64>(6)?,
            })
        },
    );
    let first = all.first().map(|c| c.rev);
    let visible = all
        .into_iter()
        .filter(|ch| match categories {
            None => true,
            Some(allowed) => ch.category.as_ref().is_some_and(|c| allowed.contains(c)),
        })
        .collect();
    (visible, first)
}

/// The delta header for a thread since `since_rev` (or since what was last reported to it),
/// with the thread's revision; records what was reported.
pub fn header(
    user: &str,
    thread: &str,
    since_rev: Option<i64>,
    categories: Option<&[String]>,
) -> (Option<String>, i64) {
    let (revision, reported) = spi::row(
        "SELECT revision, reported_rev FROM memory.threads WHERE user_id = $1 AND thread_id = $2",
        &[user.into(), thread.into()],
        "reading a thread's revision",
        |r| Ok((r.get::<i64>(1)?.unwrap_or(0), r.get::<i64>(2)?.unwrap_or(0))),
    )
    .unwrap_or((0, 0));
    let since = since_rev.unwrap_or(reported);
    let header = if revision > since {
        let (visible, first) = changes(user, thread, since, categories);
        if delta::pruned(since, revision, first) {
            Some(delta::pruned_header(since))
        } else {
            delta::header(since, &visible)
        }
    } else {
        None
    };
    let header = match crate::ops::consent::header_line(user) {
        Some(line) => Some(delta::with_line(header, since, &line)),
        None => header,
    };
    if revision > reported {
        spi::run(
            "UPDATE memory.threads SET reported_rev = greatest(reported_rev, $3) WHERE user_id = $1 AND thread_id = $2",
            &[user.into(), thread.into(), revision.into()],
            "recording the reported revision",
        );
    }
    (header, revision)
}

/// memory_delta: the thread's header since `since` alone (empty when nothing changed).
pub fn for_thread(thread: &str, since: i64) -> String {
    let user = crate::pg::lookup::owner(crate::pg::lookup::Owned::Thread, thread);
    header(&user, thread, Some(since), None)
        .0
        .unwrap_or_default()
}
