//! How often the no-LLM supersede rule (memory_core::extract::supersedes) fires on a
//! LoCoMo-format file's observations, and on which pairs (docs/retrieval.md "Supersede without
//! an LLM"): `cargo run -p memory_core --example supersede_rate -- FILE [--show]`.
//!
//! Each conversation's observations are replayed per speaker in session order, as extraction
//! would write them: a new observation supersedes the newest still-active earlier one the rule
//! matches (the store does the same, src/ops/extract.rs). Printed: observations, rule firings,
//! and with `--show` each firing's pair (to stdout only: the data stays where it is), for a
//! person to judge whether the older fact had really stopped being true.

use memory_core::extract::supersedes;
use serde_json::Value;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: supersede_rate FILE [--show]");
    let show = args.any(|a| a == "--show");
    let data: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (mut total, mut fired, mut pairs_any) = (0usize, 0usize, 0usize);
    for conv in &data {
        let id = conv["sample_id"].as_str().unwrap_or("?");
        let obs = conv["observation"].as_object().cloned().unwrap_or_default();
        let mut sessions: Vec<(usize, &Value)> = obs
            .iter()
            .filter_map(|(k, v)| {
                let n = k
                    .strip_prefix("session_")?
                    .strip_suffix("_observation")?
                    .parse()
                    .ok()?;
                Some((n, v))
            })
            .collect();
        sessions.sort_by_key(|(n, _)| *n);
        // Per speaker: (text, where, active).
        let mut seen: std::collections::BTreeMap<String, Vec<(String, String, bool)>> =
            Default::default();
        for (n, s) in sessions {
            for (speaker, list) in s.as_object().cloned().unwrap_or_default() {
                for o in list.as_array().cloned().unwrap_or_default() {
                    let text = o[0].as_str().unwrap_or("").to_string();
                    let at = format!("{id} session {n} {}", o[1].as_str().unwrap_or(""));
                    total += 1;
                    let earlier = seen.entry(speaker.clone()).or_default();
                    pairs_any += earlier
                        .iter()
                        .filter(|(t, _, _)| supersedes(&text, t))
                        .count();
                    if let Some(old) = earlier
                        .iter_mut()
                        .rev()
                        .find(|(t, _, a)| *a && supersedes(&text, t))
                    {
                        fired += 1;
                        old.2 = false;
                        if show {
                            println!(
                                "{at} supersedes {}:\n  new: {text}\n  old: {}",
                                old.1, old.0
                            );
                        }
                    }
                    earlier.push((text, at, true));
                }
            }
        }
    }
    println!(
        "{total} observations, {} conversations: the rule fired {fired} times ({:.2}% of observations); \
         {pairs_any} earlier-later pairs match it in all",
        data.len(),
        100.0 * fired as f64 / total.max(1) as f64
    );
}
