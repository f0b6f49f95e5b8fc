-- Extraction: up to $4 user/assistant turns at or before the watermark $3, newest first, shown
-- to the LLM for context only. $1 user_id, $2 thread_id.
SELECT seq, role, name, left(content, 1000)
FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND seq <= $3 AND NOT is_summary AND role IN ('user', 'assistant')
ORDER BY seq DESC
LIMIT $4
