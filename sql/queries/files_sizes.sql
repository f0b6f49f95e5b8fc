-- Every file under the directory $2 (a path ending in '/'), by path, with its size in bytes:
-- what the memory tool's directory view and its destination checks read. $1 user_id.
SELECT path, octet_length(content)::bigint
FROM memory.files WHERE user_id = $1 AND starts_with(path, $2)
ORDER BY path
