-- The query's terms as the statistics of the caller's memories and its granted spaces' see them
-- together (memory_query across spaces, src/ops/search/memories.rs `Owners`): one corpus, so that
-- one BM25 ranks every owner's memories alike. The columns of sql/queries/search_terms.sql.
-- $1 the caller's user_id, $2 the query's lexemes, $3 every owner's key (the caller's first).
SELECT l.lexeme,
       coalesce((SELECT sum(x.df) FROM memory.lexicon x
                 WHERE x.user_id = ANY($3::text[]) AND x.lexeme = l.lexeme), 0)::float8,
       coalesce(c.docs, 0)::float8, coalesce(c.total_len, 0)::float8, memory.tenant_lexeme($1)
FROM unnest($2::text[]) l(lexeme)
CROSS JOIN (SELECT sum(docs) AS docs, sum(total_len) AS total_len
            FROM memory.corpus WHERE user_id = ANY($3::text[])) c
ORDER BY l.lexeme
