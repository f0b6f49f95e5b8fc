-- memory_file_edit: the edited content with its new vector. $4 is the vector's text form or
-- NULL; the "vector" slot (in braces, never in a comment) is pgvector's schema-qualified type.
-- The answer is built outside RETURNING (Citus allows only immutable functions there).
WITH f AS (
    UPDATE memory.files SET content = $3, embedding = $4::{vector}, embedding_model = $5, updated_at = now()
    WHERE user_id = $1 AND path = $2
    RETURNING path, id, content, updated_at
)
SELECT jsonb_build_object('path', path, 'id', id, 'event', 'updated', 'chars', char_length(content), 'updated_at', updated_at)
FROM f
