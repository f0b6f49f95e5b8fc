-- conversation_search_date through memory_tool_call: a thread's messages sent between two days
-- (both included, in UTC), oldest first, with the minute they were sent.
-- $1 user_id, $2 thread_id, $3 first day (YYYY-MM-DD), $4 last day, $5 most rows.
SELECT to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), m.role, m.content
FROM memory.messages m
WHERE m.user_id = $1 AND m.thread_id = $2
  AND m.created_at >= ($3::date)::timestamp AT TIME ZONE 'UTC'
  AND m.created_at < ($4::date + 1)::timestamp AT TIME ZONE 'UTC'
ORDER BY m.seq
LIMIT $5
