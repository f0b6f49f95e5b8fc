//! Token accounting with tiktoken (tiktoken, as Letta counts; docs/design.md "Core memory blocks").
//!
//! # Why counts are stored per message
//! A thread can hold tens of thousands of messages; re-tokenising them on every
//! `context_usage` call would cost ~1 ms per 2,000 words each time. `message_append` counts a
//! message once ([`message_tokens`]) and stores it; usage is then a SUM over stored counts.

use crate::error::{SqlError, SqlState};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// GPT-4 / GPT-3.5 / text-embedding-3 (the default).
    Cl100kBase,
    /// GPT-4o, GPT-4.1, o-series, GPT-5.
    O200kBase,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TokenError {
    #[error("unknown encoding \"{0}\"")]
    UnknownEncoding(String),
    #[error("context_window must be positive, got {0}")]
    ContextWindow(i64),
    #[error("threshold must be between 0.01 and 1, got {0}")]
    Threshold(f64),
}

impl SqlError for TokenError {
    fn sqlstate(&self) -> SqlState {
        SqlState::InvalidParameterValue
    }
    fn hint(&self) -> Option<String> {
        match self {
            TokenError::UnknownEncoding(_) => Some("use cl100k_base or o200k_base".into()),
            _ => None,
        }
    }
}

impl FromStr for Encoding {
    type Err = TokenError;
    fn from_str(s: &str) -> Result<Self, TokenError> {
        match s {
            "cl100k_base" => Ok(Encoding::Cl100kBase),
            "o200k_base" => Ok(Encoding::O200kBase),
            other => Err(TokenError::UnknownEncoding(
                other.chars().take(40).collect(),
            )),
        }
    }
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
        }
    }

    /// The ranks are compiled into tiktoken-rs; the first use per process builds the encoder
    /// (80–250 ms, 25–45 MB, ENVIRONMENT.md), later uses are free: tiktoken-rs keeps one
    /// `LazyLock` per encoding, so a Postgres backend loads each at most once.
    fn bpe(self) -> &'static tiktoken_rs::CoreBPE {
        match self {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        }
    }

    /// Tokens of `text` as ordinary text: special-token strings a user typed (for example
    /// `<|endoftext|>`) are counted as the text they are, never as control tokens.
    ///
    /// # Why chunks
    /// tiktoken's byte-pair merge is superlinear in the length of one pre-tokenised piece
    /// (measured, release build: 100 KB of `a` 33 ms, 1 MB 1.07 s), and a backend cannot be
    /// cancelled while inside it. Long texts are therefore counted in chunks of about
    /// [`CHUNK_BYTES`], cut only where both encodings' pre-tokenisers cut anyway (before a
    /// single space or newline between two non-space characters), so the total is exact. A
    /// run with no such place (one giant "word") is cut hard; that can shift the count by a
    /// token per cut, on input that is not language anyway.
    pub fn count(self, text: &str) -> usize {
        let bpe = self.bpe();
        chunks(text).map(|c| bpe.count_ordinary(c)).sum()
    }
}

/// Target chunk size for [`Encoding::count`], in bytes: small enough that a hard cut bounds
/// the quadratic merge (8 KB: ~0.1 ms), large enough that real text is cut rarely.
pub const CHUNK_BYTES: usize = 8 * 1024;

fn chunks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = cut_point(rest);
        let (head, tail) = rest.split_at(cut);
        rest = tail;
        Some(head)
    })
}

/// Where to end the next chunk of `s`: all of it when short, else the last exact cut before
/// [`CHUNK_BYTES`] * 2, else a hard cut at a character boundary.
fn cut_point(s: &str) -> usize {
    if s.len() <= CHUNK_BYTES * 2 {
        return s.len();
    }
    let b = s.as_bytes();
    let lo = CHUNK_BYTES / 2;
    let hi = CHUNK_BYTES * 2;
    let is_ws = |c: u8| c.is_ascii_whitespace();
    // Search backwards from `hi` so chunks stay near the upper size.
    let exact = (lo..hi)
        .rev()
        .find(|&i| (b[i] == b' ' || b[i] == b'\n') && !is_ws(b[i - 1]) && !is_ws(b[i + 1]))
        .or_else(|| cjk_cut(s, lo, hi));
    match exact {
        Some(i) => i,
        None => (CHUNK_BYTES..=hi)
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(s.len()),
    }
}

