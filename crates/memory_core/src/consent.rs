//! Consent (docs/api.md and docs/design.md "Consent"): which inferred changes wait for the user.
//!
//! A memory's "field" is its category. A change to a sensitive field (name, pronouns, city,
//! language by default) that was inferred — by extraction, or by an agent writing with
//! `"source": "inferred"` — becomes a proposal the user approves or rejects; a benign field
//! (tone, goals) is written once a second inferred signal says the same. What the user states
//! (`"source": "user"`, or no source) is written as it always was.

/// docs/design.md "Consent": "preferred_name, pronouns, city, language → require consent".
pub const DEFAULT_CONSENT: &str = "preferred_name,pronouns,city,language";
/// docs/design.md "Consent": "tone, goals_add → auto-apply if corroborated by ≥ 2 signals".
pub const DEFAULT_CORROBORATE: &str = "tone,goals";
/// Signals a benign field needs before it is written.
pub const CORROBORATING_SIGNALS: i32 = 2;
/// Days a proposal waits for a decision.
pub const PROPOSAL_DAYS: i32 = 7;

use crate::names::{self, NameError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Written only on memory_approve.
    Consent,
    /// Written when corroborated.
    Corroborate,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Consent => "consent",
            Policy::Corroborate => "corroborate",
        }
    }
}

/// A comma-separated list of categories (a setting), each normalised as a write's category is
/// (crate::names::category); names that cannot be normalised are left out.
pub fn categories(setting: &str) -> Vec<String> {
    setting
        .split(',')
        .filter_map(|c| names::category(c).ok())
        .collect()
}

/// The policy a write falls under, and the protected category that put it there.
///
/// `categories` are the write's own category and those of every memory it changes: the one it
/// updates (`id`) and the one it supersedes. A change is judged by everything it touches, so an
/// inferred write filed under `location` that supersedes the user's `[city]` memory, or an
/// inferred update of that memory's text, waits for consent as a `city` write does. Only
/// inferred writes wait; what the user states is written.
pub fn policy<'a>(
    source: Option<&str>,
    categories: &[&'a str],
    consent: &[String],
    corroborate: &[String],
) -> Option<(Policy, &'a str)> {
    if source != Some("inferred") {
        return None;
    }
    if let Some(c) = categories.iter().find(|c| consent.iter().any(|x| x == **c)) {
        return Some((Policy::Consent, c));
    }
    categories
        .iter()
        .find(|c| corroborate.iter().any(|x| x == **c))
        .map(|c| (Policy::Corroborate, *c))
}

/// A category drawn like a protected one (consent or corroborate) without being it: refused for
/// every write (22023), since a reader cannot tell the two apart (crate::names).
pub fn check_lookalike(
    category: &str,
    consent: &[String],
    corroborate: &[String],
) -> Result<(), NameError> {
    let protected: Vec<String> = consent.iter().chain(corroborate).cloned().collect();
    match names::lookalike(category, &protected) {
        Some(p) => Err(NameError::Lookalike {
            shown: names::shown(category),
            protected: p.clone(),
        }),
        None => Ok(()),
    }
}

/// Words that turn a statement around: "Sam does not prefer a formal tone" is close in meaning
/// space to "Sam prefers a formal tone" (0.900 with all-MiniLM-L6-v2) and says the opposite.
const NEGATIONS: [&str; 8] = [
    "not", "no", "never", "don't", "doesn't", "didn't", "won't", "nor",
];

fn negated(text: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(|w| w.to_lowercase().replace('’', "'"))
        .any(|w| NEGATIONS.contains(&w.as_str()) || w.ends_with("n't"))
}

/// Words that qualify a statement without changing its value ("Mia *really* wants to run a
/// marathon *one day*").
const FILLER: [&str; 16] = [
    "really",
    "truly",
    "very",
    "definitely",
    "certainly",
    "actually",
    "indeed",
    "still",
    "also",
    "always",
    "much",
    "someday",
    "one",
    "day",
    "eventually",
    "quite",
];

