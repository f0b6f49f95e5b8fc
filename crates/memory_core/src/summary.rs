//! Summaries without an LLM, and the prompts for when there is one: compaction's summary
//! message (docs/design.md "Compaction") and write-after-run episodes (docs/design.md "Episodes").
//!
//! # The extractive summary
//! Sentences are scored by how much of the conversation's vocabulary they carry (the sum of the
//! log-frequencies of their distinct content words, divided by a length damping so that one run-on
//! sentence cannot take the whole budget), picked best first while the word budget lasts, and
//! printed in their original order. It is deterministic and cheap, and it never invents
//! anything: every word comes from the messages.

use std::collections::{BTreeMap, BTreeSet};

/// docs/design.md "Compaction": "Keep summary under 100 words".
pub const SUMMARY_WORDS: usize = 100;

const EXTRA_STOP: &[&str] = &[
    "can", "will", "would", "could", "should", "what", "which", "who", "when", "where", "how",
    "there", "here", "then", "than", "all", "any", "some", "about", "into", "out", "up", "if",
    "also", "yes", "no", "ok", "okay", "sure", "thanks", "thank", "please", "let", "get", "got",
    "us", "them", "him", "one", "im", "ll", "ve", "re", "don", "t", "m", "d", "am", "being",
    "these", "those", "now", "too", "more", "most", "much", "many", "like", "well", "oh", "hi",
    "hello", "hey", "know", "think", "want", "need", "going", "go", "make", "sounds", "great",
    "again", "because", "still", "after", "before", "while", "only", "even", "each", "other",
    "every", "already", "done",
];

/// Content words of `text`: lower-cased, stop words out, at least two characters.
pub fn words(text: &str) -> Vec<String> {
    crate::consolidate::content_words(text)
        .into_iter()
        .filter(|w| w.chars().count() >= 2 && !EXTRA_STOP.contains(&w.as_str()))
        .collect()
}

/// The content words of `text` by their first four letters: what "the same word" means when a
/// model's text is held to its source ("lives" and "live", "studies" and "studying"). Coarse
/// on purpose: it is to catch what the source does not say at all, not to judge paraphrase.
pub fn stems(text: &str) -> std::collections::HashSet<String> {
    words(text)
        .into_iter()
        .map(|w| w.chars().take(4).collect())
        .collect()
}

/// The share of `text`'s content words (by [`stems`]) found in `source`; 1 for a text with none.
pub fn grounded_share(text: &str, source: &std::collections::HashSet<String>) -> f64 {
    let w = stems(text);
    if w.is_empty() {
        return 1.0;
    }
    w.iter().filter(|s| source.contains(*s)).count() as f64 / w.len() as f64
}

/// Sentences of `text`: split after `.`, `!`, `?` followed by white space, and at line breaks.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut cur = String::new();
        let chars: Vec<char> = line.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            cur.push(c);
            // A sentence ends at `!` or `?` before white space, and at `.` before white space and
            // a capital, digit or quote (or the end of the line): "e.g. this" stays one.
            let next = chars.get(i + 1);
            let after = chars[i + 1..].iter().find(|n| !n.is_whitespace());
            let ends = matches!(c, '.' | '!' | '?')
                && next.is_none_or(|n| n.is_whitespace())
                && (c != '.'
                    || after.is_none_or(|n| {
                        n.is_uppercase()
                            || n.is_ascii_digit()
                            || matches!(n, '"' | '\'' | '`' | '(' | '[')
                    }));
            if ends {
                let s = crate::text::normalize(&cur);
                if !s.is_empty() {
                    out.push(s);
                }
                cur.clear();
            }
        }
        let s = crate::text::normalize(&cur);
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

/// Cuts `text` to at most `max` words, ending with `…` when it cut.
pub fn limit_words(text: &str, max: usize) -> String {
    let w: Vec<&str> = text.split_whitespace().collect();
    if w.len() <= max {
        w.join(" ")
    } else {
        let mut s = w[..max].join(" ");
        s.push('…');
        s
    }
}

pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// A unit of conversation for the extractive summary: who said it, and what.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Printed before its sentences (`User`, `Assistant`, `Earlier`), or empty.
    pub label: String,
    pub text: String,
}

/// Term frequencies over all turns.
fn vocabulary(turns: &[Turn]) -> BTreeMap<String, usize> {
    let mut tf = BTreeMap::new();
    for t in turns {
        for w in words(&t.text) {
            *tf.entry(w).or_insert(0) += 1;
        }
    }
    tf
}

/// The best sentences of `turns` within `max_words` (labels included), in conversation order,
/// each as `Label: sentence`. `keep_first` sentences of the first turn are always kept (the
/// previous summary, when compaction folds it in).
pub fn extract(turns: &[Turn], max_words: usize, keep_first: usize) -> Vec<String> {
    extract_focused(turns, max_words, keep_first, &[])
}

