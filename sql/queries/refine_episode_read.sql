-- An episode file episode_write wrote without the model (src/ops/episodes.rs `refine`), locked:
-- its metadata (thread_id, run_id, from_seq, to_seq, memory_id). $1 user_id, $2 path.
SELECT metadata
FROM memory.files
WHERE user_id = $1 AND path = $2 AND metadata ->> 'pending' = 'llm'
FOR UPDATE
