-- Writes that can be retried (docs/api.md "Idempotency"): a repeat with the same key and body
-- answers as the first call did and writes nothing; the same key with another body is 22023;
-- keys are per tenant and live memory_ext.idempotency_days.
\set SHOW_CONTEXT never
SET memory_ext.user_id = 'idem-ida';
CREATE TEMP TABLE answers (call text, answer jsonb);
INSERT INTO answers SELECT 'first', memory_write('{"text": "Ida keeps bees on the roof.", "idempotency_key": "w-1"}');
-- The same request, its fields in another order: the first answer, nothing written.
INSERT INTO answers SELECT 'repeat', memory_write('{"idempotency_key": "w-1", "text": "Ida keeps bees on the roof."}');
SELECT count(DISTINCT answer) AS answers, count(*) AS calls FROM answers;
SELECT answer ->> 'event' AS event FROM answers ORDER BY call;
SELECT count(*) AS memories, (SELECT count(*) FROM memory.history WHERE user_id = 'idem-ida' AND event = 'ADD') AS adds
FROM memory.items WHERE user_id = 'idem-ida';
-- The same key for another body.
SELECT memory_write('{"text": "Ida keeps wasps.", "idempotency_key": "w-1"}');
-- Keys are the tenant's own: another tenant's w-1 is a new key.
SET memory_ext.user_id = 'idem-other';
SELECT memory_write('{"text": "Ida keeps bees on the roof.", "idempotency_key": "w-1"}') ->> 'event' AS other_tenant;
SET memory_ext.user_id = 'idem-ida';
-- Batch items: a repeat of an earlier call, a new item, and an item repeating the new one's key.
SELECT jsonb_agg(r ->> 'event') AS events,
       (jsonb_agg(r ->> 'id') ->> 0) = (SELECT answer ->> 'id' FROM answers WHERE call = 'first') AS first_is_the_old_memory,
       (jsonb_agg(r ->> 'id') ->> 1) = (jsonb_agg(r ->> 'id') ->> 2) AS twins_share_an_answer
FROM jsonb_array_elements(memory_write_batch('[
  {"text": "Ida keeps bees on the roof.", "idempotency_key": "w-1"},
  {"text": "Ida sells honey on Saturdays.", "idempotency_key": "w-2"},
  {"text": "Ida sells honey on Saturdays.", "idempotency_key": "w-2"}]')) r;
SELECT memory_write_batch('[{"text": "a", "idempotency_key": "w-3"}, {"text": "b", "idempotency_key": "w-3"}]');
SELECT count(*) AS memories FROM memory.items WHERE user_id = 'idem-ida';
-- A failed call leaves no key: its retry is a first call.
SELECT memory_write('{"text": "", "idempotency_key": "w-4"}');
SELECT count(*) AS keys_w4 FROM memory.idempotency_keys WHERE user_id = 'idem-ida' AND key = 'w-4';
-- Bad keys.
SELECT memory_write('{"text": "x", "idempotency_key": ""}');
SELECT memory_write('{"text": "x", "idempotency_key": 7}');
-- Messages: with created_at and metadata, appended once.
SELECT message_append('idem-t', 'user', 'Back from the apiary.', 'idem-ida',
                      created_at => '2024-05-01 09:30+00', metadata => '{"source": "sms"}', idempotency_key => 'm-1') ->> 'seq' AS seq;
SELECT message_append('idem-t', 'user', 'Back from the apiary.', 'idem-ida',
                      created_at => '2024-05-01 09:30+00', metadata => '{"source": "sms"}', idempotency_key => 'm-1') ->> 'seq' AS repeat_seq;
SELECT message_append('idem-t', 'user', 'Back from the hives.', idempotency_key => 'm-1');
SELECT seq, content, created_at AT TIME ZONE 'UTC' AS created_utc, metadata FROM memory.messages WHERE user_id = 'idem-ida' ORDER BY seq;
SELECT message_append('idem-t', 'user', 'x', metadata => '[1]');
-- Session items, episodes, the end of a run.
SELECT session_add_items('idem-t', '[{"role": "assistant", "content": "How many hives?"}]', idempotency_key => 's-1') AS added;
SELECT session_add_items('idem-t', '[{"role": "assistant", "content": "How many hives?"}]', idempotency_key => 's-1') AS added_again;
SELECT count(*) AS messages FROM memory.messages WHERE user_id = 'idem-ida';
SELECT (e1 ->> 'path') = (e2 ->> 'path') AS same_episode, e1 ->> 'messages' AS messages
FROM (SELECT episode_write('idem-ida', 'idem-t', idempotency_key => 'e-1') AS e1) a,
     LATERAL (SELECT episode_write('idem-ida', 'idem-t', idempotency_key => 'e-1') AS e2) b;
SELECT (r1 = r2) AS same_answer
FROM (SELECT run_end('idem-t', 'run-1', idempotency_key => 'r-1') AS r1) a,
     LATERAL (SELECT run_end('idem-t', 'run-1', idempotency_key => 'r-1') AS r2) b;
SELECT count(*) AS queued FROM memory.run_ends WHERE user_id = 'idem-ida';
SELECT run_end('idem-t', 'run-2', idempotency_key => 'r-1');
-- What a key keeps: the operation, a hash of the body and the answer, never the request.
SELECT key, op, length(body_hash) AS hash_bytes, answer IS NOT NULL AS answered
FROM memory.idempotency_keys WHERE user_id = 'idem-ida' ORDER BY key;
-- Only an episode's answer holds text; it goes when the episode's file does.
SELECT count(*) AS keys_holding_text FROM memory.idempotency_keys WHERE answer::text LIKE '%apiary%';
SELECT memory_file_delete(answer ->> 'path') IS NOT NULL AS deleted FROM memory.idempotency_keys WHERE user_id = 'idem-ida' AND key = 'e-1';
SELECT count(*) FILTER (WHERE answer::text LIKE '%apiary%') AS keys_holding_text, count(*) FILTER (WHERE answer ? 'erased') AS erased
FROM memory.idempotency_keys WHERE user_id = 'idem-ida';
-- Expired keys: a repeat after memory_ext.idempotency_days writes again, and the purge deletes them.
RESET memory_ext.user_id;
UPDATE memory.idempotency_keys SET created_at = now() - interval '8 days' WHERE user_id = 'idem-ida' AND key = 'm-1';
SET memory_ext.user_id = 'idem-ida';
SELECT message_append('idem-t', 'user', 'Back from the hives.', idempotency_key => 'm-1') ->> 'seq' AS seq_after_expiry;
RESET memory_ext.user_id;
UPDATE memory.idempotency_keys SET created_at = now() - interval '8 days' WHERE user_id = 'idem-ida' AND key = 'w-2';
SELECT memory_purge() IS NOT NULL AS purged;
SELECT count(*) FILTER (WHERE key = 'w-2') AS expired_left, count(*) > 0 AS others_kept FROM memory.idempotency_keys WHERE user_id = 'idem-ida';
-- Another tenant cannot see or claim them.
CREATE ROLE idem_app;
SET ROLE idem_app;
SET memory_ext.user_id = 'idem-mallory';
SELECT count(*) AS visible FROM memory.idempotency_keys;
RESET ROLE;
DROP ROLE idem_app;
