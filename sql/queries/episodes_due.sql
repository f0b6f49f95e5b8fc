-- The worker's episodes: ended runs whose retry time has come, and (when $2 > 0) threads idle
-- for $2 seconds with at least two user/assistant messages past their last episode. Idle
-- threads are looked for among those changed in the day before the timeout: a worker that was
-- off for longer leaves older runs to run_end. $1 at most of each. Returns user_id, thread_id,
-- run_id, context_window, the request's time (NULL: an idle run).
--
-- Tenants take turns (`turn`: each tenant's first due run, then each one's second, ...), so
-- that 200 runs ended by one tenant do not delay another tenant's one run behind them.
(SELECT user_id, thread_id, run_id, context_window,
        to_char(requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
 FROM (SELECT r.*, row_number() OVER (PARTITION BY r.user_id ORDER BY r.retry_at, r.thread_id) AS turn
       FROM memory.run_ends r
       WHERE r.retry_at <= now()) r
 ORDER BY turn, retry_at, user_id
 LIMIT $1)
UNION ALL
(SELECT user_id, thread_id, NULL, NULL::integer, NULL
 FROM (SELECT t.user_id, t.thread_id, t.updated_at,
              row_number() OVER (PARTITION BY t.user_id ORDER BY t.updated_at, t.thread_id) AS turn
       FROM memory.threads t
       WHERE $2 > 0
         AND t.updated_at < now() - make_interval(secs => $2)
         AND t.updated_at >= now() - make_interval(secs => $2) - interval '1 day'
         AND NOT EXISTS (SELECT 1 FROM memory.run_ends r WHERE r.user_id = t.user_id AND r.thread_id = t.thread_id)
         AND (SELECT count(*) FROM memory.messages m
              WHERE m.user_id = t.user_id AND m.thread_id = t.thread_id AND NOT m.is_summary
                AND m.role IN ('user', 'assistant')
                AND m.seq > (SELECT coalesce(max((f.metadata->>'to_seq')::bigint), 0) FROM memory.files f
                             WHERE f.user_id = t.user_id AND starts_with(f.path, 'episodes/')
                               AND f.metadata->>'thread_id' = t.thread_id)) >= 2) idle
 ORDER BY turn, updated_at, user_id
 LIMIT $1)
