-- memory_file_write: the file as a no-op answer when nothing would change (no new embedding,
-- no new updated_at). $1 user_id, $2 path, $3 content, $4 title, $5 tags or NULL, $6 metadata or
-- NULL (NULL keeps the file's).
SELECT jsonb_build_object('path', path, 'id', id, 'event', 'noop', 'chars', char_length(content), 'updated_at', updated_at)
FROM memory.files
WHERE user_id = $1 AND path = $2 AND content = $3 AND title IS NOT DISTINCT FROM $4
  AND ($5::text[] IS NULL OR tags = $5) AND ($6::jsonb IS NULL OR metadata = $6)
