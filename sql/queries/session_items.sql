-- session_get_items: a session's items as the model should see them: the compaction summary
-- first (compact_thread folded older items into it), then the items still in context, oldest
-- first; the latest $3 of them when $3 is not NULL (the summary counts as the oldest).
-- $1 user_id, $2 thread_id (the session), $3 limit or NULL.
SELECT role, content, tool_calls, tool_call_id, item FROM (
    SELECT seq, is_summary, role, content, tool_calls, tool_call_id, item FROM memory.messages
    WHERE user_id = $1 AND thread_id = $2 AND in_context
    ORDER BY is_summary, seq DESC
    LIMIT $3
) m ORDER BY NOT is_summary, seq
