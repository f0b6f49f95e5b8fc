//! Daily consolidation (docs/design.md "Consolidation"), the parts that need no database: which near pairs are
//! worth a same-fact check, the conservative rule used when no LLM is configured, the batched
//! LLM prompt and the validation of its answer, and which memory of a merged pair survives.
//!
//! # Why a band, and why pre-filters
//! Pairs above `memory_ext.merge_threshold` were already merged at write time, and pairs below
//! `memory_ext.link_threshold` are not near enough to be one fact. Between the two, cosine alone
//! cannot tell "Ana moved to Porto" from "Ana moved to Lisbon" (all-MiniLM-L6-v2 barely sees
//! names and numbers, see dedupe.rs), so a pair is only checked when the texts share most of
//! their words, or differ in a number (a changed amount or date is the typical update of one
//! fact). Everything else is at most linked.

use crate::dedupe::distinguishing_tokens;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Pairs per LLM prompt (docs/design.md "Consolidation": 5-10).
pub const LLM_BATCH: usize = 8;
/// Days a checked pair is not checked again at the same score (docs/design.md "Consolidation").
pub const FINGERPRINT_DAYS: i32 = 14;
/// Only memories changed within this many days pair up (docs/design.md "Consolidation": recency <= 90 d).
pub const RECENCY_DAYS: i32 = 90;
/// Word overlap (Jaccard over content words) from which two texts may be one fact.
pub const MIN_OVERLAP: f64 = 0.5;
/// The rule used without an LLM merges only above this cosine, and only when one text's
/// content words contain the other's and no number or name differs.
pub const RULE_MIN_COSINE: f64 = 0.88;

const STOP: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by", "is",
    "are", "was", "were", "be", "been", "it", "its", "this", "that", "as", "from", "has", "have",
    "had", "i", "my", "me", "we", "our", "you", "your", "he", "she", "they", "his", "her", "their",
    "s", "so", "do", "does", "did", "not", "very", "really", "just",
];

/// Lower-cased words of `text` without stop words.
pub fn content_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

/// Jaccard similarity of the two texts' content words (0 when both are empty).
pub fn overlap(a: &str, b: &str) -> f64 {
    let (x, y) = (content_words(a), content_words(b));
    let union = x.union(&y).count();
    if union == 0 {
        return 0.0;
    }
    x.intersection(&y).count() as f64 / union as f64
}

fn numbers(text: &str) -> Vec<String> {
    distinguishing_tokens(text)
        .into_iter()
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .collect()
}

/// Both texts carry numbers, and they differ: "budget is 5k" / "budget is 6k".
pub fn numeric_step(a: &str, b: &str) -> bool {
    let (x, y) = (numbers(a), numbers(b));
    !x.is_empty() && !y.is_empty() && x != y
}

/// Whether a pair in the cosine band deserves a same-fact check (see the module note).
pub fn worth_checking(a: &str, b: &str, cosine: f64, link: f64, merge: f64) -> bool {
    cosine >= link && cosine < merge && (overlap(a, b) >= MIN_OVERLAP || numeric_step(a, b))
}

/// The deterministic same-fact rule used when no LLM is configured. Conservative on purpose: a
/// wrong merge hides a fact (until restored), a missed one only leaves a duplicate.
pub fn rule_same_fact(a: &str, b: &str, cosine: f64) -> bool {
    if cosine < RULE_MIN_COSINE || distinguishing_tokens(a) != distinguishing_tokens(b) {
        return false;
    }
    let (x, y) = (content_words(a), content_words(b));
    !x.is_empty() && !y.is_empty() && (x.is_subset(&y) || y.is_subset(&x))
}

/// What a merge needs to know of each memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    pub pinned: bool,
    pub importance: i16,
    /// Seconds since the epoch of the last change.
    pub updated: f64,
    pub access_count: i64,
}

/// Which of a same-fact pair survives: pinned, then more important, then more recent, then more
/// retrieved; `true` = `a`. Ties keep `a` (the caller orders pairs by id, so it is stable).
pub fn a_survives(a: &Side, b: &Side) -> bool {
    (a.pinned, a.importance)
        .cmp(&(b.pinned, b.importance))
        .then(a.updated.total_cmp(&b.updated))
        .then(a.access_count.cmp(&b.access_count))
        .is_ge()
}

/// The system and user messages of one batched same-fact check.
pub fn llm_prompt(pairs: &[(&str, &str)]) -> (String, String) {
    let system =
        "You deduplicate an AI agent's long-term memory. For each numbered pair of memories, \
decide whether both state the same fact about the same subject, so that keeping one loses nothing \
(an update of the same fact, like a changed date or amount, counts as the same fact). Different \
people, places, things or events are not the same fact. Answer with JSON only: \
{\"results\": [{\"pair\": <number>, \"same\": true|false}, ...]} with one entry per pair.";
    let list: Vec<Value> = pairs
        .iter()
        .enumerate()
        .map(|(i, (a, b))| json!({"pair": i + 1, "a": a, "b": b}))
        .collect();
    (system.to_string(), json!({ "pairs": list }).to_string())
}

