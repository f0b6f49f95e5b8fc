-- memory_write with "id": that memory takes the request's text and every field the request
-- names; the rest is kept. The vector follows the text: $10 NULL (embedding failed or
-- deferred) clears the old one so that the backfill embeds the new text. An immutable memory
-- (metadata.immutable, mem0's flag: src/ops/write.rs `update_named`) is not changed.
UPDATE memory.items SET
    text            = $3,
    category        = coalesce($4, category),
    importance      = coalesce($5, importance),
    pinned          = coalesce($6, pinned),
    tags            = coalesce($7, tags),
    metadata        = coalesce($8, metadata),
    content         = coalesce($9, content),
    embedding       = $10::{vector},
    embedding_model = $11,
    happened_at     = coalesce($12::timestamptz, happened_at),
    kind            = coalesce($13, kind),
    -- $14 a language given with the update; none: detected again from the new text (or kept).
    language        = coalesce($14, language)
WHERE user_id = $1 AND id = $2::uuid AND metadata -> 'immutable' IS DISTINCT FROM 'true'::jsonb
RETURNING id::text
