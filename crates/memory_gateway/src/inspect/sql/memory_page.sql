-- One memory with its history, relations and supersede chain; NULL when the tenant has no such
-- memory (another tenant's ids included). $1 tenant, $2 id.
WITH RECURSIVE m AS (
    SELECT i.* FROM memory.items i WHERE i.user_id = $1::text AND i.id = $2::text::uuid
), later (id, depth) AS (
    SELECT m.superseded_by, 1 FROM m WHERE m.superseded_by IS NOT NULL
    UNION ALL
    SELECT i.superseded_by, l.depth + 1 FROM later l
    JOIN memory.items i ON i.user_id = $1::text AND i.id = l.id
    WHERE i.superseded_by IS NOT NULL AND l.depth < 20
), earlier (id, depth) AS (
    SELECT i.id, 1 FROM memory.items i, m WHERE i.user_id = $1::text AND i.superseded_by = m.id
    UNION ALL
    SELECT i.id, e.depth + 1 FROM earlier e
    JOIN memory.items i ON i.user_id = $1::text AND i.superseded_by = e.id
    WHERE e.depth < 20
)
SELECT jsonb_build_object(
    'item', (SELECT to_jsonb(m) - 'embedding' - 'tsv' - 'content_hash' FROM m),
    'history', (SELECT coalesce(jsonb_agg(to_jsonb(h) ORDER BY h.ts DESC), '[]') FROM memory_history($2::text::uuid) h),
    'relations', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                        'direction', CASE WHEN r.from_id = $2::text::uuid THEN 'to' ELSE 'from' END,
                        'id', o.id, 'text', o.text, 'state', o.state,
                        'type', r.relation_type, 'strength', r.strength) ORDER BY r.strength DESC, o.id), '[]')
                  FROM memory.relations r
                  JOIN memory.items o ON o.user_id = $1::text
                                     AND o.id = CASE WHEN r.from_id = $2::text::uuid THEN r.to_id ELSE r.from_id END
                  WHERE r.user_id = $1::text AND (r.from_id = $2::text::uuid OR r.to_id = $2::text::uuid)),
    'superseded_by', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', i.id, 'text', i.text, 'state', i.state,
                                                                   'happened_at', i.happened_at) ORDER BY l.depth), '[]')
                      FROM later l JOIN memory.items i ON i.user_id = $1::text AND i.id = l.id),
    'supersedes', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', i.id, 'text', i.text, 'state', i.state,
                                                                'happened_at', i.happened_at) ORDER BY e.depth), '[]')
                   FROM earlier e JOIN memory.items i ON i.user_id = $1::text AND i.id = e.id))::text
FROM m
