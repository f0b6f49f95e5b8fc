-- memory_query's seeds: the best memories by BM25 and by vector similarity, as two arrays of ids
-- (lexical, dense: `explain` reports which side found a memory), then each one's owner in the
-- same order (the pool statement looks a memory up by its whole key, so that with spaces each
-- lookup reads its owner's partition only).
-- sql/queries/search_memories_pool.sql then widens them along episodes and gathers every signal.
--
-- # Why a statement of its own
-- This is the part whose right plan depends on the call's values: an HNSW walk for a large
-- tenant, an exact scan of a small tenant's few rows, a GIN lookup only through the query's
-- rarer terms. It is planned for every call (custom plan); the pool statement, whose lookups
-- are all by key, keeps one generic plan per backend. Planning both as one statement cost
-- ~1.25 ms a call at a million memories (pg_stat_statements), this one alone ~0.3 ms.
--
-- src/ops/search.rs fills in the template slots (in braces, never in a comment): "dense", the
-- vector side (sql/queries/search_memories_dense.sql, or an empty CTE); "lexical", false when no query term is worth a
-- full-text lookup (memory_core::rank::candidate_terms); "filters", extra AND conditions on
-- `i` whose values are parameters. The active model's id, type and operator are written in as
-- literals so that the planner can use that model's partial HNSW index.
--
-- "owner" is `= $1` for the caller alone, `= ANY($1::text[])` with the spaces granted to it
-- (src/ops/search/memories.rs `Owners`: one search over every owner, not one per owner).
--
-- "match" is how the keyword side finds its rows: `i.tsv @@ $3::tsquery`, or, when the ids
-- matching it were read through the full-text index first (sql/queries/search_memories_lexical.sql
-- says why), `i.id = ANY($9::uuid[])`: those ids again, each through row-level security.
--
-- $1 user_id (or the owners' keys), $2 query vector (text form) or NULL, $3 tsquery text or NULL, $4 query lexemes,
-- $5 BM25 candidates, $6 each lexeme's idf in the tenant (aligned with $4), $7 the tenant's
-- average memory length, $8 vector candidates, $9 the keyword candidates or NULL. A memory's
-- BM25 is memory.bm25 (src/pg/tsvector.rs).
WITH lex AS (
    SELECT i.id, i.user_id
    FROM memory.items i
    WHERE {lexical} AND i.user_id {owner} AND {state} AND {match} {filters}
    -- Ties broken by id: by the rows' physical order, which every read's access bookkeeping
    -- moves, the same query twice in a row found other seeds at the limit (5 of 40 at 100k).
    ORDER BY memory.bm25(i.tsv, $4::text[], $6::float8[], $7::float8) DESC, i.id
    LIMIT $5
){dense}
-- lex and dense are read twice, so each is materialized once: the two arrays of a side align.
SELECT ARRAY(SELECT id FROM lex), ARRAY(SELECT id FROM dense),
       ARRAY(SELECT user_id FROM lex), ARRAY(SELECT user_id FROM dense)
