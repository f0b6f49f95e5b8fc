-- The labels of the blocks agent $2 may edit, sorted (src/ops/tools/mod.rs). $1 user_id.
SELECT coalesce(array_agg(label ORDER BY label), '{}') FROM memory.blocks
WHERE user_id = $1 AND agent_id = $2 AND NOT read_only
