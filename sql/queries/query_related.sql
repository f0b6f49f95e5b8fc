-- memory_query "full" mode: a memory's strongest related_to neighbours as bullets
-- (src/ops/query.rs). $1 user_id, $2 memory id, $3 categories the caller may see or NULL,
-- $4 how many.
SELECT CASE WHEN i.category IS NULL THEN i.text ELSE '[' || i.category || '] ' || i.text END
FROM memory.relations r JOIN memory.items i ON i.user_id = r.user_id AND i.id = r.to_id
WHERE r.user_id = $1 AND r.from_id = $2::uuid AND r.relation_type = 'related_to'
  AND i.state = 'active' AND ($3::text[] IS NULL OR i.category = ANY($3))
ORDER BY r.strength DESC LIMIT $4
