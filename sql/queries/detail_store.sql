-- A detail's content: its row and its chunks, in one statement. $1 user_id, $2 key, $3 item id,
-- $4 type, $5 description, $6 characters, $7 thread_id, $8 metadata, $9 the chunks in order.
WITH d AS (
    INSERT INTO memory.details (user_id, key, item_id, type, description, chars, thread_id, metadata)
    VALUES ($1, $2, $3::uuid, $4, $5, $6, $7, $8) RETURNING user_id, key
)
INSERT INTO memory.detail_chunks (user_id, key, n, content)
SELECT d.user_id, d.key, c.n - 1, c.content FROM d, unnest($9::text[]) WITH ORDINALITY AS c(content, n)