/// The verdicts in an LLM answer for `n` pairs: `Some(same)` per pair it answered validly,
/// `None` for pairs it skipped or answered badly. `Err` when the answer is not usable at all.
/// Tolerates a fenced code block around the JSON (models add one despite instructions).
pub fn parse_llm_answer(answer: &str, n: usize) -> Result<Vec<Option<bool>>, String> {
    let t = answer.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .map(|s| s.trim_end().trim_end_matches("```"))
        .unwrap_or(t);
    let v: Value = serde_json::from_str(t.trim()).map_err(|e| format!("not JSON: {e}"))?;
    let results = v["results"]
        .as_array()
        .ok_or_else(|| "no \"results\" array".to_string())?;
    let mut out = vec![None; n];
    for r in results {
        let (Some(p), Some(same)) = (r["pair"].as_u64(), r["same"].as_bool()) else {
            continue;
        };
        if (1..=n as u64).contains(&p) && out[p as usize - 1].is_none() {
            out[p as usize - 1] = Some(same);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn band_and_prefilters() {
        let (a, b) = (
            "Ana's budget for the trip is 500 euros",
            "Ana's budget for the trip is 650 euros",
        );
        assert!(worth_checking(a, b, 0.9, 0.8, 0.95));
        assert!(
            !worth_checking(a, b, 0.96, 0.8, 0.95),
            "above merge: already merged at write"
        );
        assert!(
            !worth_checking(a, b, 0.7, 0.8, 0.95),
            "below link: not near"
        );
        let (c, d) = ("Ana likes hiking in the Alps", "Ben went to a jazz concert");
        assert!(
            !worth_checking(c, d, 0.85, 0.8, 0.95),
            "no overlap, no number"
        );
    }

    #[test]
    fn rule_is_conservative() {
        assert!(rule_same_fact(
            "Ana likes green tea",
            "Ana really likes green tea",
            0.93
        ));
        assert!(!rule_same_fact(
            "Ana likes green tea",
            "Ana really likes green tea",
            0.85
        ));
        assert!(
            !rule_same_fact("Ana moved to Porto", "Ana moved to Lisbon", 0.95),
            "names differ"
        );
        assert!(
            !rule_same_fact("Budget is 500 euros", "Budget is 650 euros", 0.97),
            "numbers differ"
        );
        assert!(!rule_same_fact(
            "Ana likes green tea",
            "Ana likes black coffee",
            0.9
        ));
    }

    #[test]
    fn survivor_order() {
        let s = |pinned, importance, updated, access_count| Side {
            pinned,
            importance,
            updated,
            access_count,
        };
        assert!(
            !a_survives(&s(false, 5, 9.0, 9), &s(true, 1, 0.0, 0)),
            "pinned wins"
        );
        assert!(
            a_survives(&s(false, 4, 0.0, 0), &s(false, 3, 9.0, 9)),
            "importance next"
        );
        assert!(
            !a_survives(&s(false, 3, 1.0, 9), &s(false, 3, 2.0, 0)),
            "then recency"
        );
        assert!(
            a_survives(&s(false, 3, 1.0, 2), &s(false, 3, 1.0, 1)),
            "then retrievals"
        );
        assert!(
            a_survives(&s(false, 3, 1.0, 1), &s(false, 3, 1.0, 1)),
            "ties keep a"
        );
    }

    #[test]
    fn prompt_numbers_pairs_and_answers_are_validated() {
        let (sys, user) = llm_prompt(&[("x", "y"), ("p", "q")]);
        assert!(sys.contains("\"results\""));
        let v: Value = serde_json::from_str(&user).unwrap();
        assert_eq!(v["pairs"][1]["pair"], 2);
        assert_eq!(v["pairs"][1]["b"], "q");
        assert_eq!(
            parse_llm_answer(
                r#"{"results":[{"pair":2,"same":true},{"pair":1,"same":false}]}"#,
                2
            )
            .unwrap(),
            vec![Some(false), Some(true)]
        );
        // fenced, partial, out of range, wrong types, duplicates: what is valid counts
        let a = "```json\n{\"results\":[{\"pair\":1,\"same\":true},{\"pair\":1,\"same\":false},{\"pair\":7,\"same\":true},{\"pair\":3,\"same\":\"yes\"}]}\n```";
        assert_eq!(
            parse_llm_answer(a, 3).unwrap(),
            vec![Some(true), None, None]
        );
        assert!(parse_llm_answer("Sure! They are the same.", 2).is_err());
        assert!(parse_llm_answer(r#"{"answer": true}"#, 2).is_err());
    }
}
