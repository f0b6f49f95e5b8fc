-- memory_file_search (src/ops/search.rs): a tenant's files by keyword and meaning.
-- $1 user_id, $2 tsquery text over every query term, without the tenant's lexeme (scores) or NULL, $3 query vector or NULL,
-- $4 tags or NULL, $5 candidates per side, $6 tsquery text over the terms worth a lookup or NULL.
-- The "dense" slot (sql/queries/search_files_dense.sql, or an empty CTE) and the "similarity"
-- slot (in braces where used, never in a comment) carry the active model's id, type and operator
-- as literals.
WITH lex AS (
    SELECT f.id FROM memory.files f
    WHERE $6::text IS NOT NULL AND f.user_id = $1 AND f.tsv @@ $6::tsquery AND ($4::text[] IS NULL OR f.tags && $4)
    ORDER BY ts_rank_cd(f.tsv, $2::tsquery) DESC LIMIT $5
){dense}, pool AS (
    SELECT id FROM lex UNION SELECT id FROM dense
)
SELECT f.path, f.title, ''::text,
       CASE WHEN $2::text IS NULL THEN 0 ELSE ts_rank_cd(f.tsv, $2::tsquery) END::float8,
       {similarity}
FROM pool p JOIN memory.files f ON f.user_id = $1 AND f.id = p.id
