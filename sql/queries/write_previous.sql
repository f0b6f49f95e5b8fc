-- memory_write: the thread's last active memory, which a new one follows (an episode edge).
-- $1 user_id, $2 thread_id.
SELECT id::text FROM memory.items WHERE user_id = $1 AND thread_id = $2 AND state = 'active'
ORDER BY created_at DESC, id DESC LIMIT 1
