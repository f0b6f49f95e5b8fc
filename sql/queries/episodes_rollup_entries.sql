-- A project's episodes written after $3 (NULL: all), oldest first. $1 user_id, $2 project.
-- Returns path, content, created_at.
SELECT path, content, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
FROM memory.files
WHERE user_id = $1 AND starts_with(path, 'episodes/') AND metadata->>'project' = $2
  AND ($3::timestamptz IS NULL OR created_at > $3::timestamptz)
ORDER BY created_at, path
