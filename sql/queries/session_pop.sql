-- session_pop_item: removes a session's newest item (not a compaction summary) and returns it.
-- $1 user_id, $2 thread_id (the session), $3 unused (NULL).
DELETE FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND id = (
    SELECT id FROM memory.messages WHERE user_id = $1 AND thread_id = $2 AND NOT is_summary AND $3::bigint IS NULL
    ORDER BY seq DESC LIMIT 1 FOR UPDATE)
RETURNING role, content, tool_calls, tool_call_id, item
