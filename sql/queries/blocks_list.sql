-- memory_agent's block list: persona, human, then the rest by creation. $1 user_id, $2 agent_id.
SELECT coalesce(jsonb_agg(jsonb_build_object('label', label, 'version', version,
                                             'chars', char_length(value))
                          ORDER BY label <> 'persona', label <> 'human', created_at, label), '[]')
FROM memory.blocks WHERE user_id = $1 AND agent_id = $2
