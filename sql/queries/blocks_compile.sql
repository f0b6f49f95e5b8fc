-- compile_core_blocks: the metadata the rendering needs (the blocks themselves come from
-- blocks_views.sql, shared with compile_blocks).
-- $1 user_id, $2 agent_id, $3 the "current system date".
-- The conversation summaries in the context of those threads (the core-memory
-- view shows them): how many, and the newest one's thread and structure (metadata.summary).
-- Recall and archival counts cover the agent's own threads/memories and the user's unassigned
-- ones (threads.agent_id / items.agent_id NULL): an agent serves exactly one user.
SELECT
    to_char($3::timestamptz, 'YYYY-MM-DD HH24:MI:SS TZ'),
    (SELECT to_char(max(b.updated_at), 'YYYY-MM-DD HH24:MI:SS TZ')
       FROM memory.blocks b WHERE b.user_id = $1 AND b.agent_id = $2),
    (SELECT count(*)
       FROM memory.messages m JOIN memory.threads t USING (user_id, thread_id)
      WHERE m.user_id = $1 AND (t.agent_id = $2 OR t.agent_id IS NULL)),
    (SELECT count(*)
       FROM memory.items i
      WHERE i.user_id = $1 AND i.state = 'active' AND (i.agent_id = $2 OR i.agent_id IS NULL)),
    (SELECT count(*)
       FROM memory.messages m JOIN memory.threads t USING (user_id, thread_id)
      WHERE m.user_id = $1 AND m.is_summary AND m.in_context AND (t.agent_id = $2 OR t.agent_id IS NULL)),
    (SELECT (m.metadata -> 'summary' || jsonb_build_object('thread_id', m.thread_id))::text
       FROM memory.messages m JOIN memory.threads t USING (user_id, thread_id)
      WHERE m.user_id = $1 AND m.is_summary AND m.in_context AND (t.agent_id = $2 OR t.agent_id IS NULL)
        AND m.metadata ? 'summary'
      ORDER BY m.created_at DESC, m.thread_id LIMIT 1)
