-- A new agent's two default blocks. $1 user_id, $2 agent_id, $3 persona description, $4 persona,
-- $5 human description, $6 human.
INSERT INTO memory.blocks (user_id, agent_id, label, description, value)
VALUES ($1, $2, 'persona', $3, $4), ($1, $2, 'human', $5, $6)