/// Chinese and Japanese put no spaces between sentences: the last place in `s[lo..hi]` before a
/// full-width full stop, comma, question or exclamation mark (。、！？，) that follows a letter.
/// Both encodings' pre-tokenisers end a run of letters there and start the next piece with the
/// mark (it may lead the letters after it), so the count is exact there too.
fn cjk_cut(s: &str, lo: usize, hi: usize) -> Option<usize> {
    let mut last = None;
    let mut prev_letter = false;
    for (i, c) in s.char_indices().take_while(|(i, _)| *i < hi) {
        if i >= lo && prev_letter && matches!(c, '。' | '、' | '！' | '？' | '，') {
            last = Some(i);
        }
        prev_letter = c.is_alphabetic();
    }
    last
}

/// Framing tokens per chat message (OpenAI cookbook `num_tokens_from_messages`: 3 for current
/// models: `<|start|>`, the role separator and `<|end|>`).
pub const TOKENS_PER_MESSAGE: usize = 3;
/// Extra token when a message carries a `name` (same source).
pub const TOKENS_PER_NAME: usize = 1;

/// What one stored message costs in a chat prompt: framing + role + content, plus name and tool
/// calls when present (tool calls as their JSON text, which is how providers serialise them).
pub fn message_tokens(
    enc: Encoding,
    role: &str,
    content: &str,
    name: Option<&str>,
    tool_calls_json: Option<&str>,
) -> usize {
    let mut n = TOKENS_PER_MESSAGE + enc.count(role) + enc.count(content);
    if let Some(name) = name {
        n += enc.count(name) + TOKENS_PER_NAME;
    }
    if let Some(tc) = tool_calls_json {
        n += enc.count(tc);
    }
    n
}

/// `context_usage`'s figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Usage {
    pub blocks_tokens: i64,
    pub messages_tokens: i64,
    pub total_tokens: i64,
    pub context_window: i64,
    pub ratio: f64,
}

pub fn check_window(context_window: i64) -> Result<i64, TokenError> {
    if context_window > 0 {
        Ok(context_window)
    } else {
        Err(TokenError::ContextWindow(context_window))
    }
}

pub fn usage(
    blocks_tokens: i64,
    messages_tokens: i64,
    context_window: i64,
) -> Result<Usage, TokenError> {
    let context_window = check_window(context_window)?;
    let total = blocks_tokens + messages_tokens;
    Ok(Usage {
        blocks_tokens,
        messages_tokens,
        total_tokens: total,
        context_window,
        ratio: total as f64 / context_window as f64,
    })
}

/// docs/design.md "Compaction": compact at 80% of the window by default. True when
/// `total_tokens >= threshold * context_window` (docs/api.md).
///
/// # Why decimal
/// SQL passes `threshold` as `real`; 0.8 as an f32 is 0.800000011920929, so a float product
/// would call exactly 800 of 1,000 tokens "below 80%". The caller passes the threshold's
/// shortest decimal form (what Postgres prints), and the comparison is done exactly in
/// integers: at the threshold is true, one token below is false.
pub fn needs_compaction(u: &Usage, threshold: &str) -> Result<bool, TokenError> {
    let value: f64 = threshold.parse().unwrap_or(f64::NAN);
    if !(MIN_THRESHOLD..=1.0).contains(&value) {
        return Err(TokenError::Threshold(value));
    }
    let (int, frac) = threshold.split_once('.').unwrap_or((threshold, ""));
    let frac = frac.trim_end_matches('0');
    if frac.len() > 12 || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        // Not a plain decimal (exponent notation, very long fractions): the float comparison
        // is as good as the input.
        return Ok(u.total_tokens as f64 >= value * u.context_window as f64);
    }
    let num: i128 = format!("{int}{frac}").parse().unwrap_or(0);
    let den = 10i128.pow(frac.len() as u32);
    Ok(u.total_tokens as i128 * den >= num * u.context_window as i128)
}

