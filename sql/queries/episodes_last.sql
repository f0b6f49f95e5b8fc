-- episode_write: the last seq any episode of the thread covers. $1 user_id, $2 thread_id.
SELECT coalesce(max((metadata->>'to_seq')::bigint), 0) FROM memory.files
WHERE user_id = $1 AND starts_with(path, 'episodes/') AND metadata->>'thread_id' = $2
