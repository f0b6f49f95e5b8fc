-- A rename is a move: the file $2, or every file under the directory $2/, gets the path $3
-- (with the rest of its path after $2). Nothing else changes — id, title, tags, metadata,
-- embedding, created_at and updated_at stay — and history records each move
-- (sql/triggers.sql: an UPDATE with old_path). One statement: the whole directory moves or,
-- when a destination path is taken meanwhile, none of it does. $1 user_id. Returns the moved ids.
UPDATE memory.files
SET path = $3 || substr(path, char_length($2) + 1)
WHERE user_id = $1 AND (path = $2 OR starts_with(path, $2 || '/'))
RETURNING id::text
