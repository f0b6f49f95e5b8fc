-- The conversation a summary covers (src/ops/compaction.rs `refine`): the thread's messages
-- from its first to its last seq, summaries and system messages left out. $1 user_id,
-- $2 thread_id, $3 from_seq, $4 to_seq.
SELECT role, content
FROM memory.messages
WHERE user_id = $1 AND thread_id = $2 AND seq BETWEEN $3 AND $4 AND NOT is_summary AND role <> 'system'
ORDER BY seq
