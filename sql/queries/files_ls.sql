-- memory_file_ls: files under a prefix, by path. $1 user_id, $2 prefix, $3 limit.
SELECT path, title, tags, char_length(content), updated_at, last_accessed_at
FROM memory.files WHERE user_id = $1 AND starts_with(path, $2)
ORDER BY path LIMIT $3
