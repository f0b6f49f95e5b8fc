-- The query's terms as a tenant's BM25 statistics see them (memory_query): each lexeme with its
-- document frequency, the tenant's document count and total length, and the tenant's lexeme.
-- $1 user_id, $2 query text.
SELECT l.lexeme, coalesce(x.df, 0)::float8, coalesce(c.docs, 0)::float8,
       coalesce(c.total_len, 0)::float8, memory.tenant_lexeme($1)
FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', $2))) l
LEFT JOIN memory.lexicon x ON x.user_id = $1 AND x.lexeme = l.lexeme
LEFT JOIN memory.corpus c ON c.user_id = $1
ORDER BY l.lexeme

