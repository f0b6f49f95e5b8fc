-- Extraction: the thread's messages after the watermark, oldest first ($1 user_id, $2 thread_id,
-- $3 watermark, $4 how many). Every role is read so that the watermark can move past tool and
-- system messages; only user and assistant turns are extracted from. Summaries are left out:
-- they restate messages already read.
SELECT seq, role, name, left(content, 4000), to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND seq > $3 AND NOT is_summary
ORDER BY seq
LIMIT $4
