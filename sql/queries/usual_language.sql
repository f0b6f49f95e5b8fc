-- The language a tenant usually writes in: the most common of its last 25 memories' (ties by
-- name), as memory._usual_language (sql/search.sql) reads it; run directly from
-- src/pg/fulltext.rs with a kept plan, not through the PL/pgSQL function. $1 user_id.
SELECT r.language
FROM (SELECT i.language FROM memory.items i WHERE i.user_id = $1 ORDER BY i.updated_at DESC LIMIT 25) r
WHERE r.language IS NOT NULL
GROUP BY r.language ORDER BY count(*) DESC, r.language LIMIT 1
