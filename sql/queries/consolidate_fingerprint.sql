-- A checked pair's verdict. $1 user_id, $2 and $3 the pair, $4 its rounded score, $5 verdict.
-- The clock is read in VALUES: Citus allows only immutable functions in DO UPDATE SET.
INSERT INTO memory.consolidation_fingerprints (user_id, id_a, id_b, score, verdict, checked_at)
VALUES ($1, $2::uuid, $3::uuid, $4::numeric(3,2), $5, now())
ON CONFLICT (user_id, id_a, id_b, score) DO UPDATE SET verdict = EXCLUDED.verdict, checked_at = EXCLUDED.checked_at
