//! Hybrid ranking for memory_query: the fusion of every signal SQL gathered for a pool of
//! candidates (the best by vector similarity and by BM25, plus their episode neighbours).
//!
//! score = base + neighbours + thread + actor + time + importance + pinned + recency
//!   base       = w_vec * cosine (spread over the pool's range, at least MIN_COSINE_SPREAD)
//!              + w_lex * BM25 / the pool's best BM25
//!   neighbours = w_hop1 * the best base one `follows` edge away
//!              + w_hop2 * the best base two edges away          (conversational memories only)
//!   thread     = w_thread * BM25 of the memory's thread as one document / the pool's best
//!                                                               (conversational memories only)
//!   actor      = w_actor  * [the query names the memory's actor]
//!   time       = w_time   * [the memory happened within the time the query names]
//!   importance = w_imp * (importance - 1) / 4,  pinned = w_pin * pinned
//!   recency    = w_rec * 2^(-(newest event time in the pool - its event time) / half-life)
//!   update     = for a fact linked (`related_to`) to an older fact it was written after, whose
//!                base it nearly matches (within UPDATE_MARGIN): enough to rank above it
//!
//! # Why neighbours count only between conversational memories
//! An answer often sits next to the turn that matches the question's words ("did you go?" /
//! "yes, last Tuesday"), so a turn borrows from the turns around it in its exchange. Facts are
//! self-contained (docs/design.md "Writing memories"): two facts written one after the other in a
//! thread say nothing about each other, and lending scores between them buried the clear best
//! match under its neighbour (tests `the_obvious_fact_wins`). So edges and thread documents lift
//! only memories that are turns of a conversation: kind `episodic` or `archival`, or written with
//! a `role`. And a neighbour lends its best, not the sum of all: a memory in the middle of a
//! well-matching exchange is not lifted above the turn that matched.
//!
//! # Why a newer fact goes above an older one it nearly ties with
//! Two facts on one subject that a query matches about equally ("Lena's favourite colour is
//! blue." then, later, "... is green now.") are an old and a new statement of the same thing: the
//! newer is the current one. Only near ties count: a newer fact that the query matches clearly
//! less ("Sam has a cat." against "does Sam have a dog?") is not lifted over the older one.
//! Turns of a conversation are not updates of each other, so only facts take part.
//!
//! # Why BM25 is scaled by the pool's best and cosine by the pool's range
//! BM25 is a sum of matched terms' weights with a true zero (nothing matched); when every
//! candidate matched only the same common word their scores are all alike, and stretching them
//! to [0, 1] would turn length noise into a full signal. Cosine has no such zero (unrelated texts
//! score 0.1-0.3 with MiniLM, 0.7 with other models), so it is spread over the pool's range.
//!
//! # Why these weights
//! Tuned on the LoCoMo dev split (760 questions) in steps from the plain 0.5/0.5 fusion, with
//! round values only, so as not to fit the split; every component's contribution is measured in
//! the eval's ablation (bench/results/eval.md), in each shape of data it measures (turns with
//! and without structure, facts). Similarity edges (`related_to`) were tried as a spreading
//! signal too and hurt recall (turn recall@5 0.706 -> 0.661 at weight 0.3), so they only feed
//! the "related" bullets, not the score. Importance, pinning and recency cannot be measured on
//! LoCoMo (every turn is equal there), so their weights are small tie-breakers.

use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub lexical: f64,
    pub vector: f64,
    pub hop1: f64,
    pub hop2: f64,
    pub thread: f64,
    pub actor: f64,
    /// A memory linked to an entity the query names (docs/design.md "Entities").
    pub entity: f64,
    pub time: f64,
    pub importance: f64,
    pub pinned: f64,
    pub recency: f64,
    /// The reranker's judgement (`rerank`), applied to the top of the ranking only.
    pub rerank: f64,
    /// Scales `UPDATE_MARGIN`, how near an older related fact's score a newer one must be to go
    /// above it: 0 switches updates off (the eval's ablation), 1 is the default.
    pub update: f64,
    /// Recency half-life in days.
    pub half_life_days: f64,
}

/// The share of a query (its lexemes weighed by idf, [`known_share`]) the tenant must have
/// written for the keyword side (BM25 and the thread's BM25) to count in full; below it the side
/// counts in proportion ([`lexical_trust`]).
pub const KNOWN_ENOUGH: f64 = 0.5;

/// How much the keyword side is trusted for a query of which `known` (0-1, [`known_share`]) the
/// tenant has written: fully from [`KNOWN_ENOUGH`] up, in proportion below.
///
/// # Why
/// A question asked in another language than the memories (English over German turns) shares
/// only names with them: every turn that names the person matches, the pool's best match gets
/// the full keyword weight, and the ranking fell below the plain vector order (LoCoMo conv-30 in
/// German, English questions: turn recall@5 0.294 against the raw vector order's 0.341;
/// 0.460 with this and queries read in the tenant's usual language, docs/retrieval.md
/// "Languages"). In the tenant's own language most of a question's words have been written
/// before, and nothing changes (English `make eval` within 0.006 of before in every shape).
pub fn lexical_trust(known: f64) -> f64 {
    (known / KNOWN_ENOUGH).clamp(0.0, 1.0)
}

/// `w` for a query of which `known` (0-1, [`known_share`]) the tenant has written: the keyword
/// side (BM25 and the thread's BM25) weighed by [`lexical_trust`], and the priors (recency,
/// importance, pinning) by the share of the content weight left.
///
/// # Why the priors too
/// The priors say nothing about the query: they only tip near ties of the content signals. With
/// the keyword side out (a question in English over Chinese turns), the content scores span
/// half of what they span in the tenant's own language, so a prior at its usual weight tipped
/// ties twice as wide: recency's 0.05 alone pulled turn recall@5 on conv-30 in Chinese with
/// English questions from 0.603 to 0.532, below the plain vector order (0.579;
/// docs/retrieval.md "Languages"). Scaled with the content, a prior keeps the width of tie it
/// tips. Signals read from the query (the time it names, its actor and entities) are evidence
/// in any language and keep their weight. In the tenant's own language nothing changes.
pub fn trusting(w: Weights, known: f64) -> Weights {
    let trust = lexical_trust(known);
    let content = w.lexical + w.vector;
    let left = if content > 0.0 {
        (w.lexical * trust + w.vector) / content
    } else {
        1.0
    };
    Weights {
        lexical: w.lexical * trust,
        thread: w.thread * trust,
        recency: w.recency * left,
        importance: w.importance * left,
        pinned: w.pinned * left,
        ..w
    }
}

