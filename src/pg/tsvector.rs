//! `memory.bm25(tsv, terms, idf, avg_len)`: a memory's BM25 score for a query, read straight
//! from its stored tsvector.
//!
//! # Why in Rust
//! memory_query scores every candidate row by BM25 (the lexical side sorts its matches by it,
//! and every pool row gets it). In SQL that was `unnest(tsv)` hash-joined to the query's terms
//! in a subplan per row: 7-8 µs a row, ~3 ms of a 10 ms statement at 100k memories (EXPLAIN
//! ANALYZE, bench data). Here it is a binary search per query term over the tsvector's sorted
//! lexemes, with the query's terms parsed once per statement (cached in `fn_extra`).
//!
//! # The format read here
//! Postgres' `TSVectorData` (src/include/tsearch/ts_type.h), after detoasting: an int32 varlena
//! header, an int32 lexeme count `n`, `n` 32-bit `WordEntry` bit-fields (`haspos:1, len:11,
//! pos:20`, allocated from the low bit on little-endian machines and from the high bit on
//! big-endian ones), then the lexeme bytes. `pos` is a lexeme's offset from the end of the
//! entries, lexemes are sorted bytewise, and a lexeme with positions is followed, at the next
//! 2-byte boundary, by a uint16 count of positions. The count is the term frequency (a lexeme
//! without positions counts once), exactly what `array_length(positions, 1)` gave in SQL.

use memory_core::rank;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::varlena::{vardata_any, varsize_any_exhdr};

/// A tsvector's bytes after the varlena header.
pub struct TsVector<'a> {
    count: usize,
    entries: &'a [u8],
    strings: &'a [u8],
}

impl<'a> TsVector<'a> {
    /// Reads the format above; `None` when the bytes are too short for what they announce
    /// (never for a tsvector Postgres made).
    pub fn parse(data: &'a [u8]) -> Option<Self> {
        let count = i32::from_ne_bytes(data.get(..4)?.try_into().ok()?);
        let count = usize::try_from(count).ok()?;
        let entries = data.get(4..4 + 4 * count)?;
        Some(TsVector {
            count,
            entries,
            strings: &data[4 + 4 * count..],
        })
    }

    /// Lexemes in the tsvector (`length(tsv)`).
    pub fn len(&self) -> usize {
        self.count
    }

    /// (has positions, length, offset) of entry `i`.
    fn entry(&self, i: usize) -> (bool, usize, usize) {
        let w = u32::from_ne_bytes(self.entries[4 * i..4 * i + 4].try_into().unwrap_or([0; 4]));
        #[cfg(target_endian = "little")]
        let (haspos, len, pos) = (w & 1, (w >> 1) & 0x7ff, w >> 12);
        #[cfg(target_endian = "big")]
        let (haspos, len, pos) = (w >> 31, (w >> 20) & 0x7ff, w & 0xfffff);
        (haspos == 1, len as usize, pos as usize)
    }

    fn lexeme(&self, i: usize) -> &'a [u8] {
        let (_, len, pos) = self.entry(i);
        self.strings.get(pos..pos + len).unwrap_or_default()
    }

    /// How often `lexeme` occurs (0 when absent).
    pub fn tf(&self, lexeme: &[u8]) -> u32 {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.lexeme(mid).cmp(lexeme) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let (haspos, len, pos) = self.entry(mid);
                    if !haspos {
                        return 1;
                    }
                    let at = (pos + len + 1) & !1; // SHORTALIGN
                    return self
                        .strings
                        .get(at..at + 2)
                        .map_or(1, |b| u32::from(u16::from_ne_bytes([b[0], b[1]])).max(1));
                }
            }
        }
        0
    }
}

/// The query side of a BM25 score: each term with its idf, and the raw argument bytes they were
/// parsed from (to tell whether the next call asks the same).
struct Query {
    key: Vec<u8>,
    terms: Vec<(Vec<u8>, f64)>,
}

/// The bytes of a varlena argument.
///
/// # Safety
/// `datum` must be a non-null varlena datum of the current call.
unsafe fn bytes<'a>(datum: pg_sys::Datum) -> &'a [u8] {
    // SAFETY: detoasting gives a 4-byte-header copy (or the datum itself) that lives in the
    // call's memory context, which outlives this call's use of the slice.
    unsafe {
        let v = pg_sys::pg_detoast_datum(datum.cast_mut_ptr());
        std::slice::from_raw_parts(vardata_any(v) as *const u8, varsize_any_exhdr(v))
    }
}

