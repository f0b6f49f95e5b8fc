-- memory_query bullets (and so memory_context and the agent tools): for each memory of $2, its
-- strongest related_to neighbour that is not itself among $2, active, in the categories the
-- caller may see ($3, NULL: any). An edge relates both ends (src/ops/write.rs writes it from
-- the newer memory). Returns the memory's id, then the neighbour's day (UTC), category and
-- text. $1 user_id.
SELECT DISTINCT ON (m.id) m.id::text, to_char(i.happened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), i.category, i.text
FROM unnest($2::uuid[]) AS m(id)
CROSS JOIN LATERAL (
    SELECT r.to_id AS other, r.strength FROM memory.relations r
    WHERE r.user_id = $1 AND r.from_id = m.id AND r.relation_type = 'related_to'
    UNION ALL
    SELECT r.from_id, r.strength FROM memory.relations r
    WHERE r.user_id = $1 AND r.to_id = m.id AND r.relation_type = 'related_to'
) n
JOIN memory.items i ON i.user_id = $1 AND i.id = n.other
WHERE i.state = 'active' AND i.id <> ALL ($2::uuid[]) AND ($3::text[] IS NULL OR i.category = ANY ($3::text[]))
ORDER BY m.id, n.strength DESC, i.id
