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

/// The ranking with its first `depth` memories reordered so that the first 5 cover as many
/// evidence turns as any 5 of them can (exact: every choice of the memories that cover any
/// evidence is tried). Its tR@5 is the most a reranker that reads only those `depth` memories
/// could reach, whatever its judgement: the headroom a better reranker would have.
pub fn best_order<'a>(ranked: &[&'a Covered], q: &Question, depth: usize) -> Vec<&'a Covered> {
    let ev: HashSet<&str> = q.evidence.iter().map(String::as_str).collect();
    let depth = depth.min(ranked.len());
    let useful: Vec<usize> = (0..depth)
        .filter(|&i| ranked[i].dias.iter().any(|d| ev.contains(d.as_str())))
        .collect();
    let covers = |pick: &[usize]| -> usize {
        let mut c: HashSet<&str> = HashSet::new();
        for &i in pick {
            c.extend(
                ranked[i]
                    .dias
                    .iter()
                    .map(String::as_str)
                    .filter(|d| ev.contains(d)),
            );
        }
        c.len()
    };
    // Every choice of min(5, useful) of the useful ones; the best is kept (first found on ties).
    let k = useful.len().min(5);
    let (mut best, mut best_n): (Vec<usize>, usize) = (vec![], 0);
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        let pick: Vec<usize> = idx.iter().map(|&j| useful[j]).collect();
        let n = covers(&pick);
        if n > best_n {
            (best, best_n) = (pick, n);
        }
        // The next combination of k out of useful.len(), in lexicographic order.
        let Some(p) = (0..k).rev().find(|&p| idx[p] < useful.len() - k + p) else {
            break;
        };
        idx[p] += 1;
        for r in p + 1..k {
            idx[r] = idx[r - 1] + 1;
        }
    }
    let mut out: Vec<&Covered> = best.iter().map(|&i| ranked[i]).collect();
    out.extend(
        (0..ranked.len())
            .filter(|i| !best.contains(i))
            .map(|i| ranked[i]),
    );
    out
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

    #[test]
    fn the_best_order_covers_what_any_five_of_the_first_depth_can() {
        let q = Question {
            tenant: "t".into(),
            conv: "c".into(),
            text: "q".into(),
            category: 1,
            evidence: vec!["D1:1".into(), "D1:2".into(), "D1:3".into()],
            reference: None,
        };
        let none = cov(&["D9:9"], "c:9");
        let one = cov(&["D1:1"], "c:1");
        let two = cov(&["D1:1", "D1:2"], "c:1");
        let three = cov(&["D1:3"], "c:1");
        let mut ranked = vec![&none; 5];
        ranked.extend([&one, &two, &none, &three]);
        let sessions = HashMap::new();
        assert_eq!(score(&ranked, &q, &sessions)["tR@5"], 0.0);
        // Within the first 7 only D1:1 and D1:2 are covered; within the first 9, all three.
        let s = score(&best_order(&ranked, &q, 7), &q, &sessions);
        assert!((s["tR@5"] - 2.0 / 3.0).abs() < 1e-9);
        let b = best_order(&ranked, &q, 9);
        assert_eq!(score(&b, &q, &sessions)["tR@5"], 1.0);
        // Nothing is lost: the same memories, the reordered ones first.
        assert_eq!(b.len(), ranked.len());
        // Those that cover evidence come first, in the ranking's order.
        assert!(std::ptr::eq(b[0], &one) && std::ptr::eq(b[1], &two) && std::ptr::eq(b[2], &three));
    }
}
