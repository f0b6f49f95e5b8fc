-- The tenant's memories, newest change first, through the filters the page offers (each NULL:
-- no filter). $1 tenant, $2 kind, $3 category, $4 state, $5 updated from, $6 updated before,
-- $7 actor_id, $8 thread_id, $9 tags (all of them), $10 limit, $11 offset.
SELECT coalesce(jsonb_agg(r ORDER BY r.updated_at DESC, r.id), '[]')::text
FROM (SELECT i.id, i.kind, i.category, i.text, i.state, i.importance, i.pinned, i.tags, i.actor_id,
             i.thread_id, i.happened_at, i.updated_at, i.superseded_by
      FROM memory.items i
      WHERE i.user_id = $1::text
        AND ($2::text IS NULL OR i.kind = $2::text)
        AND ($3::text IS NULL OR i.category = $3::text)
        AND ($4::text IS NULL OR i.state = $4::text)
        AND ($5::text::timestamptz IS NULL OR i.updated_at >= $5::text::timestamptz)
        AND ($6::text::timestamptz IS NULL OR i.updated_at < $6::text::timestamptz)
        AND ($7::text IS NULL OR i.actor_id = $7::text)
        AND ($8::text IS NULL OR i.thread_id = $8::text)
        AND ($9::text[] IS NULL OR i.tags @> $9::text[])
      ORDER BY i.updated_at DESC, i.id
      LIMIT $10::text::int OFFSET $11::text::int) r
