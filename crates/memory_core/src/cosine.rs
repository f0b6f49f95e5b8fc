//! Cosine similarities on one scale, whichever built-in model made the vectors.
//!
//! Every cosine memory_ext compares or reports is read on all-MiniLM-L6-v2's scale (the
//! reference): `memory_ext.merge_threshold` (0.95) and `link_threshold` (0.80), consent's
//! corroboration, consolidation's band, memory_query's `threshold` and `similarity`, and the
//! ranking's least cosine spread (`rank::MIN_COSINE_SPREAD`). They were all chosen on that
//! model's cosines.
//!
//! # Why a scale per model
//! Models spread their cosines differently. On the LoCoMo dev split (2,760 turns, each turn's
//! nearest neighbour in its conversation) MiniLM's nearest-neighbour cosines are p50 0.743,
//! p75 0.800, p99.5 0.947; multilingual-e5-small's are 0.934, 0.948, 0.983, and any two of its
//! turns have a median cosine of 0.857. Read with MiniLM's thresholds, e5 merged a quarter of a
//! conversation's English turns into others and more than half of its Chinese ones (a turn at
//! 0.95 counted as a paraphrase), linked every memory to three neighbours, and its ranking saw
//! a question's candidates 0.06 apart where MiniLM's are 0.27 apart (the spread's floor then
//! flattened the vector side to a third of its weight).
//!
//! The two models' nearest-neighbour quantiles lie on a line (p10 to p99.5 within 0.005 of
//! `reference = -3.140 + 4.156 * e5`), and so do their question-to-turn cosines, on a line of
//! their own (a query prefix shifts them: e5's `query: `). So a model has two scales, measured
//! once per model (bench/cosine_scale.py, docs/retrieval.md "Cosine scales"): between stored
//! texts (what writes compare) and from a query to a stored text (what searches compare), and
//! a threshold on the reference scale is the same share of a model's pairs whichever model it
//! is. Providers' models (OpenAI, Ollama) are read as they come: they were not measured.

/// A model's cosines against the reference's: `reference = offset + slope * cosine`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub offset: f64,
    pub slope: f64,
}

impl Scale {
    /// The reference model's own scale, and that of every model not measured.
    pub const REFERENCE: Scale = Scale {
        offset: 0.0,
        slope: 1.0,
    };

    /// A cosine of this model's on the reference scale, within [-1, 1].
    pub fn to_reference(self, cosine: f64) -> f64 {
        (self.offset + self.slope * cosine).clamp(-1.0, 1.0)
    }

    /// The cosine of this model's that is `reference` on the reference scale (thresholds
    /// handed to SQL, which compares the model's own cosines). Not clamped: a threshold past
    /// 1 is one no pair reaches.
    pub fn from_reference(self, reference: f64) -> f64 {
        (reference - self.offset) / self.slope
    }

    /// `expr` (an SQL float8 cosine of this model's) on the reference scale, as SQL.
    pub fn sql(self, expr: &str) -> String {
        if self == Scale::REFERENCE {
            return expr.to_string();
        }
        format!(
            "greatest(-1, least(1, {:?} + {:?} * {expr}))",
            self.offset, self.slope
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const E5: Scale = Scale {
        offset: -3.1401,
        slope: 4.1559,
    };

    #[test]
    fn the_reference_reads_as_it_comes() {
        assert_eq!(Scale::REFERENCE.to_reference(0.42), 0.42);
        assert_eq!(Scale::REFERENCE.from_reference(0.95), 0.95);
        assert_eq!(Scale::REFERENCE.sql("x"), "x");
    }

    #[test]
    fn thresholds_go_both_ways() {
        // MiniLM's merge threshold is e5's 0.984: its 99.5th nearest-neighbour percentile.
        let t = E5.from_reference(0.95);
        assert!((t - 0.9841).abs() < 1e-3, "{t}");
        assert!((E5.to_reference(t) - 0.95).abs() < 1e-9);
        // e5's median pair of turns (0.857) is an unrelated pair on the reference scale.
        assert!((E5.to_reference(0.857) - 0.422).abs() < 1e-3);
        // Clamped to a cosine's range.
        assert_eq!(E5.to_reference(1.0), 1.0);
        assert_eq!(E5.to_reference(0.0), -1.0);
    }

    #[test]
    fn sql_is_the_same_line() {
        assert_eq!(E5.sql("c"), "greatest(-1, least(1, -3.1401 + 4.1559 * c))");
    }
}
