-- conversation_search (src/ops/search/mod.rs): a thread's messages (in context or not) ranked
-- by keyword and meaning; or those of every thread an agent reads (the conversation_search tool
-- without a thread), the "thread" slot being a condition on $2 either way. "owner" is `= $1`, or
-- `= ANY($1::text[])` with the caller's spaces (src/ops/search/memories.rs `Owners`). $1 user_id, $2
-- thread_id or agent_id, $3 tsquery text or NULL, $4 query vector or
-- NULL, $5 roles or NULL, $6 start, $7 end, $8 candidates per side, $9 the terms alone (scores:
-- src/pg/fulltext.rs score_query). The "dense" slot
-- (sql/queries/search_messages_dense.sql, or an empty CTE) and the "similarity" slot (in braces
-- where used, never in a comment) carry the active model's id, type and operator as literals.
WITH lex AS (
    SELECT m.id FROM memory.messages m
    WHERE $3 IS NOT NULL AND m.user_id {owner} AND {thread} AND m.tsv @@ $3::tsquery
      AND ($5::text[] IS NULL OR m.role = ANY($5)) AND ($6::timestamptz IS NULL OR m.created_at >= $6)
      AND ($7::timestamptz IS NULL OR m.created_at < $7)
    ORDER BY ts_rank_cd(m.tsv, $9::tsquery) DESC
    LIMIT $8
){dense}, pool AS (
    SELECT id FROM lex UNION SELECT id FROM dense
)
SELECT m.id, m.seq, m.role, m.content, m.created_at,
       CASE WHEN $9 IS NULL THEN 0 ELSE ts_rank_cd(m.tsv, $9::tsquery) END::float8,
       {similarity}, m.thread_id, m.user_id
FROM pool p JOIN memory.messages m ON m.user_id {owner} AND m.id = p.id
