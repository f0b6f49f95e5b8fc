-- compact_thread: the thread's in-context messages by seq, with the day each was sent (UTC)
-- and a summary's structure (metadata.summary, src/ops/compaction.rs). $1 user_id,
-- $2 thread_id.
SELECT id::text, seq, role, content, is_summary, pinned,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), metadata -> 'summary'
FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND in_context ORDER BY seq
