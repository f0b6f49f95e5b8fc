-- The agent's blocks in prompt order (persona, human, then by creation), for compile_core_blocks
-- and compile_blocks: one order, so compile_blocks' text is a prefix of compile_core_blocks'.
-- $1 user_id, $2 agent_id.
SELECT coalesce(jsonb_agg(jsonb_build_object('label', b.label, 'description', b.description,
                                             'value', b.value, 'char_limit', b.char_limit,
                                             'read_only', b.read_only)
                          ORDER BY b.label <> 'persona', b.label <> 'human', b.created_at, b.label),
                '[]'::jsonb)
FROM memory.blocks b WHERE b.user_id = $1 AND b.agent_id = $2
