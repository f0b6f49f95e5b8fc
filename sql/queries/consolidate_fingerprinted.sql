-- The pairs checked within the fingerprint window at the same rounded score. $1 user_id,
-- $2 and $3 the pairs' ids, $4 their scores, $5 the window in days.
SELECT f.id_a::text, f.id_b::text
FROM unnest($2::uuid[], $3::uuid[], $4::float8[]) p(a, b, score)
JOIN memory.consolidation_fingerprints f
  ON f.user_id = $1 AND f.id_a = p.a AND f.id_b = p.b AND f.score = p.score::numeric(3,2)
WHERE f.checked_at > now() - make_interval(days => $5)
