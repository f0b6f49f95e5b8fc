-- Compaction and write-after-run episodes (docs/design.md "Compaction", "Episodes"), without an LLM: the
-- deterministic fallbacks. A thread never loses a message.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'cole';
-- A bullet's date (when the memory happened: today, as these memories are written now) masked;
-- any day matches, so a run that crosses midnight passes.
CREATE FUNCTION pg_temp.dated(t text) RETURNS text LANGUAGE sql AS $$
    SELECT regexp_replace(t, '\(\d{4}-\d{2}-\d{2}\) ', '(<today>) ', 'g')
$$;
-- Any day in a text masked (a summary says which days it covers).
CREATE FUNCTION pg_temp.days(t text) RETURNS text LANGUAGE sql AS $$
    SELECT regexp_replace(t, '\d{4}-\d{2}-\d{2}', '<day>', 'g')
$$;

SELECT message_append('ops', 'system', 'You are the ops assistant.') ->> 'seq' AS seq;
SELECT count(*) AS appended FROM (
    SELECT message_append('ops', CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
        CASE g % 6
            WHEN 1 THEN 'Can we move the nightly backup of the orders database to 2am? It collides with the reindex job.'
            WHEN 2 THEN 'Yes. I moved the backup cron entry to 02:00 and left the reindex at 01:00.'
            WHEN 3 THEN 'The staging disk is almost full, what is using the space?'
            WHEN 4 THEN 'Old WAL archives use 80 GB. I deleted archives older than 14 days.'
            WHEN 5 THEN 'Please add an alert when the disk is above 90 percent.'
            ELSE 'Added a Grafana alert at 90 percent disk usage, routed to the on-call channel.' END)
    FROM generate_series(1, 24) g) x;
SELECT needs_compaction('ops', 600) AS needs, context_usage('ops', 600) ->> 'total_tokens' AS tokens;

-- Keep the last 6: 18 folded into one summary at the head, the system prompt stays.
SELECT c - 'summary' - 'date_from' - 'date_to' AS compacted, length(c->>'summary') > 0 AS has_summary,
       array_length(regexp_split_to_array(c->>'summary', '\s+'), 1) <= 100 AS within_100_words,
       c->>'date_from' = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD') AND c->>'date_to' = c->>'date_from' AS dated_today
FROM compact_thread('ops', 6) c;
SELECT needs_compaction('ops', 600) AS needs, context_usage('ops', 600) ->> 'total_tokens' AS tokens;
SELECT seq, role, is_summary, left(pg_temp.days(content), 60) AS starts FROM context_messages('ops');
SELECT pg_temp.days(content) AS content, pg_temp.days((metadata -> 'summary')::text) AS structure
FROM memory.messages WHERE thread_id = 'ops' AND is_summary;
SELECT count(*) AS messages, count(*) FILTER (WHERE in_context) AS in_context FROM memory.messages WHERE thread_id = 'ops';
-- Folded messages stay searchable.
SELECT seq FROM conversation_search('ops', 'WAL archives', "limit" => 1);

-- Again with nothing to fold; then with new messages: the previous summary is folded in.
SELECT compact_thread('ops', 6) AS nothing;
SELECT message_append('ops', 'user', 'Rotate the backup logs weekly.') ->> 'seq' AS seq;
SELECT message_append('ops', 'assistant', 'Done: logrotate now rotates the backup logs every Sunday.') ->> 'seq' AS seq;
SELECT c->'summarized' AS summarized, c->'kept' AS kept FROM compact_thread('ops', 2) c;
SELECT count(*) FILTER (WHERE is_summary) AS summaries, count(*) FILTER (WHERE is_summary AND in_context) AS live_summaries,
       count(*) AS messages FROM memory.messages WHERE thread_id = 'ops';
