-- The store: an item written or overwritten ($1 user_id, $2 namespace, $3 key, $4 value, $5 ttl,
-- $6 the statement's time: Citus refuses now() in an ON CONFLICT update, docs/citus.md).
-- Returns whether it was created, its id, created_at and updated_at (formatted outside
-- RETURNING: Citus allows only immutable functions there).
WITH w AS (
INSERT INTO memory.store_items AS s (user_id, namespace, key, value, ttl, expires_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6 + $5, $6, $6)
ON CONFLICT (user_id, namespace, key) DO UPDATE
SET value = EXCLUDED.value, ttl = EXCLUDED.ttl, expires_at = EXCLUDED.expires_at,
    -- a put of an item that had expired (unswept) starts it anew
    created_at = CASE WHEN s.expires_at <= EXCLUDED.updated_at THEN EXCLUDED.created_at ELSE s.created_at END,
    updated_at = EXCLUDED.updated_at
RETURNING s.created_at = s.updated_at AS created, s.id::text AS id, s.created_at, s.updated_at
)
SELECT created, id, to_jsonb(created_at), to_jsonb(updated_at) FROM w
