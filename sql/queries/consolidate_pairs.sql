-- Consolidation's near pairs for one tenant (docs/design.md "Consolidation"). src/ops/consolidate.rs fills in
-- "model" (the active model's id as a literal: its partial HNSW index), "vt" (vector type)
-- and "op" (cosine operator).
-- Candidate pool: changed in the last 72 h, or importance >= 3, or in the top decile by
-- retrievals; recency <= 90 days; those not examined since they last changed first (in the
-- last 14 days: memory.consolidation_seen), then newest first, at most $2. Each candidate's 5
-- nearest active neighbours (HNSW) in the cosine band [$3 link_threshold, $4 merge_threshold);
-- a candidate without any comes once with NULLs (the caller marks it examined).
-- An immutable memory (metadata.immutable, mem0's flag: docs/migrating.md) is neither: it is
-- never merged or rewritten. $1 user_id, $2 pool size, $3 band low, $4 band high.
WITH busy AS MATERIALIZED (
    SELECT greatest(1, percentile_disc(0.9) WITHIN GROUP (ORDER BY access_count)) AS floor
    FROM memory.items WHERE user_id = $1 AND state = 'active'
), cand AS MATERIALIZED (
    SELECT i.id, i.embedding
    FROM memory.items i CROSS JOIN busy b
    LEFT JOIN memory.consolidation_seen s ON s.user_id = i.user_id AND s.id = i.id
    WHERE i.user_id = $1 AND i.state = 'active' AND i.embedding_model = {model}
      AND i.metadata -> 'immutable' IS DISTINCT FROM 'true'::jsonb
      AND i.updated_at > now() - interval '90 days'
      AND (i.updated_at > now() - interval '72 hours' OR i.importance >= 3 OR i.access_count >= b.floor)
    ORDER BY coalesce(s.seen_at >= i.updated_at AND s.seen_at > now() - interval '14 days', false), i.updated_at DESC
    LIMIT $2
)
SELECT c.id::text, n.id::text, n.sim
FROM cand c
LEFT JOIN LATERAL (
    SELECT j.id, (1 - (j.embedding::{vt} {op} c.embedding::{vt}))::float8 AS sim
    FROM memory.items j
    WHERE j.user_id = $1 AND j.state = 'active' AND j.embedding_model = {model} AND j.id <> c.id
      AND j.metadata -> 'immutable' IS DISTINCT FROM 'true'::jsonb
      AND j.updated_at > now() - interval '90 days'
    ORDER BY j.embedding::{vt} {op} c.embedding::{vt}
    LIMIT 5
) n ON n.sim >= $3 AND n.sim < $4