SELECT seq, role, is_summary FROM context_messages('ops');
-- A tool result is never separated from its call.
SELECT message_append('ops', 'assistant', '', tool_calls => '[{"id": "c1", "type": "function", "function": {"name": "df", "arguments": "{}"}}]') ->> 'seq' AS seq;
SELECT message_append('ops', 'tool', '/dev/sda1 71%', tool_call_id => 'c1') ->> 'seq' AS seq;
SELECT message_append('ops', 'assistant', 'Disk usage is at 71 percent.') ->> 'seq' AS seq;
SELECT c->'summarized' AS summarized, c->'kept' AS kept FROM compact_thread('ops', 2) c;
SELECT seq, role FROM context_messages('ops') WHERE NOT is_summary;

-- A summary keeps every [MemoryRef: ...] placeholder of the messages it folds (docs/design.md
-- "Compaction"): the agent can still open what they point to.
SELECT message_append('refs', 'user', 'Please install the dependencies.', 'cole') ->> 'seq' AS seq;
SELECT message_append('refs', 'tool', 'Command ''npm install'' executed. Output stored in [MemoryRef: cmd_npm_install - output of ''npm install'']. Status: Failed.') ->> 'seq' AS seq;
SELECT message_append('refs', 'assistant', 'The install failed; the log is stored. See also [MemoryRef: ci_log_7 - CI log of build 7].') ->> 'seq' AS seq;
SELECT message_append('refs', 'user', 'Ok, let us fix it tomorrow.') ->> 'seq' AS seq;
SELECT c->'summarized' AS summarized FROM compact_thread('refs', 1) c;
SELECT p AS kept_placeholder
FROM regexp_matches((SELECT content FROM memory.messages WHERE thread_id = 'refs' AND is_summary), '\[MemoryRef: [^]]*\]', 'g') m(p)
ORDER BY 1;

