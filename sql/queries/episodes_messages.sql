-- episode_write: the run's messages (no system messages, no summaries), each cut to $4
-- characters, with their UTC dates. $1 user_id, $2 thread_id, $3 first seq.
SELECT seq, role, left(content, $4), to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')
FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND seq >= $3 AND NOT is_summary AND role <> 'system'
ORDER BY seq
