-- Links a near pair that is not the same fact, unless write-time linking already joined them in
-- either direction; the count of new edges (0 or 1). $1 user_id, $2 and $3 the pair, $4 strength.
WITH e AS (
    INSERT INTO memory.relations (user_id, from_id, to_id, relation_type, strength)
    SELECT $1, $2::uuid, $3::uuid, 'related_to', $4
    WHERE NOT EXISTS (SELECT 1 FROM memory.relations
                      WHERE user_id = $1 AND relation_type = 'related_to'
                        AND ((from_id = $2::uuid AND to_id = $3::uuid) OR (from_id = $3::uuid AND to_id = $2::uuid)))
    ON CONFLICT (user_id, from_id, to_id, relation_type) DO NOTHING RETURNING 1)
SELECT count(*) FROM e
