-- Retrieval records access (the TTL sweep and consolidation read it). $1 user_id, $2 ids.
UPDATE memory.items SET last_accessed_at = now(), access_count = access_count + 1
WHERE user_id = $1 AND id = ANY($2::uuid[])
