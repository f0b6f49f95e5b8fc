-- context_messages: the thread's context in prompt order — system messages that are not
-- summaries (the system prompt), the summary, then the rest by seq, with what a chat request
-- needs of each (tool calls, the id a tool result answers, names, when) and whether it is
-- pinned. $1 user_id, $2 thread_id.
SELECT id, seq, role, content, token_count, is_summary, tool_calls, tool_call_id, name, created_at, pinned
FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND in_context
ORDER BY CASE WHEN role = 'system' AND NOT is_summary THEN 0 WHEN is_summary THEN 1 ELSE 2 END, seq
