-- memory_query and memory_context: the memories of the categories whose context is 'all'
-- (memory_configure; docs/design.md "Categories and allowlists"), in recall every time,
-- whatever the query: per category at most its rag_length (20 when unset), pinned and
-- important first, then the newest. Active, not procedural, and only categories the agent may
-- read. What src/ops/query.rs makes a ranked memory of: id, category, text, content,
-- importance, tags, metadata, updated_at and happened_at (RFC 3339, UTC).
-- $1 user_id, $2 the categories the agent may read (NULL: any).
SELECT x.id::text, x.category, x.text, x.content, x.importance, x.tags, x.metadata,
       to_char(x.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(x.happened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
FROM (
    SELECT i.id, i.happened_at, i.updated_at, i.category, i.text, i.content, i.importance, i.tags, i.metadata,
           row_number() OVER (PARTITION BY i.category
                              ORDER BY i.pinned DESC, i.importance DESC, i.happened_at DESC, i.id) AS n,
           coalesce(c.rag_length, 20) AS cap
    FROM memory.categories c
    JOIN memory.items i ON i.user_id = c.user_id AND i.category = c.name
    WHERE c.user_id = $1 AND c.context = 'all' AND i.state = 'active' AND (i.valid_until IS NULL OR i.valid_until > now()) AND i.kind <> 'procedural'
      AND ($2::text[] IS NULL OR c.name = ANY($2))
) x
WHERE x.n <= x.cap
ORDER BY x.category, x.n