/// Words that frame a statement as a wish, a goal, a plan or a liking without being its value:
/// "Mia's goal is to run a marathon" and "Mia wants to run a marathon" state one value (a
/// marathon) in two frames. A word that is neither a frame nor a qualifier ("half", "informal")
/// is a value, and a value that differs is a different statement.
const FRAMES: [&str; 33] = [
    "want",
    "wants",
    "wanted",
    "wanting",
    "goal",
    "goals",
    "aim",
    "aims",
    "aiming",
    "plan",
    "plans",
    "planning",
    "hope",
    "hopes",
    "hoping",
    "wish",
    "wishes",
    "like",
    "likes",
    "love",
    "loves",
    "prefer",
    "prefers",
    "preference",
    "favorite",
    "favourite",
    "dream",
    "dreams",
    "intend",
    "intends",
    "would",
    "is",
    "be",
];

/// How far below `memory_ext.corroborate_threshold` two statements that differ by a frame may
/// score. A frame changes the wording more than a qualifier does: with all-MiniLM-L6-v2 "Mia
/// wants to run a marathon." scores 0.926-0.939 against "Mia plans / hopes / would like to run
/// a marathon." and "Mia's goal is to run a marathon.", "Sam likes short answers." 0.945
/// against "Sam prefers ...", where a qualifier keeps 0.963. The words already rule out a
/// different value (which scored 0.867-0.879 here), so the embedding need only agree that the
/// two are close.
pub const FRAME_MARGIN: f64 = 0.05;

/// What the words two statements do not share are: `None` when one is a value (neither a
/// frame nor a qualifier), else whether any is a frame ([`FRAMES`], [`FILLER`]); a possessive
/// (`Mia's`) counts as its name.
fn differing_words(a: &str, b: &str) -> Option<bool> {
    let words = |t: &str| -> std::collections::BTreeSet<String> {
        crate::consolidate::content_words(t)
            .into_iter()
            .map(|w| {
                let w = w.replace('’', "'");
                w.strip_suffix("'s").map(str::to_string).unwrap_or(w)
            })
            .collect()
    };
    let (a, b) = (words(a), words(b));
    let mut framed = false;
    for w in a.symmetric_difference(&b) {
        if FRAMES.contains(&w.as_str()) {
            framed = true;
        } else if !FILLER.contains(&w.as_str()) {
            return None;
        }
    }
    Some(framed)
}

/// Whether `signal` says the same as a pending proposal's `text` in other words (
/// corroboration by meaning): their cosine `similarity` reaches `threshold`, they agree on
/// names and numbers (crate::dedupe::same_fact), neither negates what the other states, and
/// the content words they do not share only qualify ([`FILLER`]) or frame ([`FRAMES`]) the
/// statement. The last rule is what
/// the embedding cannot give: with all-MiniLM-L6-v2 a different value scores as high as a
/// rewording ("a marathon" / "a half marathon" 0.962, "a formal tone" / "an informal tone"
/// 0.958, "really wants to run a marathon" 0.963; docs/design.md "Consent").
pub fn corroborates(signal: &str, text: &str, similarity: f64, threshold: f64) -> bool {
    let Some(framed) = differing_words(signal, text) else {
        return false;
    };
    let needed = if framed {
        threshold - FRAME_MARGIN
    } else {
        threshold
    };
    similarity >= needed
        && crate::dedupe::same_fact(signal, text)
        && negated(signal) == negated(text)
}

/// The system and user messages of one batched paraphrase check (memory_consolidate, when an
/// LLM is configured): two pending proposals of one field corroborate each other when they
/// state the same value in other words, which the word rules of [`corroborates`] cannot always
/// tell ("Mia's dream is to run a marathon" / "Mia hopes to finish a marathon"). A changed
/// value is not a paraphrase, unlike the same-fact check of crate::consolidate. The answer
/// reads as that check's (crate::consolidate::parse_llm_answer).
pub fn paraphrase_prompt(pairs: &[(&str, &str)]) -> (String, String) {
    let system = include_str!("../prompts/paraphrase.txt").trim_end();
    let list: Vec<serde_json::Value> = pairs
        .iter()
        .enumerate()
        .map(|(i, (a, b))| serde_json::json!({"pair": i + 1, "a": a, "b": b}))
        .collect();
    (
        system.to_string(),
        serde_json::json!({ "pairs": list }).to_string(),
    )
}

