-- A file's new content, with its new vector, after an edit of the locked row (memory_file_edit,
-- the memory tool's str_replace and insert): path, id, title, tags and metadata stay. $4 is the
-- vector's text form or NULL; the "vector" slot (in braces, never in a comment) is pgvector's
-- schema-qualified type. The answer is built outside RETURNING (Citus allows only immutable
-- functions there).
WITH f AS (
    -- The language detected again from the new content, kept when detection is not sure.
    UPDATE memory.files SET content = $3, embedding = $4::{vector}, embedding_model = $5, updated_at = now(),
                            language = coalesce(memory.detect_language($3), language)
    WHERE user_id = $1 AND path = $2
    RETURNING path, id, content, updated_at
)
SELECT jsonb_build_object('path', path, 'id', id, 'event', 'updated', 'chars', char_length(content), 'updated_at', updated_at)
FROM f
