-- The memories a summary may rest on (src/ops/summaries.rs): the tenant's active memories in the
-- summary's scope, the closest to its question first (when the question's vector is there and
-- of the memory's model), then pinned, important and recent ones. Procedural memories and
-- details only when the scope names their kind. $1 tenant, $2 categories, $3 kinds, $4 tags,
-- $5 entity (name or alias), $6 project, $7 the question's vector, $8 its model, $9 how many,
-- $10 actor.
-- Returns id, text, the day it happened and when it last changed.
SELECT i.id::text, i.text, to_char(i.happened_at, 'YYYY-MM-DD'), i.updated_at::text
FROM memory.items i
WHERE i.user_id = $1 AND i.state = 'active'
  AND CASE WHEN $3::text[] IS NULL THEN i.kind NOT IN ('procedural', 'detail') ELSE i.kind = ANY ($3) END
  AND ($2::text[] IS NULL OR i.category = ANY ($2))
  AND ($4::text[] IS NULL OR i.tags && $4)
  AND ($5::text IS NULL OR i.id IN (
        SELECT l.item_id
        FROM memory.entity_links l
        JOIN memory.entities e ON e.user_id = l.user_id AND e.id = l.entity_id
        WHERE l.user_id = $1
          AND (lower(e.name) = lower($5) OR lower($5) = ANY (SELECT lower(a) FROM unnest(e.aliases) a))))
  AND ($6::text IS NULL OR i.metadata ->> 'project' = $6)
  AND ($10::text IS NULL OR i.actor_id = $10)
ORDER BY CASE WHEN $7::vector IS NOT NULL AND i.embedding_model = $8 THEN i.embedding <=> $7::vector ELSE 2 END,
         i.pinned DESC, i.importance DESC, i.happened_at DESC, i.id
LIMIT $9