/// The user's answer to a proposed change, read from their own words: `Some(true)` yes,
/// `Some(false)` no, `None` unclear (both, or neither). Consent by chat (memory_consent) acts
/// only on a clear answer; anything else is asked again.
pub fn answer(text: &str) -> Option<bool> {
    let t = format!(" {} ", text.to_lowercase().replace('’', "'"));
    let words: Vec<&str> = t
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |list: &[&str]| {
        list.iter().any(|cue| {
            if cue.contains(' ') {
                t.contains(&format!(" {cue}"))
            } else {
                words.contains(cue)
            }
        })
    };
    const YES: [&str; 24] = [
        "yes",
        "yeah",
        "yep",
        "yup",
        "sure",
        "ok",
        "okay",
        "approve",
        "approved",
        "agree",
        "confirm",
        "confirmed",
        "correct",
        "absolutely",
        "definitely",
        "go ahead",
        "do it",
        "please do",
        "sounds good",
        "that's right",
        "sí",
        "oui",
        "ja",
        "da",
    ];
    const NO: [&str; 17] = [
        "no",
        "nope",
        "nah",
        "not",
        "don't",
        "dont",
        "never",
        "reject",
        "decline",
        "cancel",
        "wrong",
        "do not",
        "stop",
        "nein",
        "non",
        "leave it",
        "keep it as",
    ];
    match (has(&YES), has(&NO)) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

/// The user's message a reported answer points to, of `said` (turn, text; newest first): the
/// newest that quotes it (case, spacing and the quote marks aside), else the newest of all.
/// `None` when the user said nothing.
pub fn quoted_message<'a>(reported: &str, said: &'a [(i64, String)]) -> Option<(i64, &'a str)> {
    let norm = |s: &str| {
        s.to_lowercase()
            .replace(['’', '‘'], "'")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let quote = norm(
        reported
            .trim()
            .trim_matches(|c| c == '"' || c == '\'' || c == '“' || c == '”'),
    );
    said.iter()
        .find(|(_, m)| !quote.is_empty() && norm(m).contains(&quote))
        .or_else(|| said.first())
        .map(|(t, m)| (*t, m.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corroboration_by_meaning_needs_the_band_the_names_and_the_same_polarity() {
        let t = "Sam prefers short answers.";
        assert!(corroborates(
            "Sam really prefers short answers.",
            t,
            0.983,
            0.96
        ));
        assert!(!corroborates("Sam prefers long answers.", t, 0.99, 0.96));
        assert!(!corroborates(
            "Sam does not prefer short answers.",
            t,
            0.98,
            0.97
        ));
        assert!(!corroborates(
            "Sam doesn’t prefer short answers.",
            t,
            0.98,
            0.97
        ));
        assert!(!corroborates(
            "Ana prefers short answers.",
            "Sam says Ana prefers short answers.",
            0.98,
            0.97
        ));
        // A different value, however close in meaning space.
        let m = "Mia wants to run a marathon.";
        assert!(corroborates(
            "Mia really wants to run a marathon one day.",
            m,
            0.97,
            0.96
        ));
        assert!(!corroborates(
            "Mia wants to run a half marathon.",
            m,
            0.97,
            0.96
        ));
        assert!(!corroborates(
            "Mia prefers an informal tone.",
            "Mia prefers a formal tone.",
            0.97,
            0.96
        ));
    }

    #[test]
    fn a_paraphrase_in_another_frame_corroborates_a_different_value_does_not() {
        // The cosines all-MiniLM-L6-v2 gives these pairs, at the default threshold 0.96.
        let m = "Mia wants to run a marathon.";
        let yes = |a: &str, b: &str, sim: f64| corroborates(a, b, sim, 0.96);
        assert!(yes("Mia's goal is to run a marathon.", m, 0.934));
        assert!(yes("Mia hopes to run a marathon.", m, 0.939));
        assert!(yes(
            "Sam likes short answers.",
            "Sam prefers short answers.",
            0.945
        ));
        assert!(!yes("Mia's goal is to run a marathon.", m, 0.90));
        assert!(!yes("Mia's goal is to run a half marathon.", m, 0.99));
        assert!(!yes("Mia's goal is to swim a marathon.", m, 0.99));
        assert!(!yes("Mia's goal is not to run a marathon.", m, 0.99));
        assert!(!yes("Ana's goal is to run a marathon.", m, 0.99));
        // A qualifier alone keeps the full threshold.
        assert!(!yes("Mia really wants to run a marathon.", m, 0.93));
    }

    #[test]
    fn the_answer_is_the_message_quoted_else_the_newest() {
        let said = vec![
            (9, "Yes please".to_string()),
            (7, "No, not that one".to_string()),
        ];
        assert_eq!(
            quoted_message("\"no, NOT that one\"", &said),
            Some((7, "No, not that one"))
        );
        assert_eq!(quoted_message("approve", &said), Some((9, "Yes please")));
        assert_eq!(quoted_message("yes", &[]), None);
    }

    #[test]
    fn the_users_answer_is_read_from_their_words() {
        for yes in [
            "yes",
            "Yes, update it.",
            "ok go ahead",
            "sure",
            "That's right",
            "Oui",
        ] {
            assert_eq!(answer(yes), Some(true), "{yes}");
        }
        for no in [
            "no",
            "No, keep it as it was",
            "don't",
            "please cancel that",
            "wrong",
        ] {
            assert_eq!(answer(no), Some(false), "{no}");
        }
        for unclear in [
            "maybe",
            "what did you propose?",
            "yes... no, wait",
            "yesterday",
        ] {
            assert_eq!(answer(unclear), None, "{unclear}");
        }
    }

    #[test]
    fn only_inferred_listed_fields_wait() {
        let (a, b) = (categories(DEFAULT_CONSENT), categories(" Tone , goals,,"));
        assert_eq!(b, vec!["tone", "goals"]);
        assert_eq!(
            categories("Preferred Name, city\u{200b}"),
            vec!["preferred_name"]
        );
        assert_eq!(
            policy(Some("inferred"), &["city"], &a, &b),
            Some((Policy::Consent, "city"))
        );
        assert_eq!(
            policy(Some("inferred"), &["tone"], &a, &b),
            Some((Policy::Corroborate, "tone"))
        );
        assert_eq!(policy(Some("user"), &["city"], &a, &b), None);
        assert_eq!(policy(None, &["city"], &a, &b), None);
        assert_eq!(policy(Some("inferred"), &["health"], &a, &b), None);
        assert_eq!(policy(Some("inferred"), &[], &a, &b), None);
    }

    #[test]
    fn a_change_is_judged_by_every_memory_it_touches() {
        let (a, b) = (categories(DEFAULT_CONSENT), categories(DEFAULT_CORROBORATE));
        // Filed under another category, superseding (or updating) the user's city.
        assert_eq!(
            policy(Some("inferred"), &["location", "city"], &a, &b),
            Some((Policy::Consent, "city"))
        );
        // Consent wins over corroboration.
        assert_eq!(
            policy(Some("inferred"), &["tone", "language"], &a, &b),
            Some((Policy::Consent, "language"))
        );
    }

    #[test]
    fn lookalikes_of_protected_categories_are_refused() {
        let (a, b) = (categories(DEFAULT_CONSENT), categories(DEFAULT_CORROBORATE));
        let c = names::category("cıty").unwrap();
        let e = check_lookalike(&c, &a, &b).unwrap_err();
        assert!(e.to_string().contains("looks like \"city\""), "{e}");
        assert!(check_lookalike("city", &a, &b).is_ok());
        assert!(check_lookalike("travel", &a, &b).is_ok());
    }
}
