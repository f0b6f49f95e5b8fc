-- Extraction: the tenant's writes so far today (the daily cap) and whether it got an insight
-- in the last 24 hours (seed: at most one theory-of-mind pass a day). $1 user_id.
SELECT coalesce((SELECT writes FROM memory.extraction_usage WHERE user_id = $1 AND day = current_date), 0),
       EXISTS (SELECT 1 FROM memory.items
               WHERE user_id = $1 AND kind = 'insight' AND created_at > now() - interval '24 hours')
