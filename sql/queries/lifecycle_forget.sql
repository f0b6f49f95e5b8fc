-- memory_forget: soft-delete now, purge later (a superseded memory too: stale facts can be
-- erased). $1 id, $2 tenant or NULL (no tenant set: row-level security, or a superuser naming
-- any memory), $3 days until purge. The answer, then what the event records (src/ops/lifecycle.rs):
-- user_id, thread_id, category. The answer is built outside RETURNING (Citus allows only
-- immutable functions there: docs/citus.md).
WITH gone AS (
    UPDATE memory.items SET state = 'soft_deleted', purge_at = now() + make_interval(days => $3)
    WHERE id = $1::uuid AND ($2::text IS NULL OR user_id = $2) AND state IN ('active', 'superseded')
    RETURNING user_id, id, state, purge_at, thread_id, category
)
SELECT jsonb_build_object('id', id, 'state', state, 'purge_at', purge_at, 'event', 'soft_deleted'),
       user_id, thread_id, category
FROM gone
