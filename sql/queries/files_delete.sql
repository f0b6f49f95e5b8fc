-- Deletes the file $2, or with $3 also every file under the directory $2/, in one statement
-- (all of it or, on error, none). $1 user_id. Returns the deleted ids.
DELETE FROM memory.files
WHERE user_id = $1 AND (path = $2 OR ($3 AND starts_with(path, $2 || '/')))
RETURNING id::text
