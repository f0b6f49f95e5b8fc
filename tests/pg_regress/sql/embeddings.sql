-- Embeddings: the built-in model, HTTP providers (the stand-in on 127.0.0.1:61480 that
-- scripts/test.sh starts), provider failures, and writes that never get lost to them.
\set SHOW_CONTEXT never

-- Built-in: all-MiniLM-L6-v2, 384 dimensions, unit length, and it means something.
SELECT vector_dims(memory_embed('hello')) AS dims, round(vector_norm(memory_embed('hello'))::numeric, 4) AS norm;
SELECT t, round((1 - (memory_embed('The user prefers concise answers') <=> memory_embed(t)))::numeric, 1) AS similarity
FROM (VALUES ('Keep replies short and to the point'), ('Paris is the capital of France')) v(t)
ORDER BY similarity DESC;
-- A batch gives the same vectors as single calls.
SELECT b.ord, vector_dims(b.embedding) AS dims,
       (SELECT max(abs(x - y)) < 1e-5 FROM unnest(b.embedding::real[], memory_embed(t.x)::real[]) u(x, y)) AS same_as_single
FROM memory_embed_batch(ARRAY['alpha', 'a longer second input', '']) b
JOIN unnest(ARRAY['alpha', 'a longer second input', '']) WITH ORDINALITY t(x, n) ON t.n = b.ord
ORDER BY b.ord;
SELECT memory_embed(NULL);
\echo :LAST_ERROR_SQLSTATE

