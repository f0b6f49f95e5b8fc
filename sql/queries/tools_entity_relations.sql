-- memory_entity as a tool: the relations of entity $2 on either side (subject name, relation,
-- object name), each once, stated by an active memory in the categories the agent may read ($3,
-- NULL: any), the most recently stated first, up to $4. $1 user_id.
SELECT s.name, r.relation, o.name
FROM memory.entity_relations r
JOIN memory.entities s ON s.user_id = r.user_id AND s.id = r.subject_id
JOIN memory.entities o ON o.user_id = r.user_id AND o.id = r.object_id
JOIN memory.items i ON i.user_id = r.user_id AND i.id = r.item_id
WHERE r.user_id = $1 AND (r.subject_id = $2::uuid OR r.object_id = $2::uuid)
  AND i.state = 'active' AND ($3::text[] IS NULL OR i.category = ANY($3::text[]))
GROUP BY s.name, r.relation, o.name
ORDER BY max(i.happened_at) DESC, s.name, r.relation, o.name
LIMIT $4
