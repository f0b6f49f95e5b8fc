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
-- Every decision is an event, allowed ones too (detector and action, never the value).
SELECT op, category, count(*) FROM memory.events WHERE user_id = 'screen-sam' AND op LIKE 'allow%' GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) AS value_in_events FROM memory.events WHERE user_id = 'screen-sam' AND to_jsonb(events)::text LIKE '%sam@example.org%';
-- A category's screening (memory_configure) tightens the operator's policy, never loosens it:
-- contacts' email addresses are flagged, and a card stays redacted though the category allows it.
SELECT memory_configure('{"categories": [{"name": "contact", "screen": {"email": "flag", "payment_card": "allow"}}, {"name": "health", "screen": "national_id:block"}]}');
SELECT name, screen FROM memory.categories WHERE user_id = 'screen-sam' ORDER BY name;
SELECT memory_configure('{"categories": [{"name": "x", "screen": {"passport": "redact"}}]}');
SELECT memory_configure('{"categories": [{"name": "x", "screen": {"email": "hide"}}]}');
SELECT memory_write('{"text": "Card 4111 1111 1111 1111 on file.", "category": "contact"}') ->> 'event' AS event;
SELECT text FROM memory.items WHERE user_id = 'screen-sam' AND text LIKE 'Card%';
SELECT memory_write('{"text": "SSN 078-05-1120 for the clinic.", "category": "health"}');
-- Flagged: held as a proposal, out of recall and of the delta header, until approved.
SELECT r - 'proposal_id' - 'expires_at' AS answer FROM memory_write('{"text": "Dana writes from dana.k@example.net.", "category": "contact"}') r;
SELECT count(*) AS written FROM memory.items WHERE user_id = 'screen-sam' AND text LIKE '%dana.k%';
SELECT category, policy, status, text FROM memory_proposals() WHERE policy = 'flag';
SELECT count(*) FILTER (WHERE text LIKE '%dana.k%') AS found FROM memory_search('dana.k@example.net');
SELECT memory_delta('s1', 0) LIKE '%dana.k%' AS in_header;
SELECT memory_approve(id) ->> 'status' AS status FROM memory_proposals() WHERE policy = 'flag';
SELECT text FROM memory.items WHERE user_id = 'screen-sam' AND text LIKE '%dana.k%';
SELECT op, category FROM memory.events WHERE user_id = 'screen-sam' AND op IN ('flag_memory', 'approve') ORDER BY op;
-- A write that cannot wait for approval (a message, a block, a file) redacts what is flagged.
SET memory_ext.screen = 'email:flag';
SELECT message_append('s1', 'user', 'write to lee@example.org') ->> 'seq' AS seq;
SELECT content FROM memory.messages WHERE user_id = 'screen-sam' AND content LIKE 'write to%';
RESET memory_ext.screen;
-- A superuser's per-call "screen" is the policy for that call; anyone else gets 42501.
SELECT memory_write('{"text": "Test fixture password is hunter3.", "screen": {"secret": "allow"}}') ->> 'event' AS event;
SELECT text FROM memory.items WHERE user_id = 'screen-sam' AND text LIKE 'Test fixture%';
SELECT memory_write('{"text": "x", "screen": {"secret": "maybe"}}');
SET ROLE regress_memory_user;
SELECT memory_write('{"text": "Other fixture password is hunter4.", "screen": "secret:allow"}');
RESET ROLE;
-- 0.13.0: every field stored or shown to a model, the same policy. Text fields are redacted:
-- a block's description, a memory's tags and metadata, a detail's metadata, a checkpoint's
-- state, document, metadata and its json and msgpack blobs.
SET memory_ext.user_id = 'screen-every';
SELECT memory_agent('every-agent', 'screen-every') ->> 'created' AS created;
SELECT block_set('every-agent', 'notes', 'fine', 'card 4111 1111 1111 1111 on file') ->> 'chars' AS chars;
SELECT description FROM memory.blocks WHERE user_id = 'screen-every' AND label = 'notes';
SELECT memory_write('{"text": "Ana paid the deposit.", "tags": ["ssn 536-22-1234"], "metadata": {"token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "n": 1}}') ->> 'event' AS event;
SELECT tags, metadata FROM memory.items WHERE user_id = 'screen-every';
SELECT memory_ref_store('plain output', 'a log', metadata => '{"key": "AKIAIOSFODNN7EXAMPLE"}') IS NOT NULL AS stored;
SELECT metadata ->> 'key' AS detail_metadata FROM memory.details WHERE user_id = 'screen-every';
SELECT checkpoint_save('screen-every', 'cp-1', '{"messages": ["my card is 4111 1111 1111 1111"]}') ->> 'thread_id' AS saved;
SELECT checkpoint_data FROM memory.checkpoints WHERE user_id = 'screen-every';
SELECT checkpoint_put('cp-2', '', '1', NULL, '{"v": 1, "channel_versions": {"note": "1.0.38495983759484487"}, "channel_values": {"note": "ssn 536-22-1234"}}', '{"source": "AKIAIOSFODNN7EXAMPLE"}',
                      ARRAY['messages', 'raw'], ARRAY['1', '1'], ARRAY['json', 'bytes'],
                      ARRAY[convert_to('[{"content": "card 4111 1111 1111 1111"}]', 'UTF8'),
                            convert_to('card 4111 1111 1111 1111', 'UTF8')]) ->> 'checkpoint_id' AS put;
