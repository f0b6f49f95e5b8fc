-- memory_history: a memory's events, newest first. $1 memory id (text), $2 tenant or NULL.
SELECT event, old_ref, new_ref, actor, meta, ts FROM memory.history
WHERE memory_id = $1 AND ($2::text IS NULL OR user_id = $2) ORDER BY ts DESC, id