/// [`extract`], steered by `focus`'s content words (compaction's "keep what matters for X",
/// the tool's `focus`): a sentence's score is multiplied by one plus twice the share of the focus
/// words it carries, so the sentences about the focus are picked first while the rest still
/// fill what budget is left.
pub fn extract_focused(
    turns: &[Turn],
    max_words: usize,
    keep_first: usize,
    focus: &[String],
) -> Vec<String> {
    let tf = vocabulary(turns);
    // (turn, sentence index within all, text with label, score)
    let mut cands: Vec<(usize, String, f64)> = Vec::new();
    let mut forced = Vec::new();
    for (ti, t) in turns.iter().enumerate() {
        for (si, s) in sentences(&t.text).into_iter().enumerate() {
            let line = if t.label.is_empty() {
                s.clone()
            } else {
                format!("{}: {s}", t.label)
            };
            let distinct: BTreeSet<String> = words(&s).into_iter().collect();
            let raw: f64 = distinct
                .iter()
                .map(|w| (1.0 + *tf.get(w).unwrap_or(&0) as f64).ln())
                .sum();
            let mut score = raw / (1.0 + (word_count(&s) as f64 / 25.0));
            if !focus.is_empty() {
                let hit = focus.iter().filter(|w| distinct.contains(*w)).count();
                score *= 1.0 + 2.0 * hit as f64 / focus.len() as f64;
            }
            let idx = cands.len();
            if ti == 0 && si < keep_first {
                forced.push(idx);
            }
            cands.push((idx, line, score));
        }
    }
    let mut chosen: BTreeSet<usize> = BTreeSet::new();
    let mut used = 0;
    for &i in &forced {
        let n = word_count(&cands[i].1);
        if used + n <= max_words {
            chosen.insert(i);
            used += n;
        }
    }
    let mut order: Vec<usize> = (0..cands.len()).filter(|i| !chosen.contains(i)).collect();
    order.sort_by(|&a, &b| cands[b].2.total_cmp(&cands[a].2).then(a.cmp(&b)));
    let word_sets: Vec<BTreeSet<String>> = cands
        .iter()
        .map(|c| words(&c.1).into_iter().collect())
        .collect();
    for i in order {
        if cands[i].2 <= 0.0 {
            continue;
        }
        // A sentence saying again what a chosen one said (same content words, mostly) adds
        // nothing: conversations repeat themselves, summaries should not.
        let repeats = chosen.iter().any(|&j| {
            let (a, b) = (&word_sets[i], &word_sets[j]);
            let inter = a.intersection(b).count() as f64;
            let union = a.union(b).count().max(1) as f64;
            inter / union >= 0.6
        });
        if repeats {
            continue;
        }
        let n = word_count(&cands[i].1);
        if used + n <= max_words {
            chosen.insert(i);
            used += n;
        }
    }
    if chosen.is_empty() {
        // Nothing fits whole: the best sentence, cut to the budget.
        if let Some(best) = cands.iter().max_by(|a, b| a.2.total_cmp(&b.2)) {
            return vec![limit_words(&best.1, max_words)];
        }
    }
    chosen.into_iter().map(|i| cands[i].1.clone()).collect()
}

/// The most frequent content words of `turns`, most frequent first (ties alphabetical).
pub fn keywords(turns: &[Turn], n: usize) -> Vec<String> {
    let tf = vocabulary(turns);
    let mut v: Vec<(String, usize)> = tf
        .into_iter()
        .filter(|(w, _)| !w.chars().all(|c| c.is_ascii_digit()))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.into_iter().take(n).map(|(w, _)| w).collect()
}

/// Compaction's summary (docs/design.md "Core memory blocks") when no LLM is configured: at most [`SUMMARY_WORDS`] words.
/// `previous` is the summary being folded in, if any.
pub fn compaction_extract(previous: Option<&str>, turns: &[Turn], focus: Option<&str>) -> String {
    let mut all = Vec::new();
    let mut keep = 0;
    if let Some(p) = previous {
        let p = p.trim();
        if !p.is_empty() {
            // The older summary keeps its first sentence: the thread's beginning stays visible.
            keep = 1;
            // No label: its sentences already carry theirs.
            all.push(Turn {
                label: String::new(),
                text: p.to_string(),
            });
        }
    }
    all.extend(turns.iter().cloned());
    let focus = focus.map(words).unwrap_or_default();
    limit_words(
        &extract_focused(&all, SUMMARY_WORDS, keep, &focus).join(" "),
        SUMMARY_WORDS,
    )
}

/// Most key facts a summary lists.
pub const MAX_KEY_FACTS: usize = 8;
/// Longest key fact, in words.
const KEY_FACT_WORDS: usize = 30;

/// A summary's key facts (`key_facts`): the previous summary's, then the best
/// sentences of the folded turns (by [`extract_focused`]'s score, the focus first), each a
/// sentence as it was said with its speaker, at most [`MAX_KEY_FACTS`]. A fact saying again
/// what an earlier one said is left out. The newest facts win when there are too many: the
/// oldest are in the evicted summaries (archival memory). A sentence the summary's prose
/// already quotes (the extractive summary is made of such sentences) is not repeated: the facts
/// then carry what the prose's 100 words had no room for.
pub fn key_facts(
    previous: &[String],
    turns: &[Turn],
    focus: Option<&str>,
    prose: &str,
) -> Vec<String> {
    let focus = focus.map(words).unwrap_or_default();
    // Questions and one-word answers are not facts.
    let said: Vec<Turn> = turns
        .iter()
        .map(|t| Turn {
            label: t.label.clone(),
            text: sentences(&t.text)
                .into_iter()
                .filter(|x| !x.ends_with('?') && word_count(x) >= 4)
                .collect::<Vec<_>>()
                .join("\n"),
        })
        .filter(|t| !t.text.is_empty())
        .collect();
    let fresh = extract_focused(&said, MAX_KEY_FACTS * KEY_FACT_WORDS / 2, 0, &focus);
    let mut out: Vec<String> = vec![];
    let mut seen: Vec<BTreeSet<String>> = vec![];
    for f in previous.iter().chain(fresh.iter()) {
        if prose.contains(f.as_str()) {
            continue;
        }
        let f = limit_words(f, KEY_FACT_WORDS);
        let w: BTreeSet<String> = words(&f).into_iter().collect();
        let repeats = seen.iter().any(|s| {
            let inter = s.intersection(&w).count() as f64;
            inter / s.union(&w).count().max(1) as f64 >= 0.6
        });
        if !repeats && !w.is_empty() {
            seen.push(w);
            out.push(f);
        }
    }
    let n = out.len();
    out.split_off(n.saturating_sub(MAX_KEY_FACTS))
}