/// The share of a query's information the tenant has written: each lexeme weighs its BM25 idf
/// among `docs` memories (`dfs` are the lexemes' document frequencies), and the known ones'
/// weight is divided by the whole's. 0 for a query without lexemes.
///
/// # Why idf, not a count
/// A question in English over Chinese turns shares the people's names with them, and a name
/// is in a third of the turns: counted as one lexeme of three it made the keyword side two
/// thirds trusted, and its matches (every turn naming the person) pulled the ranking below the
/// vector order. Weighed by idf, a name everyone's turns carry says little and a word nobody
/// wrote says much, which is what BM25 itself would say of them.
pub fn known_share(docs: f64, dfs: &[f64]) -> f64 {
    let weight = |df: f64| bm25_idf(docs, df.max(0.0));
    let whole: f64 = dfs.iter().map(|&df| weight(df)).sum();
    if whole <= 0.0 {
        return 0.0;
    }
    dfs.iter()
        .filter(|&&df| df > 0.0)
        .map(|&df| weight(df))
        .sum::<f64>()
        / whole
}

pub const DEFAULT_WEIGHTS: Weights = Weights {
    lexical: 0.5,
    vector: 0.5,
    hop1: 0.3,
    hop2: 0.1,
    thread: 0.3,
    actor: 0.15,
    entity: 0.15,
    time: 0.3,
    importance: 0.05,
    pinned: 0.05,
    recency: 0.05,
    rerank: 1.0,
    update: 1.0,
    half_life_days: 30.0,
};

/// The defaults with the keys of a JSON object replaced (`memory_ext.rank_weights`). Unknown
/// keys and non-numbers are errors naming the key.
pub fn weights_from_json(s: &str) -> Result<Weights, crate::request::RequestError> {
    let bad = |field: &str, reason: &str| crate::request::RequestError {
        field: format!("memory_ext.rank_weights.{field}"),
        reason: reason.into(),
    };
    let v: serde_json::Value = serde_json::from_str(s).map_err(|e| bad("", &e.to_string()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| bad("", "must be a JSON object"))?;
    let mut w = DEFAULT_WEIGHTS;
    for (k, x) in obj {
        let x = x
            .as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| bad(k, "must be a number >= 0"))?;
        match k.as_str() {
            "lexical" => w.lexical = x,
            "vector" => w.vector = x,
            "hop1" => w.hop1 = x,
            "hop2" => w.hop2 = x,
            "thread" => w.thread = x,
            "actor" => w.actor = x,
            "entity" => w.entity = x,
            "time" => w.time = x,
            "importance" => w.importance = x,
            "pinned" => w.pinned = x,
            "recency" => w.recency = x,
            "rerank" => w.rerank = x,
            "update" => w.update = x,
            "half_life_days" if x > 0.0 => w.half_life_days = x,
            _ => return Err(bad(k, "unknown weight (or a half_life_days of 0)")),
        }
    }
    Ok(w)
}

/// One memory in the pool, with what SQL measured for it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidate {
    pub id: String,
    /// Cosine similarity to the query; `None` when the memory has no vector of the active model
    /// (written while the provider was down): it then ranks by its other signals.
    pub similarity: Option<f64>,
    pub bm25: f64,
    pub thread_bm25: f64,
    pub importance: i16,
    pub pinned: bool,
    /// Event time (`happened_at`), in days since the Unix epoch.
    pub happened_days: f64,
    pub actor_named: bool,
    /// Linked to an entity the query names (memory.entity_links).
    pub entity_named: bool,
    /// A turn of a conversation (kind episodic or archival, or written with a role): its
    /// episode neighbours and its thread are evidence for it.
    pub conversational: bool,
    /// An insight (kind `insight`): a background observation about the person, not something
    /// they said; its match counts [`INSIGHT_WEIGHT`] times (docs/design.md "Insights":
    /// "surfaced in retrieval with low weight").
    pub insight: bool,
}

/// What an insight's vector and BM25 match count for, against a fact's.
pub const INSIGHT_WEIGHT: f64 = 0.7;

/// How close (in base score) an older related fact must be for a newer one to go above it.
pub const UPDATE_MARGIN: f64 = 0.1;

/// Edges between pool members, by position.
#[derive(Debug, Clone, Default)]
pub struct Edges {
    /// Episode edges (`follows`): consecutive memories of a thread or a sitting.
    pub follows: Vec<(usize, usize)>,
    /// (newer, older): a memory linked (`related_to`) to one written before it.
    pub related: Vec<(usize, usize)>,
}

/// A ranking signal: the name memory_query's `explain` reports it by, the weights
/// (`memory_ext.rank_weights` keys) that switch it off, and what it is, in words. The one list
/// of signals: the inspector's explain bar, the eval's ablation rows and the tests read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signal {
    pub name: &'static str,
    pub weights: &'static [&'static str],
    pub about: &'static str,
}

