-- A detail's row (its content follows, a chunk at a time: detail_chunk.sql). $1 user_id, $2 key,
-- $3 item id, $4 type, $5 description, $6 characters, $7 thread_id, $8 metadata, $9 agent_id.
INSERT INTO memory.details (user_id, key, item_id, type, description, chars, thread_id, metadata, agent_id)
VALUES ($1, $2, $3::uuid, $4, $5, $6, $7, $8, $9)
