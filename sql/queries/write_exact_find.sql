-- memory_write: the exact duplicate of a new memory (the same normalised text), if any: the
-- oldest one's id, or no row. $1 user_id, $2 text.
-- A read by key with one generic plan (src/pg/spi.rs `rows_generic`): most writes have no
-- duplicate, and the refresh (sql/queries/write_exact.sql) is an UPDATE, which is planned for
-- each call; as one UPDATE, every write paid that planning (~0.2 ms) to find nothing.
SELECT id::text FROM memory.items
WHERE user_id = $1 AND state = 'active'
  AND content_hash = md5(lower(regexp_replace(btrim($2), '\s+', ' ', 'g')))
ORDER BY created_at, id
LIMIT 1
