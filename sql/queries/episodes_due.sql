-- The worker's episodes: ended runs whose retry time has come, and (when $2 > 0) threads idle
-- for $2 seconds with at least two user/assistant messages past their last episode. Idle
-- threads are looked for among those changed in the day before the timeout: a worker that was
-- off for longer leaves older runs to run_end. $1 at most. Returns user_id, thread_id, run_id,
-- context_window, the request's time (NULL: an idle run).
(SELECT user_id, thread_id, run_id, context_window,
        to_char(requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
 FROM memory.run_ends
 WHERE retry_at <= now()
 ORDER BY retry_at
 LIMIT $1)
UNION ALL
(SELECT t.user_id, t.thread_id, NULL, NULL::integer, NULL
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
                         AND f.metadata->>'thread_id' = t.thread_id)) >= 2
 ORDER BY t.updated_at
 LIMIT $1)
