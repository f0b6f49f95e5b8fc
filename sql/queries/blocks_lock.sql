-- A block to edit, locked until the edit commits (src/ops/blocks.rs). $1 user_id, $2 agent_id,
-- $3 label.
SELECT value, char_limit, read_only FROM memory.blocks
WHERE user_id = $1 AND agent_id = $2 AND label = $3 FOR UPDATE
