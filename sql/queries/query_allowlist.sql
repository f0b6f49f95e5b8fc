-- An agent's category allowlist, sorted ('{}' when it has none). $1 user_id, $2 agent.
SELECT coalesce(array_agg(category ORDER BY category), '{}') FROM memory.allowlists WHERE user_id = $1 AND agent = $2
