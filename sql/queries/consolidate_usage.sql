-- A run's pairs checked and LLM prompts, added to the tenant's day. $1 user_id, $2 pairs,
-- $3 LLM calls.
INSERT INTO memory.consolidation_usage AS u (user_id, pairs, llm_calls) VALUES ($1, $2, $3)
ON CONFLICT (user_id, day) DO UPDATE SET pairs = u.pairs + EXCLUDED.pairs, llm_calls = u.llm_calls + EXCLUDED.llm_calls
