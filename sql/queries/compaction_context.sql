-- compact_thread: the thread's in-context messages by seq. $1 user_id, $2 thread_id.
SELECT id::text, seq, role, content, is_summary FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND in_context ORDER BY seq