/// What a compaction summary covers: the first and last message folded (`seq`;
/// the last is the "last summarised message"), the days they were sent, and how many messages
/// have left the context under it, counting those earlier summaries had folded.
#[derive(Debug, Clone, PartialEq)]
pub struct Covered {
    pub from_seq: i64,
    pub to_seq: i64,
    pub date_from: String,
    pub date_to: String,
    pub archived: i64,
}

/// The text of a summary message: a first line saying what it is and what it covers (so a model
/// knows where the rest went), the summary, then its key facts one per line. Every field from
/// the conversation is already text of the conversation; the caller renders it (crate::render).
pub fn summary_message(c: &Covered, summary: &str, facts: &[String]) -> String {
    let days = if c.date_from == c.date_to {
        c.date_from.clone()
    } else {
        format!("{} to {}", c.date_from, c.date_to)
    };
    let mut out = format!(
        "{}{summary}",
        summary_note(c.archived, c.from_seq, c.to_seq, &days)
    );
    if !facts.is_empty() {
        out.push_str("\nKey facts:");
        for f in facts {
            out.push_str("\n- ");
            out.push_str(f);
        }
    }
    out
}

/// The line that opens a summary message.
fn summary_note(n: i64, first: i64, last: i64, days: &str) -> String {
    format!(
        "Summary of {n} earlier messages (seq {first}-{last}, {days}; still searchable with \
         conversation_search): "
    )
}

/// A summary message's prose alone: without its opening line and its key facts (what is
/// folded into the next summary, and what an evicted summary keeps in archival memory).
pub fn summary_prose(content: &str) -> &str {
    let body = match content.find("conversation_search): ") {
        Some(p) if content.starts_with("Summary of ") => {
            &content[p + "conversation_search): ".len()..]
        }
        _ => content,
    };
    match body.find("\nKey facts:") {
        Some(p) => &body[..p],
        None => body,
    }
    .trim()
}

/// A compaction summary that keeps every placeholder of what it summarised: those the summary
/// does not already quote go on a line of their own after it, since a summary that drops one
/// loses the only way back to its stored detail (docs/design.md "Compaction"). The line is
/// outside the summary's word limit.
pub fn keep_placeholders(summary: &str, placeholders: &[String]) -> String {
    let missing: Vec<&str> = placeholders
        .iter()
        .filter(|p| !summary.contains(p.as_str()))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        summary.to_string()
    } else {
        format!("{summary}\nStored details: {}", missing.join(" "))
    }
}

/// The system prompt of Letta's `SummarizeConversation` (docs/design.md "Compaction").
pub const COMPACTION_PROMPT: &str = "Summarize the conversation to allow resumption without disruption. \
Keep summary under 100 words. Include:\n\
1. Task/conversational overview\n\
2. Current state (completed work, files, resources)\n\
3. Next steps\n\
Write from the perspective of the AI (first person). If the conversation starts with an earlier summary, fold it in. \
Only output the summary, do NOT include anything else in your output.";

/// The transcript an LLM summarises: one `role: content` paragraph per message, each message
/// cut to `max_chars` characters so that one huge tool output cannot crowd out the rest.
/// At most `max_total` characters in all: beyond that its start is dropped, since the most
/// recent messages matter most (and the summarising model has a context of its own).
pub fn transcript(
    previous: Option<&str>,
    turns: &[Turn],
    max_chars: usize,
    max_total: usize,
) -> String {
    let mut s = String::new();
    if let Some(p) = previous {
        s.push_str("Earlier summary: ");
        s.push_str(p.trim());
        s.push_str("\n\n");
    }
    for t in turns {
        let text: String = t.text.chars().take(max_chars).collect();
        s.push_str(&t.label);
        s.push_str(": ");
        s.push_str(text.trim());
        s.push_str("\n\n");
    }
    let n = s.chars().count();
    if n > max_total {
        s = s.chars().skip(n - max_total).collect();
    }
    s
}

/// The label a message's role gets in summaries and transcripts.
pub fn role_label(role: &str) -> &'static str {
    match role {
        "user" => "User",
        "assistant" => "Assistant",
        "tool" => "Tool",
        _ => "System",
    }
}

/// Longest project label, in characters (a directory name under projects/).
pub const PROJECT_CHARS: usize = 64;

/// The project a run names with the explicit label `project: <name>` (docs/design.md
/// "Episodes"): the last label in the user's and system's messages, lower-cased, as a
/// directory name (letters, digits, `-`, `_`, `.`). Only those roles: a tool's output or the
/// model's reply quoting "project: x" does not move the user's episode.
pub fn project_label(turns: &[(&str, &str)]) -> Option<String> {
    let mut found = None;
    for (role, text) in turns {
        if *role != "user" && *role != "system" {
            continue;
        }
        let lower = text.to_lowercase();
        let mut from = 0;
        while let Some(i) = lower[from..].find("project:") {
            let at = from + i;
            from = at + "project:".len();
            let before = lower[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-') {
                continue;
            }
            let name: String = lower[from..]
                .trim_start_matches([' ', '\t'])
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
                .take(PROJECT_CHARS)
                .collect();
            let name = name.trim_end_matches('.').trim_start_matches('.');
            if !name.is_empty() {
                found = Some(name.to_string());
            }
        }
    }
    found
}

/// An episode (docs/design.md "Episodes") before rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Episode {
    pub title: String,
    pub date: String,
    pub topic: String,
    pub outcome: String,
    pub refs: String,
    pub tags: Vec<String>,
    pub summary: Vec<String>,
}

