-- memory_forget: soft-delete now, purge later (a superseded memory too: stale facts can be erased). $1 id, $2 tenant or NULL (no tenant set: row-level
-- security, or a superuser naming any memory), $3 days until purge, $4 record an event
-- (memory.events: node hotpath, op delete).
WITH gone AS (
    UPDATE memory.items SET state = 'soft_deleted', purge_at = now() + make_interval(days => $3)
    WHERE id = $1::uuid AND ($2::text IS NULL OR user_id = $2) AND state IN ('active', 'superseded')
    RETURNING user_id, id, state, purge_at, thread_id, category
), ev AS (
    INSERT INTO memory.events (user_id, thread_id, node, op, status, memory_id, category)
    SELECT user_id, thread_id, 'hotpath', 'delete', 'ok', id::text, category FROM gone WHERE $4
)
SELECT jsonb_build_object('id', id, 'state', state, 'purge_at', purge_at, 'event', 'soft_deleted') FROM gone
