-- The built-in summaries the worker defines (docs/api.md "Summaries") that are not defined yet:
-- each tenant's profile once it has a semantic memory, each entity that $2 active memories
-- name, and each project whose memories carry its name (episodes do:
-- sql/queries/episodes_rollup_due.sql). A built-in the tenant dropped stays dropped: its row is
-- there, disabled. $1 tenant (NULL: every tenant), $2 the entity threshold. Returns the kind
-- (profile, entity, project), the tenant and the entity's or project's name.
WITH found AS (
    SELECT DISTINCT 'profile' AS kind, user_id, NULL::text AS subject FROM memory.items
    WHERE ($1::text IS NULL OR user_id = $1) AND state = 'active' AND kind = 'semantic'
    UNION ALL
    SELECT 'entity', e.user_id, e.name
    FROM memory.entities e
    JOIN memory.entity_links l ON l.user_id = e.user_id AND l.entity_id = e.id
    JOIN memory.items i ON i.user_id = l.user_id AND i.id = l.item_id AND i.state = 'active'
    WHERE ($1::text IS NULL OR e.user_id = $1)
    GROUP BY e.user_id, e.id, e.name
    HAVING count(*) >= $2
    UNION ALL
    SELECT DISTINCT 'project', user_id, metadata ->> 'project' FROM memory.items
    WHERE ($1::text IS NULL OR user_id = $1) AND state = 'active'
      AND metadata ->> 'project' <> '' AND length(metadata ->> 'project') <= 100
)
SELECT f.kind, f.user_id, f.subject
FROM found f
WHERE NOT EXISTS (SELECT 1 FROM memory.summaries s
                  WHERE s.user_id = f.user_id
                    AND s.name = CASE f.kind WHEN 'profile' THEN 'profile' ELSE f.kind || ':' || f.subject END)
ORDER BY 2, 1, 3
