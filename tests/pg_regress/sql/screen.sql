-- Screening on the way in (docs/api.md "Screening"): secrets and national ids redacted by
-- default before anything is stored or embedded, on every write path; the operator's
-- memory_ext.screen blocks or allows by family or detector; each redaction is an event.
\set SHOW_CONTEXT never
SET memory_ext.user_id = 'screen-sam';
SELECT memory_write('{"text": "My social security number is 078-05-1120 and my password is hunter2.", "thread_id": "s1"}') ->> 'event' AS event;
SELECT text FROM memory.items WHERE user_id = 'screen-sam';
SELECT count(*) AS secret_anywhere FROM memory.history WHERE user_id = 'screen-sam' AND (new_ref LIKE '%hunter2%' OR meta::text LIKE '%hunter2%');
SELECT op, category FROM memory.events WHERE user_id = 'screen-sam' AND op LIKE 'redact%' ORDER BY category;
-- Messages, their tool calls and session items.
SELECT message_append('s1', 'user', 'The deploy key is AKIAIOSFODNN7EXAMPLE, card 4111 1111 1111 1111.') ->> 'seq' AS seq;
SELECT message_append('s1', 'assistant', '', tool_calls => '[{"id": "c1", "type": "function", "function": {"name": "login", "arguments": "{\"url\": \"postgres://admin:S3cretPw@db.internal/app\"}"}}]') ->> 'seq' AS seq;
SELECT session_add_items('s-session', '[{"role": "user", "content": "my password is Tr0ub4dor&3"}]', 'screen-sam') AS added;
SELECT seq, content, tool_calls #>> '{0,function,arguments}' AS arguments, item ->> 'content' AS item_content
FROM memory.messages WHERE user_id = 'screen-sam' ORDER BY thread_id, seq;
-- Blocks, files, details.
SELECT memory_agent('sam-agent', 'screen-sam') ->> 'created' AS created;
SELECT block_set('sam-agent', 'human', 'Sam, IBAN DE89 3704 0044 0532 0130 00') ->> 'chars' AS chars;
SELECT value FROM memory.blocks WHERE user_id = 'screen-sam' AND label = 'human';
-- A redaction must still fit the block's limit.
SELECT block_set('sam-agent', 'tiny', 'pin 4111111111111111', NULL, 22);
SELECT memory_file_write('notes/sam.md', 'SIN 130 692 544, token: ghp_abcdefghijklmnopqrstuvwxyz0123456789') ->> 'event' AS event;
SELECT content FROM memory.files WHERE user_id = 'screen-sam';
SELECT memory_ref_store('Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzYW0ifQ.c2lnbmF0dXJlX2hlcmU', 'api trace') IS NOT NULL AS stored;
SELECT content FROM memory.detail_chunks WHERE user_id = 'screen-sam';
-- Email and phone are allowed by default.
SELECT memory_write('{"text": "Sam can be reached at sam@example.org or +1 415 555 2671."}') ->> 'event' AS event;
SELECT text FROM memory.items WHERE user_id = 'screen-sam' AND text LIKE 'Sam can%';
-- The operator's policy: block a family, redact what is allowed by default.
SET memory_ext.screen = 'secret:block, email:redact';
SELECT memory_write('{"text": "The wifi password is sunflower77."}');
SELECT count(*) AS written FROM memory.items WHERE user_id = 'screen-sam' AND text LIKE '%wifi%';
SELECT memory_write('{"text": "Mail Sam at sam.work@example.com."}') ->> 'event' AS event;
SELECT text FROM memory.items WHERE user_id = 'screen-sam' AND text LIKE 'Mail Sam%';
SET memory_ext.screen = 'passport:block';
SELECT memory_write('{"text": "anything"}');
RESET memory_ext.screen;
-- Only a superuser sets the policy.
SET ROLE regress_memory_user;
SET memory_ext.screen = 'secret:allow';
RESET ROLE;
