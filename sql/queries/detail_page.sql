-- memory_ref_get: a page of a detail's content, reading only the chunks the page spans, and
-- the access recorded on its Layer-1 memory (when the key names one detail). $1 key, $2 tenant
-- or NULL, $3 offset, $4 limit (characters), $5 characters per chunk.
WITH d AS (
    SELECT d.user_id, d.item_id, d.chars,
           (SELECT substr(string_agg(c.content, '' ORDER BY c.n), ($3 - ($3 / $5) * $5 + 1)::int, $4::int)
            FROM memory.detail_chunks c
            WHERE c.user_id = d.user_id AND c.key = d.key
              AND c.n BETWEEN $3 / $5 AND ($3 + $4 - 1) / $5) AS page
    FROM memory.details d JOIN memory.items i ON i.user_id = d.user_id AND i.id = d.item_id
    WHERE d.key = $1 AND ($2::text IS NULL OR d.user_id = $2) AND i.state = 'active'
    LIMIT 2
), touched AS (
    UPDATE memory.items i SET last_accessed_at = now(), access_count = access_count + 1
    FROM d WHERE i.user_id = d.user_id AND i.id = d.item_id AND (SELECT count(*) FROM d) = 1
)
SELECT user_id, item_id::text, page, chars FROM d
