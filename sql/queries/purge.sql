-- memory_purge: removes soft-deleted memories past purge_at (their relation edges go with them,
-- ON DELETE CASCADE); history keeps a PURGE event. Also drops consolidation fingerprints older
-- than $2 days (they no longer suppress a re-check), candidate marks as old, and usage rows older than a week (the caps
-- are per day). $1 tenant or NULL. Returns (memories purged, fingerprints pruned).
WITH gone AS (
    DELETE FROM memory.items
    WHERE ($1::text IS NULL OR user_id = $1) AND state = 'soft_deleted' AND purge_at <= now()
    RETURNING 1
), fingerprints AS (
    DELETE FROM memory.consolidation_fingerprints
    WHERE ($1::text IS NULL OR user_id = $1) AND checked_at < now() - make_interval(days => $2)
    RETURNING 1
), seen AS (
    DELETE FROM memory.consolidation_seen
    WHERE ($1::text IS NULL OR user_id = $1) AND seen_at < now() - make_interval(days => $2)
), usage AS (
    DELETE FROM memory.consolidation_usage
    WHERE ($1::text IS NULL OR user_id = $1) AND day < current_date - 7
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM fingerprints)
