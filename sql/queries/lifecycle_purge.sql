-- memory_purge: removes soft-deleted memories past purge_at (their relation edges go with them,
-- ON DELETE CASCADE); history keeps a PURGE event. Also drops consolidation fingerprints older
-- than $2 days (they no longer suppress a re-check), candidate marks as old, and usage rows older than a week (the caps
-- are per day), and operational events older than $3 days (0: kept). $4: record an event per
-- purged memory (node worker, op purge). $5: change-log rows older than this many days go (0:
-- kept; a delta header asked for a revision before them says "too many changes", src/ops/delta.rs).
-- Consent proposals still pending past their expiry become 'expired' (kept: the decision is
-- the audit trail). Idempotency keys older than $6 days go (memory_ext.idempotency_days: a
-- repeat after that writes again). Store items past their expiry go (their vectors with them;
-- no read returned them since they expired, sql/store.sql). Change-feed rows older than $7 days
-- go (memory_ext.changes_days, 0: kept; sql/changes.sql). $1 tenant or NULL. Returns (memories purged, fingerprints pruned).
WITH gone AS (
    DELETE FROM memory.items
    WHERE ($1::text IS NULL OR user_id = $1) AND state = 'soft_deleted' AND purge_at <= now()
    RETURNING user_id, id, category
), purged_events AS (
    INSERT INTO memory.events (user_id, node, op, status, memory_id, category)
    SELECT user_id, 'worker', 'purge', 'ok', id::text, category FROM gone WHERE $4
), old_events AS (
    DELETE FROM memory.events
    WHERE $3 > 0 AND ($1::text IS NULL OR user_id = $1) AND ts < now() - make_interval(days => $3)
), fingerprints AS (
    DELETE FROM memory.consolidation_fingerprints
    WHERE ($1::text IS NULL OR user_id = $1) AND checked_at < now() - make_interval(days => $2)
    RETURNING 1
), seen AS (
    DELETE FROM memory.consolidation_seen
    WHERE ($1::text IS NULL OR user_id = $1) AND seen_at < now() - make_interval(days => $2)
), change_log AS (
    DELETE FROM memory.change_log
    WHERE $5 > 0 AND ($1::text IS NULL OR user_id = $1) AND ts < now() - make_interval(days => $5)
), feed AS (
    DELETE FROM memory.changes
    WHERE $7 > 0 AND ($1::text IS NULL OR user_id = $1) AND at < now() - make_interval(days => $7)
), usage AS (
    DELETE FROM memory.consolidation_usage
    WHERE ($1::text IS NULL OR user_id = $1) AND day < current_date - 7
), keys AS (
    DELETE FROM memory.idempotency_keys
    WHERE ($1::text IS NULL OR user_id = $1) AND created_at < now() - make_interval(days => $6)
), store AS (
    DELETE FROM memory.store_items
    WHERE ($1::text IS NULL OR user_id = $1) AND expires_at <= now()
), expired AS (
    UPDATE memory.proposals SET status = 'expired', decided_at = expires_at
    WHERE ($1::text IS NULL OR user_id = $1) AND status = 'pending' AND expires_at <= now()
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM fingerprints)
