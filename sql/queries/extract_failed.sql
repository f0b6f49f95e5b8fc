-- Extraction: a batch failed (the LLM errored or answered something unusable), or its
-- transaction did. Its thread is retried after $3 seconds times 4 per earlier failure (30 s, 2,
-- 8, 32 min with $3 = 30); the watermark stays. $1 user_id, $2 thread_id, $4 the error; $5
-- and $6/$7: the calls and tokens the failure still cost. Returns the attempts so far.
WITH usage AS (
    INSERT INTO memory.extraction_usage AS u (user_id, day, calls, tokens_in, tokens_out)
    VALUES ($1, current_date, $5, $6, $7)
    ON CONFLICT (user_id, day) DO UPDATE
    SET calls = u.calls + EXCLUDED.calls, tokens_in = u.tokens_in + EXCLUDED.tokens_in,
        tokens_out = u.tokens_out + EXCLUDED.tokens_out
)
UPDATE memory.extractions
SET attempts = attempts + 1, retry_at = now() + make_interval(secs => $3 * power(4, least(attempts, 6))),
    last_error = $4,
    last_run_at = now()
WHERE user_id = $1 AND thread_id = $2
RETURNING attempts
