-- The query's terms as a tenant's BM25 statistics see them (memory_query): each lexeme with its
-- document frequency, the tenant's document count and total length, and the tenant's lexeme.
-- $1 user_id, $2 the query's lexemes (src/pg/fulltext.rs `lexemes`: read apart, in a statement of
-- their own, since on Citus this one is routed to the tenant's shard, where the function that
-- reads them could not read other distributed tables).
SELECT l.lexeme, coalesce(x.df, 0)::float8, coalesce(c.docs, 0)::float8,
       coalesce(c.total_len, 0)::float8, memory.tenant_lexeme($1)
FROM unnest($2::text[]) l(lexeme)
LEFT JOIN memory.lexicon x ON x.user_id = $1 AND x.lexeme = l.lexeme
LEFT JOIN memory.corpus c ON c.user_id = $1
ORDER BY l.lexeme

