-- What the API answers over tests/data/rows.sql, read-only in what it prints: run before and
-- after pg_upgrade (tests/upgrade/pg_upgrade.sh), the two outputs must be equal. Result sets are
-- sorted: the order of equal-scored results is not part of the contract.
\set ON_ERROR_STOP on
SET memory_ext.user_id = 'upgrade-user';
SELECT array_agg(t ORDER BY t) AS query_texts FROM (
  SELECT i ->> 'text' AS t FROM jsonb_array_elements(memory_query('{"query": "What does Ana drink?", "top_k": 5}') -> 'items') i) q;
SELECT array_agg(t ORDER BY t) AS search_texts FROM (
  SELECT s ->> 'text' AS t FROM jsonb_array_elements(to_jsonb(ARRAY(SELECT to_jsonb(r) FROM memory_search('Porto trip') r))) s) q;
-- (Less the line with the current time.)
SELECT regexp_replace(compile_core_blocks('up-agent'), 'The current system date is: [^\n]*', 'The current system date is: (now)') AS blocks;
SELECT memory_file_read('projects/porto.md') ->> 'content' AS file;
SELECT (checkpoint_load('upgrade-user', 'up-thread') ->> 'step') AS checkpoint_step;
SELECT count(*) AS history_rows FROM memory_history((SELECT id FROM memory.items WHERE text LIKE 'The trip%'));
SELECT jsonb_array_length(memory_export('upgrade-user') -> 'items') AS exported_items;
SELECT seq, role, content FROM memory.messages WHERE user_id = 'upgrade-user' ORDER BY thread_id, seq;
