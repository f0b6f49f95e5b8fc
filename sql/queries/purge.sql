-- memory_purge: removes soft-deleted memories past purge_at (their relation edges go with them,
-- ON DELETE CASCADE); history keeps a PURGE event. $1 tenant or NULL.
WITH gone AS (
    DELETE FROM memory.items
    WHERE ($1::text IS NULL OR user_id = $1) AND state = 'soft_deleted' AND purge_at <= now()
    RETURNING 1
)
SELECT count(*) FROM gone
