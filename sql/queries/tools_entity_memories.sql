-- memory_entity as a tool: the active memories linked to entity $2 in the categories the agent
-- may read ($3, NULL: any), newest first, up to $4, as bullets' parts: day it happened (UTC),
-- category, text. Stored details are opened by key, not listed. $1 user_id.
SELECT to_char(i.happened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), i.category, i.text
FROM memory.entity_links l
JOIN memory.items i ON i.user_id = l.user_id AND i.id = l.item_id
WHERE l.user_id = $1 AND l.entity_id = $2::uuid
  AND i.state = 'active' AND i.kind <> 'detail'
  AND ($3::text[] IS NULL OR i.category = ANY($3::text[]))
ORDER BY i.happened_at DESC, i.id
LIMIT $4
