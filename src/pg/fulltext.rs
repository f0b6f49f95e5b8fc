//! Full-text pieces every search shares: a query's lexemes as Postgres' english configuration
//! makes them, the tenant's own lexeme, and the tsquery text that keeps a GIN lookup inside
//! the tenant (sql/schema.sql, `memory.tenant_lexeme`).

use crate::pg::spi;

/// The query's lexemes as Postgres' english configuration produces them.
pub fn lexemes(query: &str) -> Vec<String> {
    if query.trim().is_empty() {
        return vec![];
    }
    spi::one_opt::<Vec<String>>(
        "SELECT coalesce(array_agg(DISTINCT lexeme ORDER BY lexeme), '{}') FROM unnest(to_tsvector('english', $1))",
        &[query.into()],
        "parsing the query",
    )
    .unwrap_or_default()
}

/// The tenant's own lexeme, which every memory's and file's tsvector carries
/// (`memory.tenant_lexeme`): ANDed into a tsquery, it keeps a GIN lookup inside the tenant.
pub fn tenant_lexeme(user: &str) -> String {
    spi::one_opt::<String>(
        "SELECT memory.tenant_lexeme($1)",
        &[user.into()],
        "tenant lexeme",
    )
    .unwrap_or_default()
}

/// `'a' | 'b'` — the terms alone, for scoring with `ts_rank_cd`: the tenant's lexeme has no
/// position in a tsvector, so a query that ANDs it in has no cover and ranks every row 0
/// (conversation_search and memory_file_search ranked by meaning alone until 0.12.0).
pub fn score_query(lex: &[String]) -> Option<String> {
    if lex.is_empty() {
        return None;
    }
    let q = |s: &str| format!("'{}'", s.replace('\'', "''"));
    Some(lex.iter().map(|l| q(l)).collect::<Vec<_>>().join(" | "))
}

/// `('a' | 'b') & '<tenant>'` — quoted tsquery text; `None` without terms.
pub fn tsquery(lex: &[String], tenant: &str) -> Option<String> {
    if lex.is_empty() {
        return None;
    }
    let q = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let terms: Vec<String> = lex.iter().map(|l| q(l)).collect();
    Some(format!("({}) & {}", terms.join(" | "), q(tenant)))
}
