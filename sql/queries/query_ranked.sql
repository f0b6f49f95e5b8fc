-- memory_search: kind and times of the ranked memories as Postgres types, in rank order.
-- $1 user_id, $2 ids best first.
SELECT i.id, i.kind, i.updated_at, i.happened_at FROM unnest($2::uuid[]) WITH ORDINALITY x(id, n)
JOIN memory.items i ON i.user_id = $1 AND i.id = x.id ORDER BY x.n