/// `memory.bm25(tsv tsvector, terms text[], idf float8[], avg_len float8) RETURNS float8`
/// (declared STRICT in sql/search.sql): the sum over `terms` present in `tsv` of
/// `rank::bm25_term`, with the document's length `length(tsv) - 1` (a memory's tsvector holds
/// its tenant's lexeme besides its words).
#[pg_extern(sql = false)]
fn bm25(fcinfo: pg_sys::FunctionCallInfo) -> f64 {
    // SAFETY: Postgres calls this with four non-null arguments of the declared types (STRICT);
    // fn_extra belongs to this function's FmgrInfo and holds only what this function put there,
    // allocated in fn_mcxt, which lives as long as the FmgrInfo.
    unsafe {
        let tsv = bytes(pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0));
        let (terms_raw, idf_raw) = (
            bytes(pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 1)),
            bytes(pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 2)),
        );
        let avg_len = pgrx::fcinfo::pg_getarg::<f64>(fcinfo, 3).unwrap_or(1.0);
        let flinfo = (*fcinfo).flinfo;
        let mut query = (*flinfo).fn_extra as *mut Query;
        let same = !query.is_null() && {
            let k = &(*query).key;
            k.len() == terms_raw.len() + idf_raw.len()
                && k[..terms_raw.len()] == *terms_raw
                && k[terms_raw.len()..] == *idf_raw
        };
        if !same {
            let terms =
                pgrx::fcinfo::pg_getarg::<Vec<Option<String>>>(fcinfo, 1).unwrap_or_default();
            let idf = pgrx::fcinfo::pg_getarg::<Vec<Option<f64>>>(fcinfo, 2).unwrap_or_default();
            let parsed = Query {
                key: [terms_raw, idf_raw].concat(),
                terms: terms
                    .into_iter()
                    .zip(idf)
                    .filter_map(|(t, i)| Some((t?.into_bytes(), i?)))
                    .collect(),
            };
            if query.is_null() {
                let mut cx = pgrx::PgMemoryContexts::For((*flinfo).fn_mcxt);
                query = cx.leak_and_drop_on_delete(parsed);
                (*flinfo).fn_extra = query.cast();
            } else {
                *query = parsed;
            }
        }
        let Some(doc) = TsVector::parse(tsv) else {
            return 0.0;
        };
        let len = doc.len().saturating_sub(1) as f64;
        (*query)
            .terms
            .iter()
            .map(|(t, idf)| match doc.tf(t) {
                0 => 0.0,
                tf => rank::bm25_term(*idf, f64::from(tf), len, avg_len),
            })
            .sum()
    }
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    /// memory.bm25 agrees with the SQL formula it replaced, on tsvectors Postgres made: with
    /// positions (repeated words), without (stripped), with weights, lexemes absent, and
    /// long lexemes next to short ones (the bytewise sort order).
    #[pg_test]
    fn bm25_matches_sql() {
        let diff = Spi::get_one::<f64>(
            "WITH docs(tsv) AS (VALUES
                (to_tsvector('english', 'the cat sat on the cat mat with another cat')),
                (setweight(to_tsvector('english', 'dogs and cats and dogs'), 'A') || 'tenantlexeme'::tsvector),
                (strip(to_tsvector('english', 'a cat without positions, cat'))),
                (to_tsvector('english', 'supercalifragilistic mat z')),
                (''::tsvector)),
             q(lexeme, idf) AS (VALUES ('cat', 1.5::float8), ('mat', 0.7), ('dog', 2.0), ('zebra', 3.0),
                                       ('supercalifragilist', 0.3), ('z', 0.1))
             SELECT max(abs(memory.bm25(d.tsv, (SELECT array_agg(lexeme) FROM q), (SELECT array_agg(idf) FROM q), 3.0)
                    - coalesce((SELECT sum(q.idf * coalesce(array_length(u.positions, 1), 1) * 1.9
                                        / (coalesce(array_length(u.positions, 1), 1) + 0.9 * (0.6 + 0.4 * (length(d.tsv) - 1) / 3.0)))
                                FROM unnest(d.tsv) u JOIN q ON q.lexeme = u.lexeme), 0)))
             FROM docs d",
        )
        .unwrap()
        .unwrap();
        assert!(diff < 1e-9, "bm25 differs from the SQL formula by {diff}");
        // Matches at all (not zero against zero).
        let s = Spi::get_one::<f64>(
            "SELECT memory.bm25(to_tsvector('english', 'cat cat'), '{cat}', '{1.0}', 1.0)",
        )
        .unwrap()
        .unwrap();
        assert!(s > 1.0, "{s}");
    }
}