/// Every signal, in the order `explain` lists them and the inspector's bar stacks them.
pub const SIGNALS: [Signal; 12] = [
    Signal {
        name: "vector",
        weights: &["vector"],
        about: "vector similarity",
    },
    Signal {
        name: "bm25",
        weights: &["lexical"],
        about: "BM25",
    },
    Signal {
        name: "neighbours",
        weights: &["hop1", "hop2"],
        about: "episode neighbours (follows edges)",
    },
    Signal {
        name: "thread",
        weights: &["thread"],
        about: "thread BM25",
    },
    Signal {
        name: "actor",
        weights: &["actor"],
        about: "actor match",
    },
    Signal {
        name: "entity",
        weights: &["entity"],
        about: "entity links (an entity the query names)",
    },
    Signal {
        name: "time",
        weights: &["time"],
        about: "the time the query names",
    },
    Signal {
        name: "importance",
        weights: &["importance"],
        about: "importance",
    },
    Signal {
        name: "pinned",
        weights: &["pinned"],
        about: "pinning",
    },
    Signal {
        name: "recency",
        weights: &["recency"],
        about: "recency",
    },
    Signal {
        name: "update",
        weights: &["update"],
        about: "updates (a newer related fact above an older near tie)",
    },
    Signal {
        name: "rerank",
        weights: &["rerank"],
        about: "the reranker",
    },
];

/// What each signal added to a memory's score (memory_query's `"explain": true`); they add up
/// to the score. One field per entry of `SIGNALS`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Parts {
    pub vector: f64,
    pub bm25: f64,
    pub neighbours: f64,
    pub thread: f64,
    pub actor: f64,
    pub entity: f64,
    pub time: f64,
    pub importance: f64,
    pub pinned: f64,
    pub recency: f64,
    pub update: f64,
    pub rerank: f64,
}

impl Parts {
    /// The contribution of the signal named `name` (0 for a name not in `SIGNALS`).
    pub fn get(&self, name: &str) -> f64 {
        match name {
            "vector" => self.vector,
            "bm25" => self.bm25,
            "neighbours" => self.neighbours,
            "thread" => self.thread,
            "actor" => self.actor,
            "entity" => self.entity,
            "time" => self.time,
            "importance" => self.importance,
            "pinned" => self.pinned,
            "recency" => self.recency,
            "update" => self.update,
            "rerank" => self.rerank,
            _ => 0.0,
        }
    }

    pub fn total(&self) -> f64 {
        self.named().iter().map(|(_, v)| v).sum()
    }

    /// (signal name, contribution), in the order of `SIGNALS`: the names `explain` reports.
    pub fn named(&self) -> [(&'static str, f64); SIGNALS.len()] {
        SIGNALS.map(|s| (s.name, self.get(s.name)))
    }
}

/// A ranked pool member: its position in the pool, its score and the score's parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub index: usize,
    pub score: f64,
    pub parts: Parts,
}

/// Min-max to [0, 1]; a constant column becomes all zeros (it tells nothing apart).
fn minmax(v: &[f64]) -> Vec<f64> {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if hi > lo {
        v.iter().map(|x| (x - lo) / (hi - lo)).collect()
    } else {
        vec![0.0; v.len()]
    }
}

/// Cosine similarities spread over the pool's range, but over no less than
/// `MIN_COSINE_SPREAD`: in a small pool (a tenant of a few memories) two memories 0.02 apart
/// would otherwise be 0 and 1, and that noise would outweigh every other signal.
fn spread(v: &[f64]) -> Vec<f64> {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(hi.is_finite() && lo.is_finite()) {
        return vec![0.0; v.len()];
    }
    let range = (hi - lo).max(MIN_COSINE_SPREAD);
    v.iter().map(|x| 1.0 - (hi - x) / range).collect()
}

/// The smallest cosine range that counts as a full spread (`spread`). Between a relevant and an
/// unrelated memory MiniLM's cosines differ by 0.3-0.6; a pool of a hundred candidates spans more
/// than 0.2 anyway, so this only matters for small pools.
pub const MIN_COSINE_SPREAD: f64 = 0.2;

/// Scaled by the largest, for scores whose zero means "nothing matched" (BM25): [0, 1], all
/// zeros when nothing matched.
fn by_best(v: &[f64]) -> Vec<f64> {
    let hi = v.iter().copied().fold(0.0, f64::max);
    if hi > 0.0 {
        v.iter().map(|x| x.max(0.0) / hi).collect()
    } else {
        vec![0.0; v.len()]
    }
}

/// Scores the pool; `edges` between pool members by position; `window` is the time the query
/// names (`crate::when::window`), as [start, end) in days since the epoch. Best first; ties
/// keep pool order.
pub fn rank(
    pool: &[Candidate],
    edges: &Edges,
    window: Option<(f64, f64)>,
    w: &Weights,
) -> Vec<Scored> {
    rank_reranked(pool, edges, window, w, &[])
}

