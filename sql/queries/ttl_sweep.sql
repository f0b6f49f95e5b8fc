-- memory_ttl_sweep (seed 003 §7): unpinned, below the importance floor, not retrieved for
-- ttl_days -> soft_deleted, purge_at = now() + purge_after_days. $1 tenant or NULL (all the
-- caller may see), $2 ttl_days, $3 ttl_min_importance, $4 purge_after_days.
-- No index on last_accessed_at (it would make every retrieval's bookkeeping update non-HOT):
-- this reads each partition once, a few seconds a day at a million memories.
WITH gone AS (
    UPDATE memory.items SET state = 'soft_deleted', purge_at = now() + make_interval(days => $4)
    WHERE ($1::text IS NULL OR user_id = $1) AND state = 'active' AND NOT pinned
      AND importance < $3 AND last_accessed_at < now() - make_interval(days => $2)
    RETURNING 1
)
SELECT count(*) FROM gone
