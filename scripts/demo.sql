-- The `make run` demo: an agent with persona/human blocks and a thread with a few messages.
-- Idempotent: memory_agent returns an existing agent unchanged; messages are added only to an
-- empty thread.
SET memory_ext.user_id = 'demo-user';

SELECT memory_agent('demo-agent', 'demo-user',
    'I am Sage, a concise assistant. I remember what matters to the user across conversations.',
    'Name: Ana') ->> 'agent_id' AS agent;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM memory.messages WHERE thread_id = 'demo-thread') THEN
        PERFORM message_append('demo-thread', 'user', 'Hi! I am Ana, I live in Lisbon and I am learning Rust.');
        PERFORM message_append('demo-thread', 'assistant', 'Nice to meet you, Ana. What are you building with Rust?');
        PERFORM message_append('demo-thread', 'user', 'A Postgres extension that gives agents long-term memory.');
        PERFORM block_append('demo-agent', 'human', 'Lives in Lisbon; learning Rust; building a Postgres extension.');
    END IF;
END $$;

\echo
\echo '== compile_core_blocks(''demo-agent'') =='
\pset tuples_only on
\pset format unaligned
SELECT compile_core_blocks('demo-agent');
\echo
\echo '== context_usage(''demo-thread'', 8192, ''demo-agent'') =='
SELECT context_usage('demo-thread', 8192, 'demo-agent');
