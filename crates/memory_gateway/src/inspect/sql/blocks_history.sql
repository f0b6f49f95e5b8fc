-- One block's versions, newest first (memory_history of the block's id). $1 tenant, $2 agent,
-- $3 label.
SELECT jsonb_build_object(
           'block', jsonb_build_object('id', b.id, 'label', b.label, 'version', b.version, 'value', b.value,
                                       'read_only', b.read_only),
           'history', (SELECT coalesce(jsonb_agg(to_jsonb(h) ORDER BY h.ts DESC), '[]') FROM memory_history(b.id) h))::text
FROM memory.blocks b WHERE b.user_id = $1::text AND b.agent_id = $2::text AND b.label = $3::text
