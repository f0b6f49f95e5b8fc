-- The tenant's agents with their blocks' labels. $1 tenant.
SELECT coalesce(jsonb_agg(jsonb_build_object(
           'agent_id', a.agent_id, 'created_at', a.created_at,
           'blocks', (SELECT coalesce(jsonb_agg(jsonb_build_object('label', b.label, 'chars', char_length(b.value),
                                                                   'char_limit', b.char_limit, 'read_only', b.read_only,
                                                                   'version', b.version) ORDER BY b.label), '[]')
                      FROM memory.blocks b WHERE b.user_id = $1::text AND b.agent_id = a.agent_id))
       ORDER BY a.agent_id), '[]')::text
FROM memory.agents a WHERE a.user_id = $1::text
