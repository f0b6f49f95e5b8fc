-- A memory's current state, for the no-op answers of memory_forget / memory_restore.
SELECT jsonb_build_object('id', id, 'state', state, 'purge_at', purge_at, 'event', 'noop')
FROM memory.items WHERE id = $1::uuid AND ($2::text IS NULL OR user_id = $2)
