-- Extraction: the thread's watermark row, locked for the batch (one extraction of a thread at a
-- time; {skip} is SKIP LOCKED for the worker, empty for memory_extract, which waits).
-- $1 user_id, $2 thread_id. Returns extracted_seq, attempts.
SELECT extracted_seq, attempts FROM memory.extractions
WHERE user_id = $1 AND thread_id = $2
FOR UPDATE {skip}
