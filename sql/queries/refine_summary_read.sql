-- A pending compaction summary (src/ops/compaction.rs `refine`), locked: its thread, its
-- structure (metadata.summary) and whether it is still in the context. $1 user_id, $2 id.
SELECT thread_id, metadata -> 'summary', in_context
FROM memory.messages
WHERE user_id = $1 AND id = $2::uuid AND metadata -> 'summary' ->> 'pending' = 'llm'
FOR UPDATE