/// `rank` with a cross-encoder's judgement of some pool members: `(pool position, logit)`, for
/// the best of a first `rank` (src/ops/search/memories.rs).
///
/// # How the judgement counts
/// The reranker reads the query and one memory, nothing else: it cannot see that a turn answers
/// the question asked two turns before it, when it happened, who said it, or that a newer fact
/// replaced it. So its logit, squashed to (0, 1) by the logistic function (an ms-marco logit of 0
/// is an even chance of relevance), is one more part of the score, weighted `w.rerank`, added
/// before updates are ordered: a memory it finds relevant rises by up to that weight, one it
/// rejects keeps its fused score, and "... is green now." still goes above "... is blue." when
/// the reranker finds them equally relevant. Members it did not read get nothing; they scored
/// lower in the first pass and stay below.
pub fn rank_reranked(
    pool: &[Candidate],
    edges: &Edges,
    window: Option<(f64, f64)>,
    w: &Weights,
    reranked: &[(usize, f32)],
) -> Vec<Scored> {
    let n = pool.len();
    if n == 0 {
        return vec![];
    }
    let sims: Vec<f64> = {
        let floor = pool
            .iter()
            .filter_map(|c| c.similarity)
            .fold(f64::INFINITY, f64::min);
        let floor = if floor.is_finite() { floor } else { 0.0 };
        pool.iter().map(|c| c.similarity.unwrap_or(floor)).collect()
    };
    let lex = by_best(&pool.iter().map(|c| c.bm25).collect::<Vec<_>>());
    let vec = spread(&sims);
    let base: Vec<f64> = (0..n)
        .map(|i| w.lexical * lex[i] + w.vector * vec[i])
        .collect();

    // Episode edges between conversational memories only (the module comment says why).
    let mut adj: HashMap<usize, HashSet<usize>> = HashMap::new();
    for &(a, b) in &edges.follows {
        if a < n && b < n && a != b && pool[a].conversational && pool[b].conversational {
            adj.entry(a).or_default().insert(b);
            adj.entry(b).or_default().insert(a);
        }
    }
    let best = |set: &mut dyn Iterator<Item = usize>| set.map(|j| base[j]).fold(0.0, f64::max);
    let thread = by_best(
        &pool
            .iter()
            .map(|c| if c.conversational { c.thread_bm25 } else { 0.0 })
            .collect::<Vec<_>>(),
    );
    let newest = pool
        .iter()
        .map(|c| c.happened_days)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut scored: Vec<Scored> = (0..n)
        .map(|i| {
            let c = &pool[i];
            let kind = if c.insight { INSIGHT_WEIGHT } else { 1.0 };
            let mut p = Parts {
                vector: kind * w.vector * vec[i],
                bm25: kind * w.lexical * lex[i],
                ..Parts::default()
            };
            if let Some(one) = adj.get(&i) {
                let two: HashSet<usize> = one
                    .iter()
                    .flat_map(|j| adj.get(j).into_iter().flatten().copied())
                    .filter(|k| *k != i && !one.contains(k))
                    .collect();
                p.neighbours =
                    w.hop1 * best(&mut one.iter().copied()) + w.hop2 * best(&mut two.into_iter());
            }
            p.thread = w.thread * thread[i];
            p.actor = w.actor * f64::from(u8::from(c.actor_named));
            p.entity = w.entity * f64::from(u8::from(c.entity_named));
            if let Some((from, to)) = window {
                p.time =
                    w.time * f64::from(u8::from(c.happened_days >= from && c.happened_days < to));
            }
            p.importance = w.importance * (f64::from(c.importance.clamp(1, 5)) - 1.0) / 4.0;
            p.pinned = w.pinned * f64::from(u8::from(c.pinned));
            let age = (newest - c.happened_days).max(0.0);
            p.recency = w.recency * (-age / w.half_life_days * std::f64::consts::LN_2).exp();
            Scored {
                index: i,
                score: p.total(),
                parts: p,
            }
        })
        .collect();
    for &(i, logit) in reranked {
        if let Some(s) = scored.get_mut(i) {
            let add = w.rerank / (1.0 + (-f64::from(logit)).exp());
            s.parts.rerank = add;
            s.score += add;
        }
    }
    // Updates, in the order they were written: a chain of updates keeps its order.
    let mut related: Vec<(usize, usize)> = edges
        .related
        .iter()
        .copied()
        .filter(|&(new, old)| {
            new < n
                && old < n
                && new != old
                && !pool[new].conversational
                && !pool[old].conversational
        })
        .collect();
    related.sort_by(|a, b| pool[a.0].happened_days.total_cmp(&pool[b.0].happened_days));
    for (new, old) in related {
        let (s_new, s_old) = (scored[new].score, scored[old].score);
        if s_old >= s_new && s_old - s_new < UPDATE_MARGIN * w.update {
            // Just above the older one: 1e-6 keeps the order without changing the figures.
            let lift = s_old - s_new + 1e-6;
            scored[new].parts.update += lift;
            scored[new].score += lift;
        }
    }
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    scored
}

/// Half keyword, half meaning, each min-max normalised over the candidates; a NaN similarity (no
/// vector) counts as the lowest. conversation_search's score.
pub fn fuse_pair(lexical: &[f64], similarity: &[f64]) -> Vec<f64> {
    let floor = similarity
        .iter()
        .copied()
        .filter(|x| !x.is_nan())
        .fold(f64::INFINITY, f64::min);
    let floor = if floor.is_finite() { floor } else { 0.0 };
    let sims: Vec<f64> = similarity
        .iter()
        .map(|x| if x.is_nan() { floor } else { *x })
        .collect();
    let (l, v) = (minmax(lexical), minmax(&sims));
    l.iter().zip(&v).map(|(a, b)| 0.5 * a + 0.5 * b).collect()
}

/// `fuse_pair`'s scores and the candidates' order by them, best first; ties broken by
/// `tie(a, b)` (an `Ordering` of candidate indexes).
pub fn fused_order(
    lexical: &[f64],
    similarity: &[f64],
    tie: impl Fn(usize, usize) -> std::cmp::Ordering,
) -> (Vec<f64>, Vec<usize>) {
    let scores = fuse_pair(lexical, similarity);
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then_with(|| tie(a, b)));
    (scores, order)
}

/// BM25's term-frequency saturation and length normalisation (Okapi BM25 with k1 = 0.9,
/// b = 0.4: tuned on the LoCoMo dev split, where memories are one or two sentences and a
/// repeated word says little more than one occurrence).
pub const BM25_K1: f64 = 0.9;
pub const BM25_B: f64 = 0.4;

/// Inverse document frequency of a term in `df` of `docs` documents (the "+1" form, never
/// negative: a term in most memories still counts a little).
pub fn bm25_idf(docs: f64, df: f64) -> f64 {
    (1.0 + (docs - df + 0.5) / (df + 0.5)).ln()
}

/// Average document length for BM25 from a corpus' totals (at least 1, so that an empty or
/// one-word corpus does not divide by zero).
pub fn bm25_avg_len(docs: f64, total_len: f64) -> f64 {
    (total_len / docs.max(1.0)).max(1.0)
}

