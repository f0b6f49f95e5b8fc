-- memory_changes(since => 'now'): the last change of the final part of the feed
-- (sql/queries/changes_read.sql) among the caller's owners (its own id, its spaces' keys).
SELECT xid::text, seq FROM memory.changes
WHERE user_id = ANY($1) AND xid < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY xid DESC, seq DESC
LIMIT 1
