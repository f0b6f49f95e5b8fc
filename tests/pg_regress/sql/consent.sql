-- Consent (docs/api.md "Consent", 0.6.0): an inferred change to a sensitive field (name,
-- pronouns, city, language) is a proposal until the user approves it; a benign field (tone,
-- goals) is written once corroborated; what the user states is written at once. Every decision
-- is recorded.
\set SHOW_CONTEXT never
-- Errors whose messages name a proposal id or a time: the SQLSTATE and the message, masked.
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || regexp_replace(regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f-]{27}', '<id>', 'g'),
                                              '\d{4}-\d\d-\d\dT[0-9:]+Z', '<time>', 'g');
END
$$;
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'con-ana';
SELECT message_append('con-t', 'user', 'hello') ->> 'seq' AS seq;
-- Inferred city: a proposal, not a memory.
SELECT r ->> 'event' AS event, r ->> 'id' AS id, r ->> 'policy' AS policy, r ? 'proposal_id' AS has_proposal,
       (r ->> 'expires_at')::timestamptz BETWEEN now() + interval '6 days 23 hours' AND now() + interval '7 days 1 minute' AS seven_days
FROM memory_write('{"text": "Ana lives in Porto.", "category": "city", "source": "inferred", "thread_id": "con-t"}') r;
SELECT count(*) AS memories FROM memory.items WHERE user_id = 'con-ana';
SELECT category, text, policy, signals, status, thread_id, memory_id, decided_at, decided_by FROM memory_proposals();
-- The delta header tells the agent a change waits for consent.
SELECT memory_delta('con-t', 0) AS header;
-- Stated by the user (or no source): written at once.
SELECT memory_write('{"text": "Ana speaks Portuguese.", "category": "language", "source": "user"}') ->> 'event' AS stated;
SELECT memory_write('{"text": "Ana''s pronouns are she/her.", "category": "pronouns"}') ->> 'event' AS no_source;
-- Approval writes the memory through the write path and records who decided.
SELECT r ->> 'status' AS status, r ->> 'event' AS event
FROM memory_approve((SELECT id FROM memory_proposals() WHERE text = 'Ana lives in Porto.')) r;
SELECT text, category, thread_id, id = (SELECT memory_id FROM memory_proposals() WHERE text = 'Ana lives in Porto.') AS from_proposal
FROM memory.items WHERE user_id = 'con-ana' AND category = 'city';
SELECT status, memory_id IS NOT NULL AS written, decided_at IS NOT NULL AS decided, decided_by FROM memory_proposals() WHERE text = 'Ana lives in Porto.';
SELECT memory_delta('con-t', 0) NOT LIKE '%awaiting consent%' AS header_clear;
-- A decided proposal cannot be decided again.
SELECT pg_temp.try(format('SELECT memory_approve(%L)', (SELECT id FROM memory_proposals() WHERE text = 'Ana lives in Porto.'))) AS again;
SELECT pg_temp.try(format('SELECT memory_reject(%L)', (SELECT id FROM memory_proposals() WHERE text = 'Ana lives in Porto.'))) AS again;
-- Rejection writes nothing.
SELECT memory_write('{"text": "Ana''s preferred name is Annie.", "category": "preferred_name", "source": "inferred"}') ->> 'event' AS event;
SELECT memory_reject((SELECT id FROM memory_proposals() WHERE status = 'pending')) ->> 'status' AS rejected;
SELECT count(*) AS annie FROM memory.items WHERE text LIKE '%Annie%';
-- A benign field: written when a second signal says the same (any case), not before.
SELECT memory_write('{"text": "Ana prefers short answers.", "category": "tone", "source": "inferred"}') ->> 'event' AS first_signal;
SELECT memory_write('{"text": "Ana prefers detailed answers.", "category": "tone", "source": "inferred"}') ->> 'event' AS other_value;
SELECT r ->> 'event' AS second_signal, r ? 'proposal_id' AS applies_proposal
FROM memory_write('{"text": "ana prefers short answers.", "category": "tone", "source": "inferred"}') r;
SELECT category, text, signals, status, memory_id IS NOT NULL AS written, decided_by FROM memory_proposals() WHERE category = 'tone' ORDER BY text;
-- Expiry: 7 days without a decision. Shown as expired at once; memory_purge records it.
SELECT memory_write('{"text": "Ana lives in Lisbon.", "category": "city", "source": "inferred"}') ->> 'event' AS event;
RESET ROLE;
UPDATE memory.proposals SET expires_at = now() - interval '1 second' WHERE text = 'Ana lives in Lisbon.';
SET ROLE regress_memory_user;
SELECT status FROM memory_proposals() WHERE text = 'Ana lives in Lisbon.';
SELECT pg_temp.try(format('SELECT memory_approve(%L)', (SELECT id FROM memory_proposals() WHERE text = 'Ana lives in Lisbon.'))) AS expired;
SELECT memory_purge() >= 0 AS purged;
SELECT status, decided_at IS NOT NULL AS decided FROM memory.proposals WHERE text = 'Ana lives in Lisbon.';
-- Proposals are in the export.
SELECT jsonb_array_length(memory_export('con-ana') -> 'proposals') AS exported;
SELECT count(*) AS export_rows FROM memory_export_rows() WHERE section = 'proposals';
-- Bad input; a tenant cannot decide by editing the table.
SELECT memory_write('{"text": "Ana lives in Porto.", "category": "city", "source": "guessed"}');
SELECT memory_approve(NULL);
SELECT memory_approve('00000000-0000-0000-0000-000000000000');
UPDATE memory.proposals SET status = 'approved';
INSERT INTO memory.proposals (user_id, category, text, request, policy) VALUES ('con-ana', 'city', 'x', '{}', 'consent');
-- Another tenant sees none of it and cannot decide it.
RESET ROLE;
SELECT id AS ana_lisbon FROM memory.proposals WHERE text = 'Ana lives in Lisbon.' \gset
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'con-bob';
SELECT count(*) AS bobs FROM memory_proposals();
SELECT memory_write('{"text": "Bob lives in Rome.", "category": "city", "source": "inferred"}') ->> 'event' AS bob_event;
SELECT pg_temp.try(format('SELECT memory_approve(%L)', :'ana_lisbon')) AS bob_approves_ana;
SELECT pg_temp.try(format('SELECT memory_reject(%L)', :'ana_lisbon')) AS bob_rejects_ana;
SELECT memory_proposals('con-ana');
RESET ROLE;
SELECT memory_approve((SELECT id FROM memory.proposals WHERE text = 'Bob lives in Rome.')) ->> 'status' AS owner_decides_any;
-- 0.9.0: consent cannot be bypassed. A change is judged by every memory it touches, and a
-- category is normalised at the door, so no spelling of a protected name skips it.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'con-cyd';
SELECT memory_write('{"text": "Cyd lives in Paris.", "category": "city"}') ->> 'id' AS city_id \gset
-- An inferred update of the city memory's text: a proposal, the memory unchanged.
SELECT memory_write(format('{"id": "%s", "text": "Cyd lives in Madrid.", "source": "inferred"}', :'city_id')::jsonb) ->> 'event' AS inferred_update;
-- An inferred write under another category that supersedes it: a proposal too.
SELECT memory_write(format('{"text": "Cyd moved to Madrid.", "category": "location", "supersedes": "%s", "source": "inferred"}', :'city_id')::jsonb) ->> 'event' AS inferred_supersede;
SELECT text, state FROM memory.items WHERE user_id = 'con-cyd' ORDER BY text;
SELECT category, text, policy FROM memory_proposals() ORDER BY text;
-- Approving the supersede applies it.
SELECT memory_approve((SELECT id FROM memory_proposals() WHERE text = 'Cyd moved to Madrid.')) ->> 'superseded' = :'city_id' AS superseded;
SELECT text, state, category FROM memory.items WHERE user_id = 'con-cyd' ORDER BY text;
-- A proposal that could never be applied is refused when proposed, not dropped at approval.
SELECT pg_temp.try('SELECT memory_write(''{"text": "Cyd moved to Lyon.", "category": "city", "supersedes": "00000000-0000-0000-0000-000000000000", "source": "inferred"}'')') AS missing_target;
SELECT pg_temp.try(format('SELECT memory_write(%L)', format('{"text": "Cyd moved to Nice.", "category": "city", "supersedes": "%s", "source": "inferred"}', :'city_id'))) AS superseded_target;
-- Another tenant's memory is not there for this one (RLS): P0002.
SET memory_ext.user_id = 'con-dee';
SELECT pg_temp.try(format('SELECT memory_write(%L)', format('{"text": "Dee moved.", "category": "city", "supersedes": "%s", "source": "inferred"}', :'city_id'))) AS other_tenant;
-- Every spelling of "city" is "city", or refused (22023) when it cannot be read unambiguously.
SELECT c AS given, memory_write(jsonb_build_object('text', 'Dee lives in Oslo ' || n || '.', 'category', c, 'source', 'inferred')) ->> 'event' AS event
FROM (VALUES (1, ' city'), (2, 'city '), (3, E'city\t'), (4, 'City'), (5, 'ｃｉｔｙ')) v(n, c);
SELECT DISTINCT category FROM memory_proposals();
-- (Numbered, not shown: psql's width of an invisible character differs between versions.)
SELECT n, pg_temp.try(format('SELECT memory_write(%L)', jsonb_build_object('text', 'Dee lives in Rome.', 'category', c, 'source', 'inferred'))) AS refused
FROM unnest(ARRAY[E'city\u200b', 'cıty', 'сity', E'ci\u2028ty', E'city\u0301', E'ci\u0300ty']) WITH ORDINALITY AS t(c, n);
SELECT memory_write('{"text": "Dee is called Dee.", "category": "preferred name", "source": "inferred"}') ->> 'event' AS preferred_name,
       memory_write('{"text": "Dee speaks Norwegian.", "category": "language\u00a0", "source": "inferred"}') ->> 'event' AS language;
SELECT count(*) AS memories_written FROM memory.items WHERE user_id = 'con-dee';
-- A tool call is the model's inference: archival_insert under "city" is a proposal.
SELECT memory_agent('dee-agent', 'con-dee') IS NOT NULL AS agent;
SELECT memory_tool_call('dee-agent', NULL, 'archival_insert', '{"content": "Dee moved to Bergen.", "category": "City"}') ->> 'content' AS tool;
SELECT count(*) FROM memory_proposals() WHERE text = 'Dee moved to Bergen.';
-- Unless the application says its tool calls carry what the user stated.
SET memory_ext.tool_source = 'user';
SELECT memory_tool_call('dee-agent', NULL, 'archival_insert', '{"content": "Dee moved to Tromsø.", "category": "city"}') ->> 'content' AS tool_as_user;
RESET memory_ext.tool_source;

-- Corroboration by meaning (0.12.0): a second inferred signal in other words
-- corroborates when it is close enough (memory_ext.corroborate_threshold), names the same
-- names and numbers, and does not negate the first; a different value does not.
SET memory_ext.user_id = 'con-mia';
SELECT memory_write('{"text": "Mia wants to run a marathon.", "category": "goals", "source": "inferred"}') ->> 'event' AS first_signal;
SELECT memory_write('{"text": "Mia wants to run a half marathon.", "category": "goals", "source": "inferred"}') ->> 'event' AS another_goal;
SELECT memory_write('{"text": "Mia does not want to run a marathon.", "category": "goals", "source": "inferred"}') ->> 'event' AS the_opposite;
SELECT memory_write('{"text": "Mia really wants to run a marathon.", "category": "goals", "source": "inferred"}') ->> 'event' AS in_other_words;
SELECT text, signals, status, memory_id IS NOT NULL AS written FROM memory_proposals() WHERE category = 'goals' ORDER BY created_at;
SELECT text, category FROM memory.items WHERE user_id = 'con-mia' AND category = 'goals';
-- The same words in another order corroborate too (0.13.0: a qualifier alone was tested;
-- with the texts compared as written this second signal would stay a proposal).
SET memory_ext.user_id = 'con-kai';
SELECT memory_write('{"text": "Kai likes tea and coffee.", "category": "goals", "source": "inferred"}') ->> 'event' AS first_signal;
SELECT memory_write('{"text": "Kai likes coffee and tea.", "category": "goals", "source": "inferred"}') ->> 'event' AS reordered;
SELECT text FROM memory.items WHERE user_id = 'con-kai';
-- A frame is not a value (0.13.0): "goal is", "hopes", "likes" reword a wish or a liking, and
-- corroborate within memory_core::consent::FRAME_MARGIN of the threshold; a frame with a
-- different value does not.
SET memory_ext.user_id = 'con-ivy';
SELECT memory_write('{"text": "Ivy wants to run a marathon.", "category": "goals", "source": "inferred"}') ->> 'event' AS first_signal;
SELECT memory_write('{"text": "Ivy''s goal is to run a half marathon.", "category": "goals", "source": "inferred"}') ->> 'event' AS framed_other_value;
SELECT memory_write('{"text": "Ivy''s goal is to run a marathon.", "category": "goals", "source": "inferred"}') ->> 'event' AS framed_same_value;
SELECT text FROM memory.items WHERE user_id = 'con-ivy';
SET memory_ext.user_id = 'con-mia';
-- A source sure enough of itself (confidence at memory_ext.corroborate_confidence) needs no
-- second signal; a consent field still waits whatever the confidence.
SELECT memory_write('{"text": "Mia prefers brief answers.", "category": "tone", "source": "inferred", "confidence": 0.95}') ->> 'event' AS confident;
SELECT memory_write('{"text": "Mia prefers formal answers.", "category": "tone", "source": "inferred", "confidence": 0.5}') ->> 'event' AS unsure;
SELECT memory_write('{"text": "Mia lives in Oslo.", "category": "city", "source": "inferred", "confidence": 1}') ->> 'event' AS sensitive;
SELECT memory_write('{"text": "x", "confidence": 2}');
\echo :LAST_ERROR_SQLSTATE
-- Only the operator sets the bands.
SET memory_ext.corroborate_threshold = 0.5;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