-- Switching provider at runtime: OpenAI-compatible, then Ollama (the stand-in's mock vectors).
SET memory_ext.embedding_url = 'http://127.0.0.1:61480/v1';
SET memory_ext.embedding_provider = 'openai';
SET memory_ext.embedding_model = 'mock-4';
SELECT memory_embed('hello') AS openai_vector;
SET memory_ext.embedding_url = 'http://127.0.0.1:61480';
SET memory_ext.embedding_provider = 'ollama';
SELECT memory_embed('hello') AS ollama_vector;
SELECT ord, embedding FROM memory_embed_batch(ARRAY['x', 'y']) ORDER BY ord;

-- Every way a provider can fail is a clear error (58000), never a crash.
SET memory_ext.embedding_model = 'fail-500';
SELECT memory_embed('x');
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.embedding_model = 'malformed';
SELECT memory_embed('x');
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.embedding_model = 'wrong-count';
SELECT count(*) FROM memory_embed_batch(ARRAY['x', 'y']);
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.embedding_model = 'wrong-dims';
SET memory_ext.embedding_dims = 8;
SELECT memory_embed('x');
\echo :LAST_ERROR_SQLSTATE
RESET memory_ext.embedding_dims;
SET memory_ext.embedding_model = 'slow-3000';
SET memory_ext.http_timeout_ms = 200;
SELECT memory_embed('x');
\echo :LAST_ERROR_SQLSTATE
RESET memory_ext.http_timeout_ms;
SET memory_ext.embedding_url = 'http://127.0.0.1:1';
SET memory_ext.embedding_model = 'mock-4';
SELECT memory_embed('x');
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.embedding_url = '';
SELECT memory_embed('x');
\echo :LAST_ERROR_SQLSTATE
-- The API key never shows, not even when a server echoes it back.
SET memory_ext.embedding_url = 'http://127.0.0.1:61480/v1';
SET memory_ext.embedding_provider = 'openai';
SET memory_ext.embedding_api_key = 'sk-regress-secret';
SET memory_ext.embedding_model = 'echo-auth';
SELECT memory_embed('x');
\echo :LAST_ERROR_SQLSTATE

-- Ordinary roles cannot read the key, nor point the server (and the key) elsewhere.
SET ROLE regress_memory_user;
-- (The SQLSTATE only: PostgreSQL 16 reworded this message.)
\set VERBOSITY sqlstate
SHOW memory_ext.embedding_api_key;
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS key_rows_visible FROM pg_settings WHERE name = 'memory_ext.embedding_api_key';
SET memory_ext.embedding_url = 'http://attacker.example/v1';
\echo :LAST_ERROR_SQLSTATE
-- Nor choose which models the database stores vectors of: each gets HNSW indexes on every
-- write path (a role that could name models filled the registry, 0.1.0).
SET memory_ext.embedding_model = 'junk-1';
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.embedding_provider = 'ollama';
\echo :LAST_ERROR_SQLSTATE
SELECT memory._ensure_embedding_model('junk:' || g, 3) FROM generate_series(1, 2) g;
\echo :LAST_ERROR_SQLSTATE

-- Never lose a write: with the provider failing, the message is stored without a vector and
-- recorded for the backfill.
SET memory_ext.user_id = 'emma';
RESET ROLE;  -- the model is the operator's choice (superuser-only)
SET memory_ext.embedding_model = 'fail-500';
SET ROLE regress_memory_user;
SELECT message_append('e-thread', 'user', 'Remember that I like green tea.') - 'id' AS stored;
SELECT seq, embedding IS NULL AS no_vector, embedding_model FROM memory.messages WHERE thread_id = 'e-thread';
SELECT target, model_id, attempts, gave_up, last_error FROM memory.embedding_failures;
-- It is still found by keyword.
SELECT content FROM memory.messages WHERE tsv @@ plainto_tsquery('english', 'green tea');
-- The provider comes back: the backfill embeds it and clears the failure.
RESET ROLE;  -- the model is the operator's choice (superuser-only)
SET memory_ext.embedding_model = 'mock-4';
SET ROLE regress_memory_user;
SELECT memory_reembed(10) AS embedded;
SELECT seq, vector_dims(embedding) AS dims, embedding_model FROM memory.messages WHERE thread_id = 'e-thread';
SELECT count(*) AS failures_left FROM memory.embedding_failures;
-- A model switch: rows of the old model are re-embedded with the new one, nothing is lost.
RESET ROLE;  -- the model is the operator's choice (superuser-only)
SET memory_ext.embedding_model = 'mock-6';
SET ROLE regress_memory_user;
SELECT message_append('e-thread', 'assistant', 'Noted: green tea.') ->> 'seq' AS seq;
SELECT memory_reembed(10) AS reembedded;
SELECT seq, vector_dims(embedding) AS dims, embedding_model FROM memory.messages WHERE thread_id = 'e-thread' ORDER BY seq;

-- The retry cap: after memory_ext.embedding_max_attempts the row is given up on and its error
-- stays for an operator; no endless retrying.
RESET ROLE;
SET memory_ext.embedding_max_attempts = 2;
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'ezra';  -- a tenant of its own: row-level security scopes the backfill to it
RESET ROLE;  -- the model is the operator's choice (superuser-only)
SET memory_ext.embedding_model = 'fail-500';
SET ROLE regress_memory_user;
SELECT message_append('z-thread', 'user', 'Another fact.') ->> 'seq' AS seq;
SELECT memory_reembed(10) AS embedded_while_down;
SELECT attempts, gave_up FROM memory.embedding_failures;
RESET ROLE;  -- the model is the operator's choice (superuser-only)
SET memory_ext.embedding_model = 'mock-6';
SET ROLE regress_memory_user;
SELECT memory_reembed(10) AS embedded_after_giving_up;
-- An operator clears the failure; the next backfill takes the row again.
DELETE FROM memory.embedding_failures WHERE gave_up;
SELECT memory_reembed(10) AS embedded_after_reset;
SELECT count(*) FILTER (WHERE embedding IS NULL) AS without_vector FROM memory.messages;

RESET ROLE;
-- One registry row and three HNSW indexes per model: memories (with a copy in each of the 16
-- partitions of memory.items: 17), messages and memory files.
SELECT model_id, dims, index_type FROM memory.embedding_models WHERE model_id IN ('builtin:all-MiniLM-L6-v2', 'openai:mock-4', 'openai:mock-6') ORDER BY model_id;
SELECT count(*) AS hnsw_indexes FROM pg_indexes WHERE schemaname = 'memory' AND indexdef LIKE '%USING hnsw%'
  AND indexdef LIKE '%''openai:mock-6''%';
-- A missing built-in model says which command installs it.
RESET memory_ext.embedding_provider;
SET memory_ext.model_path = '/nonexistent/model';
SELECT memory_embed('x');
\echo :LAST_ERROR_SQLSTATE
RESET memory_ext.model_path;
SELECT vector_dims(memory_embed('back to the installed model')) AS dims;
