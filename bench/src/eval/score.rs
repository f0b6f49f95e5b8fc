//! Scoring a ranking against a question's evidence turns.
//!   tR@k   share of the question's evidence turns covered by the first k memories
//!   all@10 1 when every evidence turn is covered by the first 10
//!   sR@k   share of the evidence sessions among the first k distinct sessions of the ranking

use super::load::{Covered, Question};
use std::collections::{BTreeMap, HashMap, HashSet};

pub type Scores = BTreeMap<String, f64>;

pub const METRICS: [&str; 6] = ["tR@5", "tR@10", "tR@20", "all@10", "sR@5", "sR@10"];

pub fn score(ranked: &[&Covered], q: &Question, sessions_of: &HashMap<String, String>) -> Scores {
    let ev: HashSet<&str> = q.evidence.iter().map(String::as_str).collect();
    let ev_sessions: HashSet<&str> = q
        .evidence
        .iter()
        .filter_map(|e| sessions_of.get(e).map(String::as_str))
        .collect();
    let covered = |k: usize| -> HashSet<&str> {
        ranked
            .iter()
            .take(k)
            .flat_map(|c| c.dias.iter().map(String::as_str))
            .filter(|d| ev.contains(d))
            .collect()
    };
    let mut s = Scores::new();
    for k in [5, 10, 20] {
        s.insert(format!("tR@{k}"), covered(k).len() as f64 / ev.len() as f64);
    }
    s.insert(
        "all@10".into(),
        f64::from(u8::from(covered(10).len() == ev.len())),
    );
    let mut distinct: Vec<&str> = vec![];
    for c in ranked {
        if !distinct.contains(&c.session.as_str()) {
            distinct.push(&c.session);
        }
    }
    for k in [5, 10] {
        let hit = distinct
            .iter()
            .take(k)
            .filter(|x| ev_sessions.contains(*x))
            .count();
        s.insert(
            format!("sR@{k}"),
            hit as f64 / ev_sessions.len().max(1) as f64,
        );
    }
    s
}

pub fn mean(rows: &[Scores]) -> Scores {
    let mut out = Scores::new();
    for r in rows {
        for (k, v) in r {
            *out.entry(k.clone()).or_default() += v / rows.len() as f64;
        }
    }
    out
}

pub fn row(name: &str, s: &Scores) -> String {
    format!(
        "| {name} | {} |\n",
        METRICS
            .map(|m| format!("{:.3}", s.get(m).copied().unwrap_or(0.0)))
            .join(" | ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cov(dias: &[&str], session: &str) -> Covered {
        Covered {
            dias: dias.iter().map(|s| s.to_string()).collect(),
            session: session.into(),
        }
    }

    #[test]
    fn a_fact_covers_every_turn_it_cites() {
        let q = Question {
            tenant: "t".into(),
            conv: "c".into(),
            text: "q".into(),
            category: 4,
            evidence: vec!["D1:3".into(), "D2:5".into()],
            reference: None,
        };
        let sessions: HashMap<String, String> = [("D1:3", "c:1"), ("D2:5", "c:2")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let a = cov(&["D1:1"], "c:1");
        let b = cov(&["D1:3", "D2:5"], "c:2");
        let s = score(&[&a, &b], &q, &sessions);
        assert_eq!(s["tR@5"], 1.0);
        assert_eq!(s["all@10"], 1.0);
        // Sessions come from the ranking: c:1 then c:2, both evidence sessions.
        assert_eq!(s["sR@5"], 1.0);
        let s = score(&[&a], &q, &sessions);
        assert_eq!(s["tR@5"], 0.0);
        assert_eq!(s["sR@5"], 0.5);
    }
}
