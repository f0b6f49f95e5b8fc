-- memory_query "full" mode: a memory's strongest related_to neighbours as bullets
-- (src/ops/query.rs). An edge is written from the newer memory to the older
-- (src/ops/write.rs), and relates both: either end finds the other. $1 user_id, $2 memory id,
-- $3 categories the caller may see or NULL, $4 how many.
SELECT CASE WHEN i.category IS NULL THEN i.text ELSE '[' || i.category || '] ' || i.text END
FROM (SELECT CASE WHEN r.from_id = $2::uuid THEN r.to_id ELSE r.from_id END AS other, max(r.strength) AS strength
      FROM memory.relations r
      WHERE r.user_id = $1 AND (r.from_id = $2::uuid OR r.to_id = $2::uuid) AND r.relation_type = 'related_to'
      GROUP BY 1) n
JOIN memory.items i ON i.user_id = $1 AND i.id = n.other
WHERE i.state = 'active' AND (i.valid_until IS NULL OR i.valid_until > now()) AND ($3::text[] IS NULL OR i.category = ANY($3))
ORDER BY n.strength DESC, i.id LIMIT $4
