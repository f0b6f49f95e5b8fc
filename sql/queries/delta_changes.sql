-- A thread's change-log rows after a revision, as the delta header renders them
-- (src/ops/delta.rs). $1 user_id, $2 thread_id, $3 the revision the caller saw.
SELECT rev, memory_id, event, meta->>'category', coalesce(meta->>'text', ''), (meta->>'importance')::bigint
FROM memory.change_log WHERE user_id = $1 AND thread_id = $2 AND rev > $3 ORDER BY rev
