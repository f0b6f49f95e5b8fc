-- The query's terms as a tenant's BM25 statistics see them (memory_query): each lexeme with its
-- document frequency, the tenant's document count and total length, and the tenant's lexeme.
-- $1 user_id, $2 query text, $3 its language when detection is sure (sql/search.sql
-- memory.query_lexemes).
SELECT l.lexeme, coalesce(x.df, 0)::float8, coalesce(c.docs, 0)::float8,
       coalesce(c.total_len, 0)::float8, memory.tenant_lexeme($1)
FROM unnest(memory.query_lexemes($1, $2, $3)) l(lexeme)
LEFT JOIN memory.lexicon x ON x.user_id = $1 AND x.lexeme = l.lexeme
LEFT JOIN memory.corpus c ON c.user_id = $1
ORDER BY l.lexeme

