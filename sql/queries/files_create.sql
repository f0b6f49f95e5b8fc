-- The memory tool's create: a new file, or nothing when one is already at $2 (the caller answers
-- "already exists"; a concurrent create of the same path waits here for the first and then
-- finds it, so no acknowledged file is overwritten). $1 user_id, $3 title, $4 content, $5 the
-- vector's text form or NULL, $6 its model; the "vector" slot (in braces, never in a comment)
-- is pgvector's schema-qualified type.
INSERT INTO memory.files AS f (user_id, path, title, content, embedding, embedding_model, updated_at)
VALUES ($1, $2, $3, $4, $5::{vector}, $6, now())
ON CONFLICT (user_id, path) DO NOTHING
RETURNING id::text
