-- memory_entities: the tenant's entities with how many active memories mention each, most
-- mentioned first; $2 (or NULL) narrows to those with a name or alias containing it, in any
-- case. $1 user_id, $3 limit.
SELECT e.id, e.name, e.type, e.aliases,
       (SELECT count(*) FROM memory.entity_links l
        JOIN memory.items i ON i.user_id = l.user_id AND i.id = l.item_id
        WHERE l.user_id = e.user_id AND l.entity_id = e.id AND i.state = 'active') AS memories,
       e.updated_at
FROM memory.entities e
WHERE e.user_id = $1
  AND ($2::text IS NULL
       OR strpos(lower(e.name), lower($2)) > 0
       OR EXISTS (SELECT 1 FROM unnest(e.aliases) a WHERE strpos(lower(a), lower($2)) > 0))
ORDER BY memories DESC, e.name, e.id
LIMIT $3
