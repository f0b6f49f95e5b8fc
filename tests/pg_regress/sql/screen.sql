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
