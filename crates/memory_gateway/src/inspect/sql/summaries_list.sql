-- The tenant's summaries as memory_summaries() gives them (docs/api.md "Summaries"): each one's
-- question, answer, version, whether it is stale and how it was written. $1 tenant (the
-- session's: memory_summaries() reads it).
SELECT memory_summaries()::text WHERE $1::text IS NOT NULL