/// Longest title, topic and outcome in an episode file, in characters.
pub const EPISODE_FIELD_CHARS: usize = 120;
pub const EPISODE_BULLETS: usize = 6;
pub const EPISODE_BULLET_WORDS: usize = 40;

fn one_line(s: &str, max: usize) -> String {
    let s = crate::text::normalize(s);
    if s.chars().count() <= max {
        s
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// The deterministic episode of a run: title from the first user message, outcome from the
/// last assistant message, topic and tags from the most frequent content words, and the best
/// sentences as bullets.
pub fn episode_extract(turns: &[Turn], date: &str, refs: &str) -> Episode {
    // The title is the user's first real request: greetings ("Hi!") are skipped for the first
    // user sentence with at least two content words.
    let user_sentences: Vec<String> = turns
        .iter()
        .filter(|t| t.label == "User")
        .chain(turns.first())
        .flat_map(|t| sentences(&t.text))
        .collect();
    let first_user = user_sentences
        .iter()
        .find(|s| words(s).len() >= 2)
        .or(user_sentences.first())
        .cloned()
        .unwrap_or_default();
    let last_assistant = turns
        .iter()
        .rev()
        .find(|t| t.label == "Assistant")
        .map(|t| sentences(&t.text).into_iter().next().unwrap_or_default())
        .unwrap_or_else(|| "No assistant reply recorded.".into());
    let kw = keywords(turns, 5);
    let topic = if kw.is_empty() {
        "conversation".into()
    } else {
        kw.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
    };
    let mut bullets: Vec<String> = extract(turns, EPISODE_BULLETS * EPISODE_BULLET_WORDS / 2, 0)
        .into_iter()
        .map(|b| limit_words(&b, EPISODE_BULLET_WORDS))
        .collect();
    bullets.truncate(EPISODE_BULLETS);
    Episode {
        title: one_line(
            if first_user.is_empty() {
                "Conversation"
            } else {
                &first_user
            },
            EPISODE_FIELD_CHARS,
        ),
        date: date.into(),
        topic: one_line(&topic, EPISODE_FIELD_CHARS),
        outcome: one_line(&last_assistant, EPISODE_FIELD_CHARS),
        refs: refs.into(),
        tags: kw,
        summary: bullets,
    }
}

/// The episode's markdown block (docs/design.md "Episodes").
pub fn render_episode(e: &Episode) -> String {
    let tags = serde_json::to_string(&e.tags).unwrap_or_else(|_| "[]".into());
    let tags = tags.replace("\",\"", "\", \"");
    let mut s = format!(
        "# Episode: {}\nDate: {}\nTopic: {}\nOutcome: {}\nRefs: {}\nTags: {}\n\nSummary:\n",
        e.title, e.date, e.topic, e.outcome, e.refs, tags
    );
    for b in &e.summary {
        s.push_str("- ");
        s.push_str(b);
        s.push('\n');
    }
    s
}

/// One episode as a project roll-up lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct RollupEntry {
    pub date: String,
    pub title: String,
    pub outcome: String,
    pub path: String,
}

/// Lines of earlier weeks a roll-up keeps: the summary stays a page, the episodes stay whole.
pub const ROLLUP_EARLIER_LINES: usize = 60;

/// A line `Name: value` of an episode file (the template of [`render_episode`]).
pub fn episode_field(content: &str, name: &str) -> Option<String> {
    content
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(": ").map(str::trim))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// The title of an episode file (`# Episode: <title>`).
pub fn episode_title(content: &str) -> Option<String> {
    content
        .lines()
        .find_map(|l| l.strip_prefix("# Episode: ").map(str::trim))
        .map(str::to_string)
}

/// `projects/<p>/summary.md` (docs/design.md "Episodes"): the week's episodes, newest first,
/// each with its outcome and file, then what earlier roll-ups said (the previous summary's
/// entries, at most [`ROLLUP_EARLIER_LINES`] lines).
pub fn render_rollup(
    project: &str,
    today: &str,
    week: &[RollupEntry],
    previous: Option<&str>,
) -> String {
    let mut s = format!("# Project: {project}\nUpdated: {today}\n\n## Latest episodes\n");
    let mut entries: Vec<&RollupEntry> = week.iter().collect();
    entries.sort_by(|a, b| b.date.cmp(&a.date).then(a.path.cmp(&b.path)));
    for e in entries {
        s.push_str(&format!("- {} {}", e.date, e.title.trim_end_matches('.')));
        if !e.outcome.is_empty() {
            s.push_str(&format!(" — {}", e.outcome));
        }
        s.push_str(&format!(" ({})\n", e.path));
    }
    let earlier: Vec<&str> = previous
        .map(|p| {
            p.lines()
                .skip_while(|l| !l.starts_with("## "))
                .filter(|l| l.starts_with("- "))
                .take(ROLLUP_EARLIER_LINES)
                .collect()
        })
        .unwrap_or_default();
    if !earlier.is_empty() {
        s.push_str("\n## Earlier\n");
        for l in earlier {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

/// The LLM's instructions for an episode: a JSON object we render into the template ourselves,
/// so the file's layout never depends on the model's formatting.
pub const EPISODE_PROMPT: &str = "You write short episodic memories of an assistant's work session. \
Read the conversation and answer with a JSON object with exactly these keys: \
\"title\" (at most 10 words), \"topic\" (a few words), \"outcome\" (one sentence in the past tense: what was decided or achieved), \
\"tags\" (3 to 5 lower-case keywords), \"summary\" (2 to 6 bullet strings: key decisions, facts, open questions). \
Use only facts from the conversation.";

/// Reads the LLM's episode answer; `None` when it is not the JSON asked for (the caller falls
/// back to [`episode_extract`]).
pub fn parse_episode_answer(answer: &str, date: &str, refs: &str) -> Option<Episode> {
    let start = answer.find('{')?;
    let end = answer.rfind('}')?;
    let v: serde_json::Value = serde_json::from_str(answer.get(start..=end)?).ok()?;
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::trim);
    let title = s("title").filter(|t| !t.is_empty())?;
    let summary: Vec<String> = v
        .get("summary")?
        .as_array()?
        .iter()
        .filter_map(|b| b.as_str())
        .map(|b| limit_words(b.trim().trim_start_matches("- "), EPISODE_BULLET_WORDS))
        .filter(|b| !b.is_empty())
        .take(EPISODE_BULLETS)
        .collect();
    if summary.is_empty() {
        return None;
    }
    let tags: Vec<String> = v
        .get("tags")
        .and_then(|t| t.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str())
                .map(|x| one_line(&x.to_lowercase(), 40))
                .filter(|x| !x.is_empty())
                .take(8)
                .collect()
        })
        .unwrap_or_default();
    Some(Episode {
        title: one_line(title, EPISODE_FIELD_CHARS),
        date: date.into(),
        topic: one_line(s("topic").unwrap_or(""), EPISODE_FIELD_CHARS),
        outcome: one_line(s("outcome").unwrap_or(""), EPISODE_FIELD_CHARS),
        refs: refs.into(),
        tags,
        summary,
    })
}

/// The Layer-1 line an episode is indexed under as an episodic memory: the episodic writing
/// guard, as every episodic memory follows it — one or two sentences in the
/// past tense on what was discussed and what came of it, at most 280 characters. What the user
/// asked and what the assistant concluded are quoted as they were said (reported in the past
/// tense, never rewritten), so recall still matches their words.
pub fn episode_memory_text(e: &Episode) -> String {
    let quoted = |s: &str| s.trim().replace('"', "'");
    let mut s = format!(
        "On {} the user and the assistant discussed \"{}\".",
        e.date,
        quoted(&e.title)
    );
    if !e.outcome.trim().is_empty() {
        s.push_str(&format!(
            " The assistant concluded: \"{}\"",
            quoted(&e.outcome)
        ));
    }
    let s = one_line(&s, crate::text::MAX_SHORT_CHARS);
    // A cut inside a quote still closes it.
    if s.ends_with('…') && s.matches('"').count() % 2 == 1 {
        let mut t: String = s.chars().take(crate::text::MAX_SHORT_CHARS - 2).collect();
        t.push_str("…\"");
        return t;
    }
    s
}

#[cfg(test)]
mod project_tests {
    use super::project_label;

    #[test]
    fn an_explicit_label_in_the_users_words_names_the_project() {
        assert_eq!(
            project_label(&[("user", "Pause the ads. project: hdrpop")]),
            Some("hdrpop".into())
        );
        assert_eq!(
            project_label(&[("user", "Project: HDRPop-2, then"), ("user", "ok")]),
            Some("hdrpop-2".into())
        );
        // The last label wins; a tool's or the assistant's text does not count.
        assert_eq!(
            project_label(&[
                ("user", "project: a"),
                ("user", "actually project: b."),
                ("tool", "project: evil"),
                ("assistant", "project: c"),
            ]),
            Some("b".into())
        );
        for none in [
            "no label here",
            "subproject: x",
            "project: ../..",
            "project:",
        ] {
            assert_eq!(project_label(&[("user", none)]), None, "{none}");
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn compaction_keeps_every_placeholder() {
        use super::keep_placeholders;
        use crate::detail::placeholders;
        let turns = [
            "Ran it: [MemoryRef: cmd_npm_install - npm install] failed.",
            "See [MemoryRef: log_42 - build log] and again [MemoryRef: cmd_npm_install - npm install].",
            "An unclosed [MemoryRef: broken",
        ];
        let p = placeholders(&turns);
        assert_eq!(
            p,
            vec![
                "[MemoryRef: cmd_npm_install - npm install]".to_string(),
                "[MemoryRef: log_42 - build log]".to_string()
            ]
        );
        let s = keep_placeholders("I installed packages; the build failed.", &p);
        assert_eq!(
            s,
            "I installed packages; the build failed.\nStored details: [MemoryRef: cmd_npm_install - npm install] [MemoryRef: log_42 - build log]"
        );
        // One already quoted is not repeated; none missing: unchanged.
        let quoted = "npm failed, see [MemoryRef: log_42 - build log].";
        assert!(keep_placeholders(quoted, &p)
            .ends_with("Stored details: [MemoryRef: cmd_npm_install - npm install]"));
        assert_eq!(keep_placeholders("plain", &[]), "plain");
    }

    use super::*;

    fn t(label: &str, text: &str) -> Turn {
        Turn {
            label: label.into(),
            text: text.into(),
        }
    }

    #[test]
    fn sentence_split_and_word_limits() {
        assert_eq!(
            sentences("Hi there. It works!\nNext line e.g. v1.2 ok? yes"),
            vec!["Hi there.", "It works!", "Next line e.g. v1.2 ok?", "yes"]
        );
        assert_eq!(limit_words("a b c d", 3), "a b c…");
        assert_eq!(limit_words(" a  b ", 3), "a b");
        assert_eq!(word_count(" a b\nc "), 3);
    }

    #[test]
    fn extract_respects_budget_and_order() {
        let turns = vec![
            t("User", "I want to deploy the Postgres extension to staging. It uses pgvector."),
            t("Assistant", "Sure. The staging deploy needs the pgvector package and the extension built for Postgres 15."),
            t("User", "Great, thanks!"),
            t("Assistant", "Deploy to staging finished; the extension and pgvector are installed."),
        ];
        let out = extract(&turns, 40, 0);
        let words: usize = out.iter().map(|s| word_count(s)).sum();
        assert!(words <= 40, "{out:?}");
        assert!(out
            .iter()
            .all(|s| s.starts_with("User: ") || s.starts_with("Assistant: ")));
        assert!(!out.iter().any(|s| s.contains("Great, thanks")), "{out:?}");
        // Conversation order is kept: the deploy request comes before the finished deploy.
        let joined = out.join(" ");
        if let (Some(a), Some(b)) = (
            joined.find("I want to deploy"),
            joined.find("Deploy to staging finished"),
        ) {
            assert!(a < b, "{joined}");
        }
        // Same input, same output.
        assert_eq!(out, extract(&turns, 40, 0));
    }

    #[test]
    fn compaction_summary_is_bounded_and_folds_previous() {
        let long: Vec<Turn> = (0..60)
            .map(|i| t(if i % 2 == 0 { "User" } else { "Assistant" }, &format!("Message {i} talks about the migration of table number {i} to the new cluster in region eu-west.")))
            .collect();
        let s = compaction_extract(
            Some("Earlier we planned the cluster migration. Then other things."),
            &long,
            None,
        );
        assert!(word_count(&s) <= SUMMARY_WORDS, "{}", word_count(&s));
        assert!(
            s.starts_with("Earlier we planned the cluster migration."),
            "{s}"
        );
        // Repeated sentences are said once.
        let same: Vec<Turn> = (0..10)
            .map(|_| t("Assistant", "I moved the backup to 02:00."))
            .collect();
        assert_eq!(
            compaction_extract(None, &same, None),
            "Assistant: I moved the backup to 02:00."
        );
        let none = compaction_extract(None, &[t("User", "x")], None);
        assert!(word_count(&none) <= SUMMARY_WORDS);
        // A single sentence longer than the budget is cut, not dropped.
        let huge = compaction_extract(None, &[t("Tool", &"word ".repeat(500))], None);
        assert_eq!(word_count(&huge), SUMMARY_WORDS);
    }

    #[test]
    fn episodes_render_the_seed_template() {
        let turns = vec![
            t("User", "Can you fix the failing nightly backup job? It stopped on Tuesday."),
            t("Assistant", "The backup job failed because the disk was full. I removed old backups and the job runs again."),
        ];
        let e = episode_extract(&turns, "2026-01-17", "thread_id=t1, run_id=r9");
        assert_eq!(e.title, "Can you fix the failing nightly backup job?");
        let hi = episode_extract(
            &[
                t("User", "Hi! Can you help me plan a trip to Porto?"),
                t("Assistant", "Sure."),
            ],
            "d",
            "r",
        );
        assert_eq!(hi.title, "Can you help me plan a trip to Porto?");
        assert!(e.outcome.starts_with("The backup job failed"));
        assert!(e.tags.contains(&"backup".to_string()), "{:?}", e.tags);
        let md = render_episode(&e);
        assert!(
            md.starts_with(
                "# Episode: Can you fix the failing nightly backup job?\nDate: 2026-01-17\nTopic: "
            ),
            "{md}"
        );
        assert!(
            md.contains("\nRefs: thread_id=t1, run_id=r9\nTags: [\""),
            "{md}"
        );
        assert!(md.contains("\n\nSummary:\n- "), "{md}");
        let line = episode_memory_text(&e);
        assert!(
            line.starts_with(
                "On 2026-01-17 the user and the assistant discussed \"Can you fix the failing \
                 nightly backup job?\". The assistant concluded: \""
            ),
            "{line}"
        );
        assert!(line.chars().count() <= 280);
        // The episodic guard: one or two sentences, the frame in the past tense.
        let long = Episode {
            outcome: "word ".repeat(80),
            ..e.clone()
        };
        let cut = episode_memory_text(&long);
        assert!(cut.chars().count() <= 280 && cut.ends_with("…\""), "{cut}");
    }

    #[test]
    fn transcripts_are_bounded_from_the_start() {
        let turns = vec![t("User", &"a".repeat(50)), t("Assistant", "the end")];
        let full = transcript(Some("before"), &turns, 10, 1000);
        assert_eq!(
            full,
            "Earlier summary: before\n\nUser: aaaaaaaaaa\n\nAssistant: the end\n\n"
        );
        let cut = transcript(None, &turns, 10, 12);
        assert_eq!(cut, "t: the end\n\n");
        assert_eq!(role_label("tool"), "Tool");
        assert_eq!(role_label("system"), "System");
    }

    #[test]
    fn project_rollups_list_the_week_then_what_came_before() {
        let e = |d: &str, t: &str, o: &str| RollupEntry {
            date: d.into(),
            title: t.into(),
            outcome: o.into(),
            path: format!("episodes/{d}/{}.md", t.to_lowercase().replace(' ', "-")),
        };
        let first = render_rollup(
            "porto",
            "2026-11-18",
            &[e("2026-11-12", "Hotel search", "Booked the river hotel.")],
            None,
        );
        assert_eq!(
            first,
            "# Project: porto\nUpdated: 2026-11-18\n\n## Latest episodes\n- 2026-11-12 Hotel search — Booked the river hotel. (episodes/2026-11-12/hotel-search.md)\n"
        );
        let second = render_rollup(
            "porto",
            "2026-11-25",
            &[
                e("2026-11-20", "Flights", ""),
                e("2026-11-24", "Budget", "900 EUR."),
            ],
            Some(&first),
        );
        assert_eq!(
            second,
            "# Project: porto\nUpdated: 2026-11-25\n\n## Latest episodes\n\
             - 2026-11-24 Budget — 900 EUR. (episodes/2026-11-24/budget.md)\n\
             - 2026-11-20 Flights (episodes/2026-11-20/flights.md)\n\n## Earlier\n\
             - 2026-11-12 Hotel search — Booked the river hotel. (episodes/2026-11-12/hotel-search.md)\n"
        );
        let ep = "# Episode: Hotel search\nDate: 2026-11-12\nTopic: x\nOutcome: Booked it.\n";
        assert_eq!(episode_title(ep).as_deref(), Some("Hotel search"));
        assert_eq!(episode_field(ep, "Outcome").as_deref(), Some("Booked it."));
        assert_eq!(episode_field(ep, "Missing"), None);
    }

    #[test]
    fn summaries_say_what_they_cover_and_carry_key_facts() {
        let turns = vec![
            Turn {
                label: "User".into(),
                text: "We chose FastAPI for the backend. Should we use Docker? The database is \
                       PostgreSQL 16 on a Hetzner VPS."
                    .into(),
            },
            Turn {
                label: "Assistant".into(),
                text: "I configured Docker compose for the API and the database.".into(),
            },
        ];
        let facts = key_facts(
            &["User: David prefers Python.".into()],
            &turns,
            Some("database"),
            "User: We chose FastAPI for the backend.",
        );
        assert!(!facts.iter().any(|f| f.contains("FastAPI")), "{facts:?}");
        assert_eq!(facts[0], "User: David prefers Python.");
        assert!(facts.iter().all(|f| !f.ends_with('?')), "{facts:?}");
        assert!(
            facts.iter().any(|f| f.contains("PostgreSQL 16")),
            "{facts:?}"
        );
        let c = Covered {
            from_seq: 1,
            to_seq: 150,
            date_from: "2024-05-01".into(),
            date_to: "2024-05-07".into(),
            archived: 150,
        };
        let m = summary_message(&c, "We set up the project.", &facts);
        assert!(
            m.starts_with(
                "Summary of 150 earlier messages (seq 1-150, 2024-05-01 to 2024-05-07; still \
             searchable with conversation_search): We set up the project.\nKey facts:\n- User: \
             David prefers Python."
            ),
            "{m}"
        );
        assert_eq!(summary_prose(&m), "We set up the project.");
        assert_eq!(summary_prose("plain"), "plain");
        // Focus steers the extractive summary toward its words.
        let focused = compaction_extract(None, &turns, Some("docker compose"));
        assert!(focused.contains("Docker compose"), "{focused}");
    }

    /// 0.13.0: the focus tests fit under the 100-word limit, so they passed with the focus
    /// ignored. Here twenty topics, each said once, are three times the limit: a summary keeps
    /// some of them; for every topic it leaves out, focusing on that topic brings it in.
    #[test]
    fn the_focus_decides_what_a_long_summary_keeps() {
        let topics = [
            (
                "deploy window",
                "The deploy window is Friday at four, after the code freeze ends.",
            ),
            (
                "garden tomatoes",
                "The garden tomatoes need staking before the June heat arrives here.",
            ),
            (
                "school bus",
                "The school bus leaves at eight and is late most Mondays.",
            ),
            (
                "dentist appointment",
                "My dentist appointment moved to Thursday morning at nine thirty.",
            ),
            (
                "rate limits",
                "The API rate limits are one hundred requests per minute per key.",
            ),
            (
                "birthday cake",
                "Mia wants a chocolate birthday cake with raspberries for her party.",
            ),
            (
                "car insurance",
                "The car insurance renewal is due on the first of next month.",
            ),
            (
                "guitar lessons",
                "Guitar lessons start again in September on Wednesday evenings downtown.",
            ),
            (
                "database backups",
                "Database backups run nightly at two and keep fourteen days.",
            ),
            (
                "flight to Lisbon",
                "Our flight to Lisbon departs Saturday at seven from terminal two.",
            ),
            (
                "roof repair",
                "The roof repair crew comes Tuesday to replace the cracked tiles.",
            ),
            (
                "marathon training",
                "Marathon training means three long runs a week until October.",
            ),
            (
                "tax return",
                "The tax return needs the receipts from the home office purchases.",
            ),
            (
                "dog vaccination",
                "The dog needs its rabies vaccination before the kennel stay.",
            ),
            (
                "book club",
                "Book club meets at Ana's place and we read Middlemarch next.",
            ),
            (
                "kitchen paint",
                "We chose a pale green kitchen paint with a matte finish.",
            ),
            (
                "server migration",
                "The server migration to the new region finishes on Sunday night.",
            ),
            (
                "piano recital",
                "The piano recital is in the school hall at six on Friday.",
            ),
            (
                "solar panels",
                "The solar panels quote came in lower than the last offer.",
            ),
            (
                "wedding invitations",
                "Wedding invitations go out in March with a reply card inside.",
            ),
        ];
        let turns: Vec<Turn> = topics.iter().map(|(_, s)| t("User", s)).collect();
        let words: usize = turns.iter().map(|x| word_count(&x.text)).sum();
        assert!(words > 2 * SUMMARY_WORDS, "{words}");
        let plain = compaction_extract(None, &turns, None);
        let left_out: Vec<_> = topics.iter().filter(|(_, s)| !plain.contains(s)).collect();
        assert!(left_out.len() >= 5, "{plain}");
        for (focus, sentence) in left_out {
            let focused = compaction_extract(None, &turns, Some(focus));
            assert!(focused.contains(sentence), "focus {focus:?}: {focused}");
            assert!(word_count(&focused) <= SUMMARY_WORDS + 15, "{focused}");
        }
    }

    #[test]
    fn llm_episode_answers() {
        let a = r#"Here: {"title":"Backup fix","topic":"backups","outcome":"Job runs again.","tags":["Backup","disk"],"summary":["- Disk was full","Old backups removed"]}"#;
        let e = parse_episode_answer(a, "2026-01-17", "thread_id=t1").unwrap();
        assert_eq!(e.title, "Backup fix");
        assert_eq!(e.tags, vec!["backup", "disk"]);
        assert_eq!(e.summary, vec!["Disk was full", "Old backups removed"]);
        assert!(parse_episode_answer("no json", "d", "r").is_none());
        assert!(parse_episode_answer(r#"{"title":"x","summary":[]}"#, "d", "r").is_none());
        assert!(parse_episode_answer(r#"{"summary":["a"]}"#, "d", "r").is_none());
    }
}

/// Which rows of a context are kept within caps: `rows` are (role, tokens, head, pinned) in
/// prompt order. The head (the system prompt and the summary) and pinned messages (
/// the application keeps them in context) are always kept and count first; then the newest
/// while both caps hold. A kept part never starts with a `tool` message whose call is cut off,
/// and a pinned tool result keeps the assistant message that called it (a chat API refuses a
/// tool result without it).
pub fn context_keep(
    rows: &[(&str, i64, bool, bool)],
    max_messages: Option<usize>,
    max_tokens: Option<i64>,
) -> Vec<bool> {
    let head = rows.iter().take_while(|r| r.2).count();
    let mut keep: Vec<bool> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| i < head || r.3)
        .collect();
    // A pinned tool result brings its call (and the results between).
    for i in head..rows.len() {
        if keep[i] && rows[i].0 == "tool" {
            let mut j = i;
            while j > head && rows[j].0 == "tool" {
                j -= 1;
                keep[j] = true;
            }
        }
    }
    let mut count = keep.iter().filter(|k| **k).count();
    let mut tokens: i64 = rows
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(r, _)| r.1)
        .sum();
    let mut start = rows.len();
    while start > head {
        let i = start - 1;
        if !keep[i] {
            if max_messages.is_some_and(|m| count + 1 > m)
                || max_tokens.is_some_and(|m| tokens + rows[i].1 > m)
            {
                break;
            }
            keep[i] = true;
            count += 1;
            tokens += rows[i].1;
        }
        start -= 1;
    }
    // The newest part kept by the caps starts at `start`: not with a tool result whose call is
    // out (a pinned one keeps its call above).
    let mut s = start;
    while s < rows.len() && rows[s].0 == "tool" && !rows[s].3 && (s == head || !keep[s - 1]) {
        keep[s] = false;
        s += 1;
    }
    keep
}

#[cfg(test)]
mod context_cut_tests {
    /// context_keep without pins, as before pins existed: where the kept part of a context
    /// starts when it must fit caps (context_messages
    /// `max_messages` / `max_tokens`): `rows` are (role, tokens, head) in prompt order, `head` for
    /// the system prompt and the summary, which are always kept. The rest is kept newest first
    /// while both caps hold; a kept part never starts with a `tool` message, whose call would be
    /// cut off (a chat API refuses a tool result without the assistant message that asked for it).
    /// Returns `(head, cut)`: rows `..head` are the head, and `cut..` the kept rest (`cut` is
    /// `rows.len()` when none is kept).
    fn context_cut(
        rows: &[(&str, i64, bool)],
        max_messages: Option<usize>,
        max_tokens: Option<i64>,
    ) -> (usize, usize) {
        let pinned: Vec<(&str, i64, bool, bool)> =
            rows.iter().map(|r| (r.0, r.1, r.2, false)).collect();
        let keep = super::context_keep(&pinned, max_messages, max_tokens);
        let head = rows.iter().take_while(|r| r.2).count();
        let cut = (head..rows.len()).find(|&i| keep[i]).unwrap_or(rows.len());
        (head, cut)
    }

    #[test]
    fn caps_keep_the_head_and_the_newest_and_never_orphan_a_tool_result() {
        let rows = [
            ("system", 100, true),
            ("system", 50, true),
            ("user", 10, false),
            ("assistant", 10, false),
            ("tool", 30, false),
            ("assistant", 10, false),
            ("user", 10, false),
        ];
        assert_eq!(context_cut(&rows, None, None), (2, 2));
        assert_eq!(context_cut(&rows, Some(4), None), (2, 5));
        // Three after the head would start with the tool result: it goes too.
        assert_eq!(context_cut(&rows, Some(5), None), (2, 5));
        assert_eq!(context_cut(&rows, None, Some(150 + 20)), (2, 5));
        assert_eq!(context_cut(&rows, None, Some(150 + 60)), (2, 3));
        // Caps smaller than the head keep the head alone.
        assert_eq!(context_cut(&rows, Some(1), Some(1)), (2, 7));
    }

    #[test]
    fn pinned_messages_stay_within_any_caps_and_keep_their_calls() {
        use super::context_keep;
        let rows = [
            ("system", 100, true, false),
            ("user", 10, false, true),
            ("assistant", 10, false, false),
            ("tool", 30, false, true),
            ("user", 10, false, false),
            ("assistant", 10, false, false),
        ];
        // The head, the pinned user message, the pinned tool result and its call, then the
        // newest while the cap holds.
        assert_eq!(
            context_keep(&rows, Some(5), None),
            vec![true, true, true, true, false, true]
        );
        assert_eq!(
            context_keep(&rows, Some(1), None),
            vec![true, true, true, true, false, false]
        );
        assert_eq!(context_keep(&rows, None, None), vec![true; 6]);
    }
}
