-- A memory file created or overwritten; tags ($5) and metadata ($6) left NULL keep an existing
-- file's. $7 is the vector's text form or NULL; the "vector" slot (in braces, never in a
-- comment) is pgvector's schema-qualified type.
INSERT INTO memory.files AS f (user_id, path, title, content, tags, metadata, embedding, embedding_model)
VALUES ($1, $2, $3, $4, coalesce($5, '{}'), coalesce($6, '{}'), $7::{vector}, $8)
ON CONFLICT (user_id, path) DO UPDATE
   SET title = EXCLUDED.title, content = EXCLUDED.content,
       tags = coalesce($5, f.tags), metadata = coalesce($6, f.metadata),
       embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
       updated_at = now()
RETURNING jsonb_build_object('path', f.path, 'id', f.id,
                             'event', CASE WHEN xmax = 0 THEN 'created' ELSE 'updated' END,
                             'chars', char_length(f.content), 'updated_at', f.updated_at)
