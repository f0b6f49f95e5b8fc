-- The worker's episodes: the ended run is done. $1 user_id, $2 thread_id, $3 the request time
-- read with it (a run_end that came meanwhile stays for the next pass).
DELETE FROM memory.run_ends
WHERE user_id = $1 AND thread_id = $2 AND requested_at <= $3::timestamptz
