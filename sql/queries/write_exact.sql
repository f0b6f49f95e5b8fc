-- memory_write: an exact duplicate (same normalised text) is refreshed instead of written again;
-- its id, or no row. $1 user_id, $2 text.
UPDATE memory.items SET last_accessed_at = now(), access_count = access_count + 1
WHERE user_id = $1 AND state = 'active'
  AND content_hash = md5(lower(regexp_replace(btrim($2), '\s+', ' ', 'g')))
  AND id = (SELECT id FROM memory.items WHERE user_id = $1 AND state = 'active'
              AND content_hash = md5(lower(regexp_replace(btrim($2), '\s+', ' ', 'g')))
            ORDER BY created_at LIMIT 1)
RETURNING id::text
