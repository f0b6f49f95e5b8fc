-- episode_write: this run's episode, if it has one: path, memory id, first and last seq.
-- $1 user_id, $2 thread_id, $3 run_id.
SELECT path, metadata->>'memory_id', (metadata->>'from_seq')::bigint, (metadata->>'to_seq')::bigint
FROM memory.files
WHERE user_id = $1 AND starts_with(path, 'episodes/') AND metadata->>'thread_id' = $2
  AND metadata->>'run_id' = $3
ORDER BY updated_at DESC LIMIT 1
