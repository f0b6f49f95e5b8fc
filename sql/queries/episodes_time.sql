-- episode_write: when the run ended (its last message), as the episode memory's event time.
-- $1 user_id, $2 thread_id, $3 and $4 the run's first and last seq.
SELECT to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND seq BETWEEN $3 AND $4
