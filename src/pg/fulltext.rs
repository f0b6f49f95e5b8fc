//! Full-text pieces every search shares: a query's lexemes in its language, the tenant's own
//! lexeme, and the tsquery text that keeps a GIN lookup inside the tenant (sql/schema.sql,
//! `memory.tenant_lexeme`).

use crate::pg::spi;

/// The query's lexemes (docs/api.md "Languages"): read in the language it is written in when
/// detection is sure, and in the tenant's default language (English without one), both; a
/// text matches in its own language (`memory.text_tsvector`). The default's reading keeps a
/// short query that detection cannot place ("Lissabon?") matching the tenant's texts, and an
/// English query over English texts reads as it always did.
pub fn lexemes(user: &str, query: &str) -> Vec<String> {
    if query.trim().is_empty() {
        return vec![];
    }
    // The tenant's language as `tenant_language` has it for this statement ('' for none), so
    // that memory.query_lexemes does not read it again.
    let tenant = tenant_language(user).unwrap_or_default();
    spi::one_opt::<Vec<String>>(
        include_str!("../../sql/queries/query_lexemes.sql"),
        &[
            user.into(),
            query.into(),
            query_language(query).into(),
            tenant.into(),
        ],
        "parsing the query",
    )
    .unwrap_or_default()
}

/// The language a query is written in, when detection is sure of it.
pub fn query_language(query: &str) -> Option<&'static str> {
    memory_core::language::detect(query)
}

/// The language to read a query's words in (its time words, `memory_core::when::window_in`):
/// the detected one, else the tenant's default (memory.settings), else the one it usually writes
/// in (`memory._usual_language`), else none (English rules).
pub fn reading_language(user: &str, query: &str) -> Option<String> {
    query_language(query)
        .map(str::to_string)
        .or_else(|| tenant_language(user))
}

/// The tenant's default language (memory.settings), else the one it usually writes in
/// (`memory._usual_language`). Read once per statement and
/// tenant: a query needs it for its time words and for its lexemes (sql/search.sql
/// `memory.query_lexemes` takes it), and reading it twice cost ~0.3 ms a memory_query
/// (pg_stat_statements, docs/performance.md). A write in the same statement cannot change it
/// for a query: the usual language is the one of the tenant's last 25 memories.
pub fn tenant_language(user: &str) -> Option<String> {
    thread_local! {
        static READ: super::statement::Memo<String, Option<String>> =
            const { super::statement::Memo::new() };
    }
    READ.with(|m| m.with(user.to_string(), |u| read_tenant_language(u), Clone::clone))
}

fn read_tenant_language(user: &str) -> Option<String> {
    // Two statements: on Citus one would be routed whole to the settings' shard, and the
    // function's own read of memory.items would then run nested on a shard (refused).
    spi::rows_generic(
        "SELECT language FROM memory.settings WHERE user_id = $1",
        &[user.into()],
        "reading the default language",
        |r| r.get::<String>(1),
    )
    .into_iter()
    .flatten()
    .next()
    .or_else(|| {
        spi::rows_generic(
            "SELECT memory._usual_language($1)",
            &[user.into()],
            "reading the usual language",
            |r| r.get::<String>(1),
        )
        .into_iter()
        .flatten()
        .next()
    })
}

/// The event-time window `query` names (`memory_core::when`), read in its language.
pub fn time_window(
    user: &str,
    query: &str,
    reference: memory_core::when::Time,
) -> Option<memory_core::when::Window> {
    memory_core::when::window_in(query, reference, reading_language(user, query).as_deref())
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