/// Smallest accepted compaction threshold: below 1% of the window compaction would run on
/// every turn, which is a mistake, not a policy.
pub const MIN_THRESHOLD: f64 = 0.01;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_python_tiktoken() {
        // "tiktoken is great!" is 6 tokens in cl100k_base in the OpenAI cookbook's
        // How_to_count_tokens_with_tiktoken example; ENVIRONMENT.md checked that tiktoken-rs
        // 0.12 matches Python tiktoken.
        let cl = Encoding::Cl100kBase;
        assert_eq!(cl.count("hello world"), 2);
        assert_eq!(cl.count(""), 0);
        assert_eq!(cl.count("tiktoken is great!"), 6);
        let o2 = Encoding::O200kBase;
        assert_eq!(o2.count("hello world"), 2);
        // Special-token text counts as ordinary text, never panics.
        assert!(cl.count("<|endoftext|>") > 1);
    }

    #[test]
    fn chunked_counts_are_exact_on_text() {
        let bpe = tiktoken_rs::cl100k_base_singleton();
        let words = "The quick brown fox, jumping over 12 lazy dogs; it's 3.14 o'clock.\nNew line  with  double spaces and unicode: café naïve 東京. ";
        for reps in [1, 500, 2000] {
            let text = words.repeat(reps);
            assert_eq!(
                Encoding::Cl100kBase.count(&text),
                bpe.count_ordinary(&text),
                "{reps}"
            );
            let o2 = tiktoken_rs::o200k_base_singleton();
            assert_eq!(
                Encoding::O200kBase.count(&text),
                o2.count_ordinary(&text),
                "{reps}"
            );
        }
    }

    #[test]
    fn chunked_counts_are_exact_on_text_without_spaces() {
        // Japanese and Chinese, well past the chunk size: cut at their sentence marks, the total
        // equals one count of the whole.
        let ja = "私は東京の小さな会社でエンジニアとして働いています。週末には公園で犬と散歩をします、天気が良ければ！".repeat(400);
        let zh = "我住在里斯本，在一所学校当老师。周末我喜欢去海边散步？".repeat(500);
        for text in [ja.as_str(), zh.as_str()] {
            assert!(text.len() > 4 * CHUNK_BYTES);
            assert!(chunks(text).count() > 2);
            for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
                assert_eq!(enc.count(text), enc.bpe().count_ordinary(text), "{enc:?}");
            }
        }
    }

    #[test]
    fn chunking_cuts_only_at_character_boundaries() {
        // A whitespace-free run of multi-byte characters must be cut hard without panicking.
        let text = "é東".repeat(20_000);
        let n = Encoding::Cl100kBase.count(&text);
        let exact = tiktoken_rs::cl100k_base_singleton().count_ordinary(&text);
        assert!(
            n.abs_diff(exact) <= text.len() / CHUNK_BYTES + 1,
            "{n} vs {exact}"
        );
        assert_eq!(chunks(&text).map(str::len).sum::<usize>(), text.len());
    }

    #[test]
    fn encodings_parse() {
        assert_eq!("o200k_base".parse::<Encoding>(), Ok(Encoding::O200kBase));
        let e = "gpt2".parse::<Encoding>().unwrap_err();
        assert_eq!(e.sqlstate(), SqlState::InvalidParameterValue);
    }

    #[test]
    fn message_framing() {
        let cl = Encoding::Cl100kBase;
        // 3 framing + "user" (1) + "hello world" (2)
        assert_eq!(message_tokens(cl, "user", "hello world", None, None), 6);
        assert_eq!(
            message_tokens(cl, "tool", "hello world", Some("search"), None),
            3 + 1 + 2 + 1 + 1
        );
    }

    #[test]
    fn threshold_boundary() {
        let at = usage(300, 500, 1000).unwrap();
        assert_eq!(at.ratio, 0.8);
        assert!(needs_compaction(&at, "0.8").unwrap());
        let below = usage(300, 499, 1000).unwrap();
        assert!(!needs_compaction(&below, "0.8").unwrap());
        let over = usage(300, 501, 1000).unwrap();
        assert!(needs_compaction(&over, "0.8").unwrap());
        // 0.14 * 100 is 14.000000000000002 in f64 (checked in Python); exactly 14 here.
        assert!(needs_compaction(&usage(0, 14, 100).unwrap(), "0.14").unwrap());
        assert!(!needs_compaction(&usage(0, 13, 100).unwrap(), "0.14").unwrap());
        assert!(needs_compaction(&usage(0, 1000, 1000).unwrap(), "1").unwrap());
        for bad in ["0", "-0.5", "1.5", "NaN", "x", "0.001"] {
            assert!(needs_compaction(&at, bad).is_err(), "{bad}");
        }
        assert!(usage(1, 1, 0).is_err());
    }
}
