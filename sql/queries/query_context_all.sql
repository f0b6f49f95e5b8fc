-- memory_context: the memories of the categories whose context is 'all' (memory_configure;
-- docs/design.md "Categories and allowlists"), in the prompt every time, whatever the query: per category at most its rag_length
-- (20 when unset), pinned and important first, then the newest. Active, not procedural, and only
-- categories the agent may read. Returns id, day (YYYY-MM-DD), category and text; the caller
-- renders them as memory_query's bullets (crates/memory_core/src/render.rs).
-- $1 user_id, $2 the categories the agent may read (NULL: any).
SELECT x.id::text, to_char(x.happened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), x.category, x.text
FROM (
    SELECT i.id, i.happened_at, i.category, i.text,
           row_number() OVER (PARTITION BY i.category
                              ORDER BY i.pinned DESC, i.importance DESC, i.happened_at DESC, i.id) AS n,
           coalesce(c.rag_length, 20) AS cap
    FROM memory.categories c
    JOIN memory.items i ON i.user_id = c.user_id AND i.category = c.name
    WHERE c.user_id = $1 AND c.context = 'all' AND i.state = 'active' AND i.kind <> 'procedural'
      AND ($2::text[] IS NULL OR c.name = ANY($2))
) x
WHERE x.n <= x.cap
ORDER BY x.category, x.n
