-- One thread: its newest messages (at most $3, in order) with token counts and tool calls,
-- its change log (newest 100) and its episodes; NULL for a thread the tenant does not have.
-- $1 tenant, $2 thread.
SELECT jsonb_build_object(
           'thread', jsonb_build_object('thread_id', th.thread_id, 'agent_id', th.agent_id, 'revision', th.revision,
                                        'reported_rev', th.reported_rev, 'messages', th.last_seq,
                                        'created_at', th.created_at, 'updated_at', th.updated_at),
           'messages', (SELECT coalesce(jsonb_agg(x ORDER BY x.seq), '[]') FROM
                           (SELECT m.id, m.seq, m.role, m.content, m.token_count AS tokens, m.tool_calls,
                                   m.tool_call_id, m.name, m.in_context, m.is_summary, m.created_at
                            FROM memory.messages m WHERE m.user_id = $1::text AND m.thread_id = th.thread_id
                            ORDER BY m.seq DESC LIMIT $3::text::int) x),
           'changes', (SELECT coalesce(jsonb_agg(c ORDER BY c.rev DESC), '[]') FROM
                          (SELECT c.rev, c.event, c.memory_id, c.meta, c.ts FROM memory.change_log c
                           WHERE c.user_id = $1::text AND c.thread_id = th.thread_id
                           ORDER BY c.rev DESC LIMIT 100) c),
           'episodes', (SELECT coalesce(jsonb_agg(e ORDER BY e.happened_at DESC), '[]') FROM
                           (SELECT i.id, i.text, i.state, i.happened_at, i.metadata FROM memory.items i
                            WHERE i.user_id = $1::text AND i.thread_id = th.thread_id AND i.kind = 'episodic'
                            ORDER BY i.happened_at DESC LIMIT 50) e))::text
FROM memory.threads th WHERE th.user_id = $1::text AND th.thread_id = $2::text
