-- A thread started by an agent's first tool call in it; nothing when a parallel call has just
-- started it (src/ops/tools/mod.rs). $1 user_id, $2 thread, $3 agent.
INSERT INTO memory.threads (user_id, thread_id, agent_id) VALUES ($1, $2, $3)
ON CONFLICT (user_id, thread_id) DO NOTHING