/// One term's BM25 contribution: `tf` occurrences in a document of `len` terms.
pub fn bm25_term(idf: f64, tf: f64, len: f64, avg_len: f64) -> f64 {
    idf * tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * (1.0 - BM25_B + BM25_B * len / avg_len))
}

/// Most memories the lexical side fetches and scores for one query.
///
/// # Why a cap, and why 300
/// Every match costs a heap fetch (a memory is ~2 KB, a third of a page): at a million
/// memories, 530 matches of one term took 2.3-2.8 ms of a query. A term in a tenth of a large
/// tenant's memories would have the lexical side fetch and score thousands of rows for an idf
/// near zero (measured: 3,800 matches, 97 ms of a 103 ms query at 20k memories), and pushes the
/// planner from the full-text index to walking all of the tenant's rows. Rare terms carry the
/// lexical signal, and every query term still counts in the BM25 of every candidate either side
/// finds (the vector side and episode hops fill the pool). On the LoCoMo dev split the cap made
/// no difference from 1,000 down to 150 (tR@5 0.707, sR@10 0.949 at 1,000, 300 and 150, top 100;
/// tR@5 0.709 for a top 5 at each); 300 keeps twice the smallest cap measured flat.
pub const MAX_LEXICAL_MATCHES: f64 = 300.0;

/// Candidates the lexical (BM25) side contributes to the pool for a request of `top_k`, before
/// episode neighbours are added: two per result, at least 10, at most 50.
///
/// # Why these bounds
/// Every pool row and its episode neighbours are fetched and scored. At a million memories,
/// 10 rows a side instead of 20 cut the pool statement by ~18% (p50 22.0 -> 18.1 ms in an A/B of
/// the same queries), and on the LoCoMo dev split a top-5 request kept its recall (tR@5 0.709
/// with 10 a side, 0.705 with 20: `EVAL_TOP_K=5 make eval`): episode hops widen the pool anyway.
/// 50 a side holds sR@10 0.95 for a top 100. The lexical side is cheap once it has its matches
/// (at most `MAX_LEXICAL_MATCHES`, all scored anyway), so it keeps two per result.
pub fn lexical_side(top_k: usize) -> usize {
    (2 * top_k).clamp(10, 50)
}

/// Candidates the vector (HNSW) side contributes for a request of `top_k`: one per result, at
/// least 5, at most 50.
///
/// # Why one per result
/// The HNSW walk is the dearest part of a query and grows with the rows it must return: a
/// tenant's rows are a fraction of its partition's graph, so each extra row means walking past
/// others' rows (at a million memories, 10 rows instead of 5 took memory_query from p50/p95
/// 7.4/9.8 to 8.5/11.9 ms in interleaved runs). On the LoCoMo dev split it cost nothing
/// measurable: tR@5 of a top-5 request 0.709 with 10 vector candidates, 0.707 with 5 (0.708
/// with 7); a top 10 scored tR@10 0.784 with 20 or with 10; a top 100 still takes 50.
pub fn vector_side(top_k: usize) -> usize {
    top_k.clamp(5, 50)
}

/// The query terms worth a full-text index lookup, given each term's document frequency in the
/// tenant: rarest first while their frequencies add up to at most `cap`. Terms in no memory are
/// dropped (nothing to find); when even the rarest term is in more than `cap` memories there is
/// none, and the vector side alone proposes candidates.
pub fn candidate_terms(dfs: &[(String, f64)], cap: f64) -> Vec<String> {
    let mut sorted: Vec<&(String, f64)> = dfs.iter().filter(|(_, df)| *df > 0.0).collect();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let mut total = 0.0;
    let mut out = vec![];
    for (term, df) in sorted {
        if total + df > cap {
            break;
        }
        total += df;
        out.push(term.clone());
    }
    out
}

