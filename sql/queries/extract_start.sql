-- Extraction: the thread's watermark row, created on first use (from the thread's first
-- message). $1 user_id, $2 thread_id; nothing when the thread does not exist.
INSERT INTO memory.extractions (user_id, thread_id)
SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM memory.threads WHERE user_id = $1 AND thread_id = $2)
ON CONFLICT (user_id, thread_id) DO NOTHING
