-- Extraction: a batch is done. The watermark moves to $3 in the transaction of the batch's
-- writes; the retry state clears unless $4 (the error a fallback to the rules recovered from)
-- is set; today's usage grows by $5 writes, $6 LLM calls, $7/$8 tokens; $9: the theory-of-mind
-- pass ran. $1 user_id, $2 thread_id.
WITH usage AS (
    INSERT INTO memory.extraction_usage AS u (user_id, day, writes, calls, tokens_in, tokens_out)
    VALUES ($1, current_date, $5, $6, $7, $8)
    ON CONFLICT (user_id, day) DO UPDATE
    SET writes = u.writes + EXCLUDED.writes, calls = u.calls + EXCLUDED.calls,
        tokens_in = u.tokens_in + EXCLUDED.tokens_in, tokens_out = u.tokens_out + EXCLUDED.tokens_out
)
UPDATE memory.extractions
SET extracted_seq = greatest(extracted_seq, $3), attempts = 0, retry_at = NULL, last_error = $4,
    last_run_at = now(), tom_at = CASE WHEN $9 THEN now() ELSE tom_at END
WHERE user_id = $1 AND thread_id = $2
