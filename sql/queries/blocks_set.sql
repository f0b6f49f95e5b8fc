-- block_set: creates or overwrites a block; a NULL description keeps the existing one.
-- $1 user_id, $2 agent_id, $3 label, $4 description, $5 value, $6 char_limit, $7 read_only.
INSERT INTO memory.blocks AS b (user_id, agent_id, label, description, value, char_limit, read_only)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (user_id, agent_id, label) DO UPDATE
   SET value = EXCLUDED.value, char_limit = EXCLUDED.char_limit, read_only = EXCLUDED.read_only,
       description = coalesce(EXCLUDED.description, b.description)
RETURNING version
