-- memory_write: a near duplicate of $2 was written. The newer wording replaces the older (with
-- its vector); category and content only when given; importance and pinning keep the stronger;
-- tags are the union; metadata is merged (new keys win).
UPDATE memory.items SET
    text             = $3,
    category         = coalesce($4, category),
    importance       = greatest(importance, coalesce($5, importance)),
    pinned           = pinned OR coalesce($6, false),
    tags             = ARRAY(SELECT DISTINCT t FROM unnest(tags || coalesce($7, '{}'::text[])) t ORDER BY t),
    metadata         = metadata || coalesce($8, '{}'::jsonb),
    content          = coalesce($9, content),
    embedding        = $10::{vector},
    embedding_model  = $11,
    last_accessed_at = now()
WHERE user_id = $1 AND id = $2::uuid AND state = 'active'
RETURNING id::text