-- Bad input.
SELECT compact_thread('nowhere');
\echo :LAST_ERROR_SQLSTATE
SELECT compact_thread(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT compact_thread('ops', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT compact_thread('ops', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM context_messages('nowhere');
\echo :LAST_ERROR_SQLSTATE

-- Episodes: the run's messages become a file under episodes/<date>/ and an episodic memory.
SELECT message_append('run1', 'user', 'Can you fix the failing nightly backup job? It stopped on Tuesday.') ->> 'seq' AS seq;
SELECT message_append('run1', 'assistant', 'The backup job failed because the disk was full. I removed old backups and the job runs again.') ->> 'seq' AS seq;
SELECT e - 'path' - 'memory_id' - 'content' AS episode,
       e->>'path' ~ ('^episodes/' || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD') || '/can-you-fix-the-failing-nightly-backup-r-7\.md$') AS path_ok
FROM episode_write('cole', 'run1', 'r-7') e;
SELECT regexp_replace(content, 'Date: [0-9-]+', 'Date: <today>') AS file FROM memory.files WHERE path LIKE 'episodes/%';
SELECT kind, regexp_replace(text, 'On [0-9-]+ ', 'On <today> ') AS text, tags FROM memory.items WHERE kind = 'episodic';
SELECT regexp_replace(pg_temp.dated(i->>'text'), 'On [0-9-]+ ', 'On <today> ') AS recalled
FROM jsonb_array_elements(memory_query('{"query": "what happened with the nightly backup?", "top_k": 1}')->'items') i;
-- Nothing new: P0002. More messages in the same run: the same file and memory, rewritten.
SELECT episode_write('cole', 'run1', 'r-7');
\echo :LAST_ERROR_SQLSTATE
SELECT message_append('run1', 'user', 'Thanks. Page me if the backup fails again.') ->> 'seq' AS seq;
SELECT e->>'event' AS event, e->'from_seq' AS from_seq, e->'to_seq' AS to_seq FROM episode_write('cole', 'run1', 'r-7') e;
SELECT count(*) AS episode_files FROM memory.files WHERE path LIKE 'episodes/%';
SELECT count(*) AS episode_memories FROM memory.items WHERE kind = 'episodic';
-- Without a run id: the messages since the last episode.
SELECT message_append('run1', 'assistant', 'Will do: a pager alert fires on backup failure.') ->> 'seq' AS seq;
SELECT e->>'event' AS event, e->'from_seq' AS from_seq, e->'to_seq' AS to_seq, e->>'path' LIKE '%-seq4.md' AS path_ok
FROM episode_write(NULL, 'run1') e;
SELECT episode_write('cole', 'nowhere');
\echo :LAST_ERROR_SQLSTATE
SELECT episode_write('cole', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT episode_write('someone-else', 'run1');
\echo :LAST_ERROR_SQLSTATE

-- Weekly project roll-ups (0.6.0): episodes of threads labelled with a project gather into
-- projects/<project>/summary.md; memory_rollup does it now, the worker weekly.
SELECT memory_rollup() AS nothing_to_roll_up;
SELECT message_append('trip1', 'user', 'Find a hotel in Porto near the river for May.') ->> 'seq' AS seq;
SELECT message_append('trip1', 'assistant', 'Booked the Ribeira hotel for 3 nights in May.') ->> 'seq' AS seq;
UPDATE memory.threads SET metadata = '{"project": "Porto trip"}' WHERE thread_id = 'trip1';
SELECT episode_write(NULL, 'trip1') ->> 'event' AS episode;
SELECT r - 'user_id' AS rolled_up FROM jsonb_array_elements(memory_rollup() -> 'projects') r;
SELECT path, title, regexp_replace(content, '[0-9]{4}-[0-9]{2}-[0-9]{2}', '<date>', 'g') AS content,
       metadata ->> 'kind' AS kind, metadata ->> 'project' AS project, metadata ->> 'episodes' AS episodes
FROM memory.files WHERE path LIKE 'projects/%';
-- Nothing new since: nothing to do. A second episode: the summary lists it, the first under Earlier.
SELECT memory_rollup('Porto trip') AS nothing_new;
SELECT message_append('trip1', 'user', 'What is our budget for Porto?') ->> 'seq' AS seq;
SELECT message_append('trip1', 'assistant', 'The budget is 900 EUR for the whole trip.') ->> 'seq' AS seq;
SELECT episode_write(NULL, 'trip1') ->> 'event' AS episode;
SELECT jsonb_array_length(memory_rollup('Porto trip') -> 'projects') AS rolled_up;
SELECT regexp_replace(content, '[0-9]{4}-[0-9]{2}-[0-9]{2}', '<date>', 'g') AS content FROM memory.files WHERE path LIKE 'projects/%';
SELECT count(*) AS summaries FROM memory.files WHERE path LIKE 'projects/%';

-- Compaction the agent steers (0.12.0): a range,
-- everything before a message, a focus; pinned messages stay; summaries say what they cover
-- and an older one is evicted to archival memory; the context can be set exactly.
SELECT memory_agent('cole-agent', 'cole') ->> 'created' AS agent;
SELECT count(message_append('steer', CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
        CASE g % 4
            WHEN 1 THEN 'The API gateway needs rate limits of 100 requests per minute per key.'
            WHEN 2 THEN 'I set the rate limit to 100 requests per minute for each API key.'
            WHEN 3 THEN 'My daughter Ana starts school in September, so mornings are busy.'
            ELSE 'Noted: mornings are busy from September because Ana starts school.' END, 'cole')) AS appended
FROM generate_series(1, 12) g;
UPDATE memory.threads SET agent_id = 'cole-agent' WHERE thread_id = 'steer';
-- Pin message 2: no compaction folds it, context_messages' caps keep it.
SELECT p - 'id' AS pinned FROM message_pin('steer', (SELECT id FROM memory.messages WHERE thread_id = 'steer' AND seq = 2)) p;
-- A range with a focus: messages 1-6, the rate limits first; message 2 stays.
SELECT c ->> 'summarized' AS summarized, c -> 'from_seq' AS from_seq, c -> 'to_seq' AS to_seq, c -> 'archived' AS archived,
       c ->> 'focus' AS focus, c -> 'key_facts' AS key_facts, c ->> 'summary' AS summary
FROM compact_thread('steer', from_seq => 1, to_seq => 6, focus => 'API rate limits') c;
SELECT seq, role, is_summary, pinned FROM context_messages('steer');
SELECT seq, role, pinned FROM context_messages('steer', max_messages => 3);
-- The core-memory view says what the summary covers.
SELECT pg_temp.days(substring(compile_core_blocks('cole-agent') FROM '- \d+ conversation summar[^\n]*')) AS summary_line;
-- Everything before message 11: the older summary is folded in and evicted to archival memory.
SELECT c ->> 'summarized' AS summarized, c -> 'from_seq' AS from_seq, c -> 'to_seq' AS to_seq, c -> 'archived' AS archived,
       jsonb_array_length(c -> 'evicted') AS evicted
FROM compact_thread('steer', before_seq => 11) c;
SELECT seq, role, is_summary, pinned FROM context_messages('steer');
SELECT kind, tags, thread_id, agent_id, metadata -> 'summary_of' -> 'to_seq' AS covered_to, left(text, 40) AS starts
FROM memory.items WHERE thread_id = 'steer' AND 'conversation_summary' = ANY(tags);
SELECT pg_temp.dated(memory_tool_call('cole-agent', 'steer', 'archival_search', '{"query": "rate limit per API key", "tags": ["conversation_summary"]}') ->> 'content') LIKE '%- (<today>) User: The API gateway needs rate limits%(tags: conversation_summary)%' AS evicted_summary_found;
-- set_message_ids: the context is exactly these; nothing is deleted; the pin of a message taken
-- out goes with it.
SELECT set_message_ids('steer', ARRAY(SELECT id FROM memory.messages WHERE thread_id = 'steer' AND seq IN (11, 12)));
SELECT seq, role, pinned FROM context_messages('steer');
SELECT count(*) AS messages FROM memory.messages WHERE thread_id = 'steer';
SELECT set_message_ids('steer', ARRAY(SELECT id FROM memory.messages WHERE thread_id = 'steer' AND seq IN (2, 11, 12)));
SELECT message_pin('steer', (SELECT id FROM memory.messages WHERE thread_id = 'steer' AND seq = 3)) - 'id' AS pinned_back_into_context;
SELECT seq FROM context_messages('steer');
SELECT message_pin('steer', (SELECT id FROM memory.messages WHERE thread_id = 'steer' AND seq = 3), false) - 'id' AS unpinned;
-- The tools: summarize_conversation and archive_old_messages, as the agent asks for them.
SELECT count(message_append('steer', 'user', 'Deploy window is Friday ' || g || 'pm.', 'cole')) AS appended FROM generate_series(1, 4) g;
SELECT pg_temp.days(memory_tool_call('cole-agent', 'steer', 'summarize_conversation', '{"keep_last": 2, "focus": "deploy window"}') ->> 'content') AS summarized;
SELECT memory_tool_call('cole-agent', 'steer', 'archive_old_messages', '{"before_turn": 1}') ->> 'content' AS nothing;
SELECT pg_temp.days(memory_tool_call('cole-agent', 'steer', 'archive_old_messages', '{"before_turn": 18}') ->> 'content') AS archived;
SELECT seq, is_summary FROM context_messages('steer');
SELECT memory_tool_call('cole-agent', NULL, 'archive_old_messages', '{"before_turn": 16}') AS needs_a_thread;
SELECT memory_tool_call('cole-agent', 'steer', 'summarize_conversation', '{"start_turn": 5, "end_turn": 2}') AS backwards;
-- Bad input.
SELECT compact_thread('steer', from_seq => 1, before_seq => 3);
\echo :LAST_ERROR_SQLSTATE
SELECT compact_thread('steer', from_seq => 5, to_seq => 2);
\echo :LAST_ERROR_SQLSTATE
SELECT set_message_ids('steer', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT set_message_ids('steer', ARRAY[NULL::uuid]);
\echo :LAST_ERROR_SQLSTATE
SELECT set_message_ids('steer', ARRAY['00000000-0000-0000-0000-000000000001'::uuid]);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY sqlstate
SELECT set_message_ids('steer', ARRAY(SELECT id FROM memory.messages WHERE thread_id = 'ops' LIMIT 1));
\set VERBOSITY default
SELECT message_pin('steer', '00000000-0000-0000-0000-000000000002');
\echo :LAST_ERROR_SQLSTATE
SELECT message_pin('nowhere', gen_random_uuid());
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
