-- memory_write: an edge between two memories (follows, related_to), once.
-- $1 user_id, $2 from, $3 to, $4 relation type, $5 strength.
INSERT INTO memory.relations (user_id, from_id, to_id, relation_type, strength)
VALUES ($1, $2::uuid, $3::uuid, $4, $5)
ON CONFLICT (user_id, from_id, to_id, relation_type) DO NOTHING
