-- The tenant's threads, most recently changed first. $1 tenant, $2 limit.
SELECT coalesce(jsonb_agg(t ORDER BY t.updated_at DESC, t.thread_id), '[]')::text
FROM (SELECT th.thread_id, th.agent_id, th.revision, th.last_seq AS messages, th.updated_at,
             (SELECT coalesce(sum(m.token_count), 0) FROM memory.messages m
              WHERE m.user_id = $1::text AND m.thread_id = th.thread_id AND m.in_context) AS context_tokens
      FROM memory.threads th WHERE th.user_id = $1::text
      ORDER BY th.updated_at DESC, th.thread_id LIMIT $2::text::int) t
