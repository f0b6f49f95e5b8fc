-- A memory file created or overwritten; tags ($5) and metadata ($6) left NULL keep an existing
-- file's. $7 is the vector's text form or NULL; the "vector" slot (in braces, never in a
-- comment) is pgvector's schema-qualified type. The clock is read in VALUES and the answer
-- built outside RETURNING: Citus allows only immutable functions in DO UPDATE SET and RETURNING.
WITH f AS (
    INSERT INTO memory.files AS f (user_id, path, title, content, tags, metadata, embedding, embedding_model, updated_at)
    VALUES ($1, $2, $3, $4, coalesce($5, '{}'), coalesce($6, '{}'), $7::{vector}, $8, now())
    ON CONFLICT (user_id, path) DO UPDATE
       SET title = EXCLUDED.title, content = EXCLUDED.content,
           tags = coalesce($5, f.tags), metadata = coalesce($6, f.metadata),
           embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
           updated_at = EXCLUDED.updated_at,
           -- as sql/triggers.sql memory._set_language set it for the proposed row
           language = EXCLUDED.language
    RETURNING f.path, f.id, xmax = 0 AS created, f.content, f.updated_at
)
SELECT jsonb_build_object('path', path, 'id', id, 'event', CASE WHEN created THEN 'created' ELSE 'updated' END,
                          'chars', char_length(content), 'updated_at', updated_at)
FROM f