SELECT checkpoint #>> '{channel_values,note}' AS note, checkpoint #>> '{channel_versions,note}' AS version,
       metadata ->> 'source' AS source FROM memory.checkpoint_steps WHERE user_id = 'screen-every';
SELECT channel, type, convert_from(blob, 'UTF8') AS blob FROM memory.checkpoint_blobs WHERE user_id = 'screen-every' ORDER BY channel;
-- msgpack: ["card 4111 1111 1111 1111"] as LangGraph writes a list of one string.
SELECT checkpoint_put_writes('cp-2', '', '1', 'task-1', '', ARRAY[0], ARRAY['messages'], ARRAY['msgpack'],
                             ARRAY['\x91b8636172642034313131203131313120313131312031313131'::bytea]) AS writes;
SELECT encode(blob, 'escape') AS msgpack_blob FROM memory.checkpoint_writes WHERE user_id = 'screen-every';
-- Names are refused rather than rewritten (22023 naming the field and the detector): a thread
-- id, a tool call id, a run id, an actor, a category, a store key or namespace label, a memory
-- file path, an entity alias. Nothing is written.
\set VERBOSITY terse
SELECT message_append('card 4111 1111 1111 1111', 'user', 'hi');
SELECT message_append('s-every', 'tool', 'ok', tool_call_id => 'ssn 536-22-1234');
SELECT memory_write('{"text": "Ana runs.", "run_id": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}');
SELECT memory_write('{"text": "Ana runs.", "actor_id": "AKIAIOSFODNN7EXAMPLE"}');
SELECT memory_write('{"text": "Ana runs.", "category": "card 4111 1111 1111 1111"}');
SELECT store_put('{docs}', 'ssn 536-22-1234', '{"a": 1}');
SELECT store_put(ARRAY['card 4111 1111 1111 1111'], 'k', '{"a": 1}');
SELECT memory_file_write('notes/ssn 536-22-1234.md', 'x');
SELECT memory_entity_alias((SELECT id FROM memory.entities WHERE user_id = 'screen-every' LIMIT 1), 'ghp_abcdefghijklmnopqrstuvwxyz0123456789');
SELECT checkpoint_save('screen-every', 'ssn 536-22-1234', '{}');
SELECT checkpoint_put('card 4111 1111 1111 1111', '', '1', NULL, '{}');
\set VERBOSITY default
SELECT count(*) AS nothing_named FROM memory.messages WHERE user_id = 'screen-every';
RESET memory_ext.user_id;
