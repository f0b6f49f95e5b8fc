-- memory_file_read: the file, with this read as its last access. $1 user_id, $2 path. The
-- answer is built outside RETURNING (Citus allows only immutable functions there).
WITH f AS (
    UPDATE memory.files SET last_accessed_at = now() WHERE user_id = $1 AND path = $2
    RETURNING path, title, content, tags, metadata, created_at, updated_at, last_accessed_at
)
SELECT jsonb_build_object('path', path, 'title', title, 'content', content, 'tags', tags,
                          'metadata', metadata, 'created_at', created_at,
                          'updated_at', updated_at, 'last_accessed_at', last_accessed_at)
FROM f
