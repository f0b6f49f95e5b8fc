-- One agent's blocks and its compiled prompt exactly as compile_core_blocks gives it to the
-- model, with its token count; NULL for an agent the tenant does not have. $1 tenant, $2 agent.
SELECT jsonb_build_object(
           'agent_id', a.agent_id,
           'blocks', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                          'id', b.id, 'label', b.label, 'description', b.description, 'value', b.value,
                          'chars', char_length(b.value), 'char_limit', b.char_limit, 'read_only', b.read_only,
                          'version', b.version, 'updated_at', b.updated_at) ORDER BY b.label), '[]')
                      FROM memory.blocks b WHERE b.user_id = $1::text AND b.agent_id = a.agent_id),
           'compiled', p.text,
           'tokens', count_tokens(p.text))::text
FROM memory.agents a, LATERAL (SELECT compile_core_blocks(a.agent_id) AS text) p
WHERE a.user_id = $1::text AND a.agent_id = $2::text
