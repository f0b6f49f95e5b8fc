-- The worker's summaries job (src/worker/jobs.rs): stale summaries whose retry time has come,
-- the longest stale first, each tenant's first before any tenant's second (one tenant's many
-- summaries do not hold up the others). $1 how many. Returns tenant and name.
SELECT user_id, name
FROM (SELECT user_id, name, stale_since,
             row_number() OVER (PARTITION BY user_id ORDER BY stale_since, name) AS turn
      FROM memory.summaries
      WHERE stale AND NOT disabled AND (retry_at IS NULL OR retry_at <= now())) s
ORDER BY turn, stale_since, user_id, name
LIMIT $1
