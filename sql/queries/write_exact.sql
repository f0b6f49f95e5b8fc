-- memory_write: an exact duplicate (sql/queries/write_exact_find.sql found it) is refreshed
-- instead of written again; its id, or no row when it is no longer active. $1 user_id, $2 its id.
UPDATE memory.items SET last_accessed_at = now(), access_count = access_count + 1
WHERE user_id = $1 AND id = $2::uuid AND state = 'active'
RETURNING id::text
