-- The worker's refine job (src/worker/jobs.rs): what application calls wrote without the LLM
-- and marked `pending` for it (src/ops/refine.rs) — compaction summaries, episodes, captured
-- outputs' descriptions — oldest first, each tenant's first before any tenant's second, so one
-- tenant's backlog does not hold up the others. $1 how many.
WITH pending AS (
    SELECT user_id, 'summary' AS kind, id::text AS ref, created_at
    FROM memory.messages
    WHERE metadata -> 'summary' ->> 'pending' = 'llm'
    UNION ALL
    SELECT user_id, 'episode', path, updated_at
    FROM memory.files
    WHERE metadata ->> 'pending' = 'llm'
    UNION ALL
    SELECT user_id, 'description', key, created_at
    FROM memory.details
    WHERE metadata ->> 'pending' = 'llm'
)
SELECT user_id, kind, ref
FROM (SELECT *, row_number() OVER (PARTITION BY user_id ORDER BY created_at) AS turn FROM pending) p
ORDER BY turn, created_at
LIMIT $1
