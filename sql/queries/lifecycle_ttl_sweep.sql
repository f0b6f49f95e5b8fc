-- Soft-deletes a batch of TTL candidates (lifecycle_ttl_candidates.sql): state soft_deleted, purge_at =
-- now() + purge_after_days. The conditions are checked again, so a memory retrieved, pinned or
-- raised in importance since the scan stays. $1 user_ids, $2 ids (parallel arrays),
-- $3 ttl_days, $4 ttl_min_importance, $5 purge_after_days, $6 record events (memory.events,
-- node worker, op ttl, one per memory). Returns how many.
WITH gone AS (
    UPDATE memory.items i SET state = 'soft_deleted', purge_at = now() + make_interval(days => $5)
    FROM unnest($1::text[], $2::uuid[]) AS c(user_id, id)
    WHERE i.user_id = c.user_id AND i.id = c.id
      AND i.state = 'active' AND NOT i.pinned AND i.importance < $4
      AND i.last_accessed_at < now() - make_interval(days => $3)
      -- A read the worker has not counted yet (sql/queries/access_fold.sql) is a retrieval.
      AND NOT EXISTS (SELECT FROM memory.access_queue q WHERE q.user_id = i.user_id AND i.id = ANY (q.ids))
    RETURNING i.user_id, i.id, i.category
), ev AS (
    INSERT INTO memory.events (user_id, node, op, status, memory_id, category)
    SELECT user_id, 'worker', 'ttl', 'ok', id::text, category FROM gone WHERE $6
)
SELECT count(*) FROM gone
