-- The worker's extraction: threads with messages past their watermark and no retry pending,
-- the longest-waiting first, $1 at most. Every tenant (the worker bypasses row security).
SELECT t.user_id, t.thread_id
FROM memory.threads t
LEFT JOIN memory.extractions e USING (user_id, thread_id)
WHERE t.last_seq > coalesce(e.extracted_seq, 0)
  AND (e.retry_at IS NULL OR e.retry_at <= now())
ORDER BY coalesce(e.retry_at, t.updated_at)
LIMIT $1