/// Whether `actor` is named in `query` as a whole word (case-insensitive): "What does Melanie
/// do to relax?" names the actor "Melanie", not "Mel".
pub fn names_actor(query: &str, actor: &str) -> bool {
    let actor = actor.trim().to_lowercase();
    if actor.is_empty() {
        return false;
    }
    // "Jon去年…" names Jon: Han and Latin letters are both alphanumeric.
    let q = crate::language::words_apart(query).to_lowercase();
    let words: Vec<&str> = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let parts: Vec<&str> = actor
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    !parts.is_empty()
        && words
            .windows(parts.len())
            .any(|win| win == parts.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_saturates_and_normalises_length() {
        let idf = bm25_idf(100.0, 1.0);
        assert!(idf > bm25_idf(100.0, 50.0) && bm25_idf(100.0, 100.0) > 0.0);
        // More occurrences score more, with diminishing returns.
        let (one, two, ten) = (
            bm25_term(idf, 1.0, 10.0, 10.0),
            bm25_term(idf, 2.0, 10.0, 10.0),
            bm25_term(idf, 10.0, 10.0, 10.0),
        );
        assert!(one < two && two < ten && ten < idf * (BM25_K1 + 1.0));
        assert!(two - one > (ten - two) / 8.0);
        // At average length and tf 1 the score is exactly idf.
        assert!((one - idf).abs() < 1e-12);
        // Longer documents score less for the same tf.
        assert!(bm25_term(idf, 1.0, 30.0, 10.0) < one);
        assert_eq!(bm25_avg_len(0.0, 0.0), 1.0);
        assert_eq!(bm25_avg_len(4.0, 40.0), 10.0);
    }

    fn c(id: &str, sim: Option<f64>, bm25: f64) -> Candidate {
        Candidate {
            id: id.into(),
            similarity: sim,
            bm25,
            importance: 2,
            ..Default::default()
        }
    }

    #[test]
    fn fused_order_sorts_by_score_then_tie() {
        // Scores: 0.5*lex + 0.5*sim, min-max each: [0.5, 0.5, 1.0, 0.0].
        let (scores, order) = fused_order(&[0.0, 1.0, 1.0, 0.0], &[1.0, 0.0, 1.0, 0.0], |a, b| {
            b.cmp(&a)
        });
        assert_eq!(scores, vec![0.5, 0.5, 1.0, 0.0]);
        assert_eq!(
            order,
            vec![2, 1, 0, 3],
            "the tie between 0 and 1 goes to the tie-breaker"
        );
    }

    fn follows(f: &[(usize, usize)]) -> Edges {
        Edges {
            follows: f.to_vec(),
            related: vec![],
        }
    }

    fn order(pool: &[Candidate], f: &[(usize, usize)]) -> Vec<String> {
        rank(pool, &follows(f), None, &DEFAULT_WEIGHTS)
            .iter()
            .map(|s| pool[s.index].id.clone())
            .collect()
    }

    #[test]
    fn an_insight_counts_less_than_a_fact_it_matches_as_well() {
        let fact = c("fact", Some(0.6), 2.0);
        let insight = Candidate {
            insight: true,
            ..c("insight", Some(0.6), 2.0)
        };
        let low = c("low", Some(0.2), 0.0);
        assert_eq!(
            order(&[insight.clone(), fact.clone(), low.clone()], &[]),
            vec!["fact", "insight", "low"]
        );
        let r = rank(&[insight, fact, low], &follows(&[]), None, &DEFAULT_WEIGHTS);
        let (i, f) = (
            r.iter().find(|s| s.index == 0).unwrap(),
            r.iter().find(|s| s.index == 1).unwrap(),
        );
        assert!((i.parts.vector - INSIGHT_WEIGHT * f.parts.vector).abs() < 1e-12);
        assert!(
            (i.score - i.parts.total()).abs() < 1e-9,
            "explain still adds up"
        );
    }

    fn turn(id: &str, sim: Option<f64>, bm25: f64) -> Candidate {
        Candidate {
            conversational: true,
            ..c(id, sim, bm25)
        }
    }

    #[test]
    fn fuses_lexical_and_vector() {
        let pool = vec![
            c("lex", Some(0.1), 10.0),
            c("vec", Some(0.9), 0.0),
            c("both", Some(0.8), 8.0),
        ];
        assert_eq!(order(&pool, &[])[0], "both");
    }

    #[test]
    fn episode_neighbours_lend_score_within_a_conversation() {
        // "answer" matches nothing itself but follows the turn that matches the question.
        let pool = vec![
            turn("question-turn", Some(0.9), 9.0),
            turn("answer", Some(0.3), 0.0),
            turn("other", Some(0.35), 0.5),
        ];
        let pos = |o: &Vec<String>, id: &str| o.iter().position(|x| x == id).unwrap();
        let without = order(&pool, &[]);
        let with = order(&pool, &[(0, 1)]);
        assert!(pos(&without, "answer") > pos(&without, "other"));
        assert!(pos(&with, "answer") < pos(&with, "other"));
        // Facts written one after the other lend nothing to each other.
        let facts: Vec<Candidate> = pool
            .iter()
            .map(|t| Candidate {
                conversational: false,
                ..t.clone()
            })
            .collect();
        assert_eq!(order(&facts, &[(0, 1)]), without);
    }

    /// The four facts of docs/retrieval.md's example, with the similarities MiniLM gives them
    /// for "where does Sam live now?" and the BM25 each gets for "sam" (the only query term any
    /// of them has; shorter texts score a little more), written to one thread in this order.
    fn sam() -> Vec<Candidate> {
        vec![
            c("Sam is allergic to peanuts.", Some(0.576), 0.110),
            c(
                "Sam works as a nurse at the city hospital.",
                Some(0.620),
                0.098,
            ),
            c("Sam has a dog named Biscuit.", Some(0.555), 0.112),
            c(
                "Sam moved from Boston to Denver in 2024.",
                Some(0.672),
                0.104,
            ),
        ]
    }

    #[test]
    fn the_obvious_fact_wins() {
        let pool = sam();
        let chain = [(1, 0), (2, 1), (3, 2)];
        assert_eq!(
            order(&pool, &chain)[0],
            "Sam moved from Boston to Denver in 2024."
        );
        // Even written as turns of one conversation, the neighbour of the best match does not
        // overtake it: a neighbour lends its best, which is never more than the match itself.
        let turns: Vec<Candidate> = pool
            .iter()
            .map(|t| Candidate {
                conversational: true,
                ..t.clone()
            })
            .collect();
        assert_eq!(
            order(&turns, &chain)[0],
            "Sam moved from Boston to Denver in 2024."
        );
    }

    #[test]
    fn an_exact_rare_term_wins_over_vague_similarity() {
        // "What is kestrel?" — one memory has the rare term; by meaning, others are closer.
        let pool = vec![
            c("The office router is in the hallway.", Some(0.45), 0.0),
            c("Guest wifi password is kestrel-42.", Some(0.38), 6.2),
            c("Remember to reset the modem monthly.", Some(0.41), 0.0),
            c("Jo likes birds of prey.", Some(0.10), 0.0),
        ];
        assert_eq!(order(&pool, &[])[0], "Guest wifi password is kestrel-42.");
    }

    #[test]
    fn a_newer_fact_goes_above_the_older_one_it_updates() {
        // The older one matches a little better ("is blue." is closer to the question).
        let old = c("Lena's favourite colour is blue.", Some(0.74), 2.2);
        let new = c("Lena's favourite colour is green now.", Some(0.70), 2.0);
        let other = c("Lena plays tennis on Sundays.", Some(0.30), 0.0);
        let pool = [old.clone(), other.clone(), new.clone()];
        let linked = Edges {
            follows: vec![],
            related: vec![(2, 0)],
        };
        let r = rank(&pool, &linked, None, &DEFAULT_WEIGHTS);
        assert_eq!(pool[r[0].index].id, new.id);
        assert!(r[0].parts.update > 0.0 && (r[0].parts.total() - r[0].score).abs() < 1e-12);
        // Not linked, or updates weighed 0: the better match stays first.
        assert_eq!(
            rank(&pool, &Edges::default(), None, &DEFAULT_WEIGHTS)[0].index,
            0
        );
        let off = Weights {
            update: 0.0,
            ..DEFAULT_WEIGHTS
        };
        assert_eq!(rank(&pool, &linked, None, &off)[0].index, 0);
        // A newer fact the query matches clearly less is not lifted ("does Sam have a dog?").
        let dog = c("Sam has a dog named Biscuit.", Some(0.80), 4.0);
        let cat = c("Sam has a cat too.", Some(0.62), 0.5);
        let pool = [dog.clone(), other, cat];
        let r = rank(
            &pool,
            &Edges {
                follows: vec![],
                related: vec![(2, 0)],
            },
            None,
            &DEFAULT_WEIGHTS,
        );
        assert_eq!(pool[r[0].index].id, dog.id);
        assert_eq!(r.iter().map(|s| s.parts.update).sum::<f64>(), 0.0);
        // Turns of a conversation are not updates of each other.
        let turns: Vec<Candidate> = [old, new]
            .iter()
            .map(|t| Candidate {
                conversational: true,
                ..t.clone()
            })
            .collect();
        let r = rank(
            &turns,
            &Edges {
                follows: vec![],
                related: vec![(1, 0)],
            },
            None,
            &DEFAULT_WEIGHTS,
        );
        assert_eq!(r[0].index, 0);
    }

    #[test]
    fn a_named_time_prefers_memories_of_that_time() {
        let mut may = c("Went hiking with Jo.", Some(0.60), 1.0);
        let mut june = c("Went climbing with Jo.", Some(0.62), 1.0);
        may.happened_days = 19_480.0;
        june.happened_days = 19_520.0;
        let pool = [may, june];
        let r = rank(
            &pool,
            &Edges::default(),
            Some((19_478.0, 19_509.0)),
            &DEFAULT_WEIGHTS,
        );
        assert_eq!(pool[r[0].index].id, "Went hiking with Jo.");
        assert_eq!(
            rank(&pool, &Edges::default(), None, &DEFAULT_WEIGHTS)[0].index,
            1
        );
    }

    #[test]
    fn parts_add_up_to_the_score() {
        let mut pool = sam();
        pool[0].actor_named = true;
        pool[1].pinned = true;
        pool[2].conversational = true;
        pool[3].conversational = true;
        pool[3].thread_bm25 = 1.0;
        for s in rank(
            &pool,
            &follows(&[(3, 2)]),
            Some((0.0, 1.0)),
            &DEFAULT_WEIGHTS,
        ) {
            assert!((s.parts.total() - s.score).abs() < 1e-12);
            let named: f64 = s.parts.named().iter().map(|x| x.1).sum();
            assert!((named - s.score).abs() < 1e-12);
        }
    }

    #[test]
    fn missing_vectors_rank_by_the_rest() {
        let pool = vec![c("novec", None, 10.0), c("vec", Some(0.5), 0.0)];
        let r = rank(&pool, &Edges::default(), None, &DEFAULT_WEIGHTS);
        assert_eq!(pool[r[0].index].id, "novec");
        assert!(r.iter().all(|x| x.score.is_finite()));
    }

    #[test]
    fn every_part_is_a_signal_and_every_signal_a_weight() {
        // Each field set to a distinct power of two: the total shows every one was counted once.
        let p = Parts {
            vector: 1.0,
            bm25: 2.0,
            neighbours: 4.0,
            thread: 8.0,
            actor: 16.0,
            entity: 32.0,
            time: 64.0,
            importance: 128.0,
            pinned: 256.0,
            recency: 512.0,
            update: 1024.0,
            rerank: 2048.0,
        };
        assert_eq!(p.total(), 4095.0);
        let names: HashSet<&str> = SIGNALS.iter().map(|s| s.name).collect();
        assert_eq!(names.len(), SIGNALS.len());
        for s in SIGNALS {
            assert!(!s.weights.is_empty(), "{}", s.name);
            for w in s.weights {
                let json = format!("{{\"{w}\": 0}}");
                assert!(
                    weights_from_json(&json).is_ok(),
                    "{} names weight {w}",
                    s.name
                );
            }
        }
    }

    #[test]
    fn small_signals_break_ties() {
        let mut a = c("a", Some(0.5), 1.0);
        let mut b = c("b", Some(0.5), 1.0);
        a.importance = 1;
        b.importance = 5;
        assert_eq!(order(&[a.clone(), b.clone()], &[])[0], "b");
        b.importance = 1;
        a.happened_days = 20_000.0;
        b.happened_days = 19_635.0;
        assert_eq!(order(&[a, b], &[])[0], "a");
    }

    #[test]
    fn weight_overrides() {
        let w = weights_from_json(r#"{"hop1": 0, "thread": 0.5, "time": 0}"#).unwrap();
        assert_eq!(
            (w.hop1, w.thread, w.time, w.lexical),
            (0.0, 0.5, 0.0, DEFAULT_WEIGHTS.lexical)
        );
        assert_eq!(
            weights_from_json(r#"{"nope": 1}"#).unwrap_err().field,
            "memory_ext.rank_weights.nope"
        );
        assert!(weights_from_json(r#"{"hop1": -1}"#).is_err());
        assert!(weights_from_json("[1]").is_err());
    }

    #[test]
    fn actor_names() {
        assert!(names_actor("What does Melanie do to relax?", "Melanie"));
        assert!(!names_actor("What does Melanie do?", "Mel"));
        assert!(names_actor("did jon smith call", "Jon Smith"));
        assert!(!names_actor("anything", ""));
        assert!(names_actor("Jon去年失去了银行家的工作。", "Jon"));
        assert!(!names_actor("Jonathan去年", "Jon"));
    }

    #[test]
    fn candidate_terms_take_the_rarest_under_the_cap() {
        let dfs = |v: &[(&str, f64)]| -> Vec<(String, f64)> {
            v.iter().map(|(t, d)| (t.to_string(), *d)).collect()
        };
        assert_eq!(
            candidate_terms(
                &dfs(&[
                    ("dinner", 600.0),
                    ("paris", 30.0),
                    ("zebra", 0.0),
                    ("went", 500.0)
                ]),
                1000.0
            ),
            vec!["paris".to_string(), "went".to_string()]
        );
        // Every term common: the lexical side proposes nothing.
        assert!(candidate_terms(&dfs(&[("note", 5000.0), ("alpha", 2000.0)]), 1000.0).is_empty());
        assert!(candidate_terms(&dfs(&[("ghost", 0.0)]), 1000.0).is_empty());
        // Ties go by the term, so the choice is deterministic.
        assert_eq!(
            candidate_terms(&dfs(&[("b", 600.0), ("a", 600.0)]), 1000.0),
            vec!["a".to_string()]
        );
    }

    #[test]
    fn pool_grows_with_top_k_within_bounds() {
        assert_eq!(lexical_side(1), 10);
        assert_eq!(lexical_side(5), 10);
        assert_eq!(lexical_side(10), 20);
        assert_eq!(lexical_side(25), 50);
        assert_eq!(lexical_side(100), 50);
        assert_eq!(vector_side(1), 5);
        assert_eq!(vector_side(5), 5);
        assert_eq!(vector_side(10), 10);
        assert_eq!(vector_side(100), 50);
    }

    #[test]
    fn rerank_lifts_what_it_finds_relevant_and_keeps_the_sum() {
        let pool = sam();
        let w = DEFAULT_WEIGHTS;
        let first = rank(&pool, &Edges::default(), None, &w);
        let before: Vec<usize> = first.iter().map(|s| s.index).collect();
        // The reranker read the best three: rejects the first two, is sure of the third.
        let judged = [(before[0], -8.0), (before[1], -8.0), (before[2], 8.0)];
        let r = rank_reranked(&pool, &Edges::default(), None, &w, &judged);
        assert_eq!(r[0].index, before[2], "{r:?}");
        for s in &r {
            assert!((s.parts.total() - s.score).abs() < 1e-12);
        }
        // The fourth was not read: no rerank part, and it stays below all three.
        assert_eq!(r[3].index, before[3]);
        assert_eq!(r[3].parts.rerank, 0.0);
        // Weight 0 is the ablation: the order is rank's.
        let w0 = Weights { rerank: 0.0, ..w };
        let r0 = rank_reranked(&pool, &Edges::default(), None, &w0, &judged);
        assert_eq!(r0.iter().map(|s| s.index).collect::<Vec<_>>(), before);
    }

    #[test]
    fn an_update_stays_above_what_it_updates_when_the_reranker_ties_them() {
        // "Lena's favourite colour is blue." (older) and "... is green now." (newer, related to
        // it): the reranker finds both relevant, the older a little more.
        let pool = vec![
            Candidate {
                happened_days: 1.0,
                ..c("blue", Some(0.70), 2.0)
            },
            Candidate {
                happened_days: 3.0,
                ..c("green", Some(0.68), 1.8)
            },
            Candidate {
                happened_days: 2.0,
                ..c("tennis", Some(0.30), 0.5)
            },
        ];
        let edges = Edges {
            related: vec![(1, 0)],
            ..Edges::default()
        };
        let r = rank_reranked(
            &pool,
            &edges,
            None,
            &DEFAULT_WEIGHTS,
            &[(0, 7.9), (1, 7.5), (2, -9.0)],
        );
        assert_eq!(pool[r[0].index].id, "green", "{r:?}");
        assert_eq!(pool[r[1].index].id, "blue");
        assert!(r[0].parts.rerank > 0.0 && r[0].parts.update > 0.0);
    }
    #[test]
    fn known_share_weighs_lexemes_by_idf() {
        // Every lexeme written: all of it known.
        assert_eq!(known_share(100.0, &[3.0, 40.0]), 1.0);
        // Nothing written, or no lexemes: nothing known.
        assert_eq!(known_share(100.0, &[0.0, 0.0]), 0.0);
        assert_eq!(known_share(100.0, &[]), 0.0);
        // A name in a third of the memories beside two words never written: far less than the
        // one in three a count gives.
        let share = known_share(100.0, &[33.0, 0.0, 0.0]);
        assert!(share < 0.1, "{share}");
        // A rare known word with a common unknown one counts for more than half.
        assert!(known_share(100.0, &[1.0, 0.0]) > 0.4);
        assert!(lexical_trust(known_share(100.0, &[33.0, 0.0, 0.0])) < 0.2);
    }

    #[test]
    fn trusting_scales_the_keyword_side_and_the_priors() {
        // In the tenant's own language nothing changes.
        assert_eq!(trusting(DEFAULT_WEIGHTS, 0.9), DEFAULT_WEIGHTS);
        // Nothing of the query written: no keyword side, the priors halved with the content
        // weight (0.5 of 1.0 left), the query's own signals kept.
        let w = trusting(DEFAULT_WEIGHTS, 0.0);
        assert_eq!((w.lexical, w.thread), (0.0, 0.0));
        assert!((w.recency - DEFAULT_WEIGHTS.recency / 2.0).abs() < 1e-12);
        assert!((w.importance - DEFAULT_WEIGHTS.importance / 2.0).abs() < 1e-12);
        assert!((w.pinned - DEFAULT_WEIGHTS.pinned / 2.0).abs() < 1e-12);
        assert_eq!(
            (w.vector, w.time, w.actor, w.entity),
            (0.5, DEFAULT_WEIGHTS.time, DEFAULT_WEIGHTS.actor, 0.15)
        );
        // The ablation's all-zero content leaves the priors as they are.
        let none = Weights {
            lexical: 0.0,
            vector: 0.0,
            ..DEFAULT_WEIGHTS
        };
        assert_eq!(trusting(none, 0.0).recency, DEFAULT_WEIGHTS.recency);
    }
}
