-- Extraction: the tenant's writes so far today (the daily cap) and whether the theory-of-mind
-- pass ran, or an insight was written, in the last 24 hours (at most one pass a
-- day). $1 user_id.
SELECT coalesce((SELECT writes FROM memory.extraction_usage WHERE user_id = $1 AND day = current_date), 0),
       EXISTS (SELECT 1 FROM memory.items
               WHERE user_id = $1 AND kind = 'insight' AND created_at > now() - interval '24 hours')
    OR EXISTS (SELECT 1 FROM memory.extractions
               WHERE user_id = $1 AND tom_at > now() - interval '24 hours')
