-- memory_context: whether the tenant's allowlists leave this agent out. $1 user_id, $2 agent.
SELECT EXISTS (SELECT 1 FROM memory.allowlists WHERE user_id = $1)
   AND NOT EXISTS (SELECT 1 FROM memory.allowlists WHERE user_id = $1 AND agent = $2)
