-- memory_forget: soft-delete now, purge later. $1 id, $2 tenant or NULL (no tenant set: row-level
-- security, or a superuser naming any memory), $3 days until purge.
UPDATE memory.items SET state = 'soft_deleted', purge_at = now() + make_interval(days => $3)
WHERE id = $1::uuid AND ($2::text IS NULL OR user_id = $2) AND state = 'active'
RETURNING jsonb_build_object('id', id, 'state', state, 'purge_at', purge_at, 'event', 'soft_deleted')
