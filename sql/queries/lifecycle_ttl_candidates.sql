-- The TTL sweep's candidates (docs/design.md "TTL and soft delete"): unpinned, below the importance floor, not retrieved
-- for ttl_days. $1 tenant or NULL (all the caller may see), $2 ttl_days, $3 ttl_min_importance.
-- A plain read (no row locks): the rows are soft-deleted afterwards in short batches
-- (lifecycle_ttl_sweep.sql), which check the conditions again under the row lock.
-- No index on last_accessed_at (it would make every retrieval's bookkeeping update non-HOT):
-- this reads each partition once (bench/results/lifecycle.md has the time at a million).
-- Oldest first, by tenant: the batches (and the revisions their soft deletes take) follow the
-- order the memories were written in, not where a row happens to sit in its partition (which
-- vacuum and HOT updates change: a delta header listing two expirations flipped between runs).
SELECT user_id, id::text
FROM memory.items
WHERE ($1::text IS NULL OR user_id = $1) AND state = 'active' AND NOT pinned
  AND importance < $3 AND last_accessed_at < now() - make_interval(days => $2)
ORDER BY user_id, created_at, id
