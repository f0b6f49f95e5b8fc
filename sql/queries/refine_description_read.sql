-- A captured output whose description waits for the model (src/ops/detail.rs `refine`),
-- locked: its command, its Layer-1 memory, its metadata, and its content (at most the first
-- 3,000 and last 1,500 characters are read by the model; the whole is read here, chunks are
-- 64 KiB and an output is rarely more than a few). $1 user_id, $2 key.
SELECT d.metadata ->> 'command', d.item_id::text, d.metadata, d.thread_id,
       (SELECT string_agg(c.content, '' ORDER BY c.n) FROM memory.detail_chunks c
        WHERE c.user_id = d.user_id AND c.key = d.key)
FROM memory.details d
WHERE d.user_id = $1 AND d.key = $2 AND d.metadata ->> 'pending' = 'llm'
FOR UPDATE OF d
