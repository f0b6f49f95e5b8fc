-- Half precision (docs/operations.md "Half precision"): a model's HNSW indexes over halfvec,
-- half the memory; memory_embedding_reindex() lists the statements that move a model's indexes
-- online (run here with psql's \gexec, as an operator would), and back. Searches follow the
-- registry: the same answers, through the new index.
\set SHOW_CONTEXT never
SET memory_ext.user_id = 'hp-user';
SELECT memory_write('{"text": "The user lives in Lisbon and loves grilled sardines."}'::jsonb) ? 'id' AS written;
SELECT memory_write('{"text": "The user''s sister Ana works as a nurse in Porto."}'::jsonb) ? 'id' AS written;
SELECT memory_write('{"text": "The user plays the cello on Sunday mornings."}'::jsonb) ? 'id' AS written;
CREATE TEMP TABLE hp_before AS
SELECT jsonb_path_query_array(memory_query('{"query": "who works as a nurse", "top_k": 3}'::jsonb), '$.items[*].text') AS texts;
SELECT model_id, index_type FROM memory.embedding_models WHERE model_id = 'builtin:all-MiniLM-L6-v2';

-- What moving the built-in model takes: its index built on each partition of memory.items and
-- attached, messages' and files' built concurrently, the switch, the old indexes dropped.
SELECT count(*) FILTER (WHERE statement ~ '^CREATE INDEX CONCURRENTLY .* ON memory\.items_p\d+ ') AS partition_builds,
       count(*) FILTER (WHERE statement ~ '^ALTER INDEX .* ATTACH PARTITION ') AS attaches
FROM memory_embedding_reindex('half') WHERE statement LIKE '%' || left(md5('builtin:all-MiniLM-L6-v2'), 12) || '%';
SELECT statement FROM memory_embedding_reindex('half')
WHERE (statement LIKE '%' || left(md5('builtin:all-MiniLM-L6-v2'), 12) || '%' OR statement LIKE '%builtin:all-MiniLM-L6-v2%')
  AND statement !~ 'memory\.items_p\d+ |ATTACH PARTITION'
ORDER BY step;

-- The switch refuses a model whose new indexes are not built yet (searches keep the old ones).
SELECT memory._embedding_index_switch('builtin:all-MiniLM-L6-v2', 'halfvec');
\echo :LAST_ERROR_SQLSTATE
-- Neither an application role nor a bad precision gets statements.
SET ROLE regress_memory_user;
SELECT count(*) FROM memory_embedding_reindex('half');
\echo :LAST_ERROR_SQLSTATE
SET memory_ext.embedding_precision = 'half';
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT count(*) FROM memory_embedding_reindex('quarter');
\echo :LAST_ERROR_SQLSTATE

-- Moved, as an operator runs it (the statements name every model earlier files registered,
-- so they are neither echoed nor shown).
\set ECHO none
\o /dev/null
SELECT statement FROM memory_embedding_reindex('half') ORDER BY step \gexec
\o
\set ECHO all
SELECT model_id, index_type FROM memory.embedding_models WHERE model_id = 'builtin:all-MiniLM-L6-v2';
SELECT count(*) AS steps_left FROM memory_embedding_reindex('half');
SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE c.relname LIKE '%_' || left(md5('builtin:all-MiniLM-L6-v2'), 12) ORDER BY 1;
-- memory_query searches the half-precision index, with the same answer.
SELECT count(*) > 0 AS half_index_scanned
FROM regexp_matches(memory.query_plan('{"query": "who works as a nurse", "top_k": 3}'), 'Index Scan using items_emh_\w+_p\d+', 'g');
SELECT jsonb_path_query_array(memory_query('{"query": "who works as a nurse", "top_k": 3}'::jsonb), '$.items[*].text') = texts AS same_answer
FROM hp_before;
-- Writes go on: a near copy is still recognised as the memory it repeats (its neighbours are
-- searched through the same index).
SELECT memory_write('{"text": "The user lives in Lisbon and loves grilled sardines."}'::jsonb) ->> 'event' AS repeated;

-- A model first stored with memory_ext.embedding_precision = half gets halfvec indexes at once.
SET memory_ext.embedding_precision = 'half';
SET memory_ext.embedding_url = 'http://127.0.0.1:61480/v1';
SET memory_ext.embedding_provider = 'openai';
SET memory_ext.embedding_model = 'mock-7';
SET memory_ext.user_id = 'hp-other';
SELECT memory_write('{"text": "A memory of the seven-dimensional model."}'::jsonb) ? 'id' AS written;
SELECT model_id, dims, index_type FROM memory.embedding_models WHERE model_id = 'openai:mock-7';
SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE c.relname IN ('items_emh_' || left(md5('openai:mock-7'), 12), 'messages_emh_' || left(md5('openai:mock-7'), 12),
                    'files_emh_' || left(md5('openai:mock-7'), 12)) ORDER BY 1;
-- A model of 2,001 to 4,000 dimensions has halfvec indexes at either precision, and its searches
-- use them (before 0.13.0 they cast to vector and compared every row).
RESET memory_ext.embedding_precision;
SET memory_ext.embedding_model = 'mock-3000';
SET memory_ext.user_id = 'hp-wide';
SELECT memory_write('{"text": "A memory of the three-thousand-dimensional model."}'::jsonb) ? 'id' AS written;
SELECT model_id, dims, index_type FROM memory.embedding_models WHERE model_id = 'openai:mock-3000';
SELECT count(*) > 0 AS half_index_scanned
FROM regexp_matches(memory.query_plan('{"query": "the three-thousand-dimensional model", "top_k": 3}'), 'Index Scan using items_emb_\w+_p\d+', 'g');
RESET memory_ext.embedding_url;
RESET memory_ext.embedding_provider;
RESET memory_ext.embedding_model;
SET memory_ext.user_id = 'hp-user';

-- And back to full precision (the setting's default), every model.
\set ECHO none
\o /dev/null
SELECT statement FROM memory_embedding_reindex() ORDER BY step \gexec
\o
\set ECHO all
SELECT model_id, index_type FROM memory.embedding_models WHERE model_id IN ('builtin:all-MiniLM-L6-v2', 'openai:mock-7', 'openai:mock-3000') ORDER BY 1;
SELECT count(*) AS half_indexes_left FROM pg_class WHERE relname LIKE '%\_emh\_%' AND relkind IN ('i', 'I');
SELECT count(*) > 0 AS full_index_scanned
FROM regexp_matches(memory.query_plan('{"query": "who works as a nurse", "top_k": 3}'), 'Index Scan using items_emb_\w+_p\d+', 'g');
SELECT jsonb_path_query_array(memory_query('{"query": "who works as a nurse", "top_k": 3}'::jsonb), '$.items[*].text') = texts AS same_answer
FROM hp_before;
