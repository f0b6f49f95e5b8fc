-- context_usage: the tokens of a thread's in-context messages, and the agent it belongs to.
-- $1 user_id, $2 thread_id.
SELECT (SELECT coalesce(sum(token_count), 0)::bigint FROM memory.messages
         WHERE user_id = $1 AND thread_id = $2 AND in_context),
       (SELECT agent_id FROM memory.threads WHERE user_id = $1 AND thread_id = $2)
