-- The worker's extraction: threads with messages past their watermark and no retry pending,
-- $1 at most. Every tenant (the worker bypasses row security), taking turns: each tenant's
-- longest-waiting thread first, then each one's second, ... (src/worker/jobs.rs then reads one
-- batch per thread per round), so one tenant's backlog does not hold up the others.
SELECT user_id, thread_id
FROM (SELECT t.user_id, t.thread_id, coalesce(e.retry_at, t.updated_at) AS since,
             row_number() OVER (PARTITION BY t.user_id ORDER BY coalesce(e.retry_at, t.updated_at), t.thread_id) AS turn
      FROM memory.threads t
      LEFT JOIN memory.extractions e USING (user_id, thread_id)
      WHERE t.last_seq > coalesce(e.extracted_seq, 0)
        AND (e.retry_at IS NULL OR e.retry_at <= now())) d
ORDER BY turn, since, user_id
LIMIT $1
