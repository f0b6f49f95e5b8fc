-- A compaction summary refined by the worker (src/ops/compaction.rs `refine`): the model's text
-- in place of the extractive one, or (content NULL) only its structure — an attempt counted, or
-- the pending mark dropped. $1 user_id, $2 id, $3 content or NULL, $4 the vector's text form or
-- NULL, $5 its model, $6 the new structure. The "vector" slot (in braces, never in a comment)
-- is pgvector's schema-qualified type.
UPDATE memory.messages
SET content = coalesce($3, content),
    embedding = CASE WHEN $3 IS NULL THEN embedding ELSE $4::{vector} END,
    embedding_model = CASE WHEN $3 IS NULL THEN embedding_model ELSE $5 END,
    metadata = jsonb_set(metadata, '{summary}', $6)
WHERE user_id = $1 AND id = $2::uuid
