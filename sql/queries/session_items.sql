-- session_get_items: a session's items, oldest first; the latest $3 of them when $3 is not NULL.
-- Compaction summaries are the system's, not the session's, and are left out.
-- $1 user_id, $2 thread_id (the session), $3 limit or NULL.
SELECT role, content, tool_calls, tool_call_id, item FROM (
    SELECT seq, role, content, tool_calls, tool_call_id, item FROM memory.messages
    WHERE user_id = $1 AND thread_id = $2 AND NOT is_summary
    ORDER BY seq DESC
    LIMIT $3
) m ORDER BY seq
