-- The store: one live item ($1 user_id, $2 namespace, $3 key), as JSON; with $4 (refresh_ttl)
-- its expiry is pushed back to now + ttl first ($5 the statement's time: Citus refuses now() and
-- timestamptz + interval with a column in an UPDATE, docs/citus.md). An expired item is not returned (nor refreshed).
WITH refreshed AS (
    UPDATE memory.store_items SET expires_at = memory._seconds_after($5::timestamptz, extract(epoch FROM ttl)::float8)
    WHERE $4 AND user_id = $1 AND namespace = $2 AND key = $3 AND ttl IS NOT NULL AND expires_at > $5::timestamptz
    RETURNING 1
)
SELECT jsonb_build_object('namespace', to_jsonb(namespace), 'key', key, 'value', value,
                          'created_at', created_at, 'updated_at', updated_at)
FROM memory.store_items, (SELECT count(*) FROM refreshed) r
WHERE user_id = $1 AND namespace = $2 AND key = $3 AND (expires_at IS NULL OR expires_at > $5::timestamptz)
