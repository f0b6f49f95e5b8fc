-- The change feed (docs/api.md "Change feed"): memory_changes returns what changed for the
-- caller, in feed order, after a cursor; ids only, never text; other tenants' changes never.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'feed-a';

-- The feed shows only transactions older than every one still running (sql/changes.sql), so a
-- background transaction of the worker may hold a change back for a moment: read until `want`.
CREATE FUNCTION pg_temp.feed(since text, want int) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE r jsonb;
BEGIN
    FOR i IN 1..200 LOOP
        r := memory_changes(since, 1000);
        EXIT WHEN jsonb_array_length(r->'changes') >= want;
        PERFORM pg_sleep(0.05);
    END LOOP;
    RETURN r;
END $$;
-- A change as the golden shows it: what it is, not its ids or time.
CREATE FUNCTION pg_temp.shown(r jsonb) RETURNS TABLE (entity text, op text, revision int) LANGUAGE sql AS $$
    SELECT c->>'entity', c->>'op', (c->>'revision')::int FROM jsonb_array_elements(r->'changes') c
$$;

-- An empty feed: no changes, a cursor at its start, the channel and the caller's tag.
SELECT jsonb_array_length(r->'changes') AS changes, r->>'cursor' ~ '^[0-9a-f]{8}\.0\.0$' AS cursor_at_start,
       r->>'channel' AS channel, r->'tags' ->> 0 ~ '^[0-9a-f]{16}$' AS tagged
FROM memory_changes() r;

-- Every kind of object: a memory written, changed and forgotten; a block; a message; a file;
-- a store item.
CREATE TEMP TABLE m AS SELECT (memory_write('{"text": "Ana moved to Porto in May."}') ->> 'id')::uuid AS id;
SELECT memory_write(jsonb_build_object('id', id, 'text', 'Ana moved to Lisbon in June.')) ->> 'event' AS rewritten FROM m;
SELECT memory_forget(id) ->> 'state' AS forgotten FROM m;
SELECT memory_agent('feeder', 'feed-a') IS NOT NULL AS agent;
SELECT block_set('feeder', 'notes', 'Ana lives in Lisbon.') IS NOT NULL AS block;
SELECT message_append('feed-thread', 'user', 'hello') ->> 'seq' AS seq;
SELECT memory_file_write('notes/ana.md', 'Ana likes tea.') ->> 'event' AS file;
SELECT r ->> 'event' AS stored FROM store_put('{prefs}', 'tea', '{"kind": "green"}') r;
CREATE TEMP TABLE first_read AS SELECT pg_temp.feed(NULL, 9) AS r;
SELECT * FROM pg_temp.shown((SELECT r FROM first_read));
-- Ids only, never text: nothing of what was written is in the feed.
SELECT (SELECT r FROM first_read)::text ~ '(Ana|Porto|Lisbon|hello|tea)' AS text_in_feed;
-- Each change names its object: the memory's id is the one memory_history knows.
SELECT count(*) AS memory_changes_of_the_item
FROM jsonb_array_elements((SELECT r FROM first_read)->'changes') c
WHERE c->>'id' = (SELECT id::text FROM m);

-- The cursor: from where the last read ended, only what came after; read again, nothing, and
-- the same cursor back.
SELECT memory_write('{"text": "Ana got a cat."}') ->> 'event' AS written;
CREATE TEMP TABLE second_read AS SELECT pg_temp.feed((SELECT r->>'cursor' FROM first_read), 1) AS r;
SELECT * FROM pg_temp.shown((SELECT r FROM second_read));
SELECT jsonb_array_length(r->'changes') AS again, r->>'cursor' = (SELECT r->>'cursor' FROM second_read) AS same_cursor
FROM memory_changes((SELECT r->>'cursor' FROM second_read)) r;
-- A limit pages through the same changes in the same order.
SELECT jsonb_array_length(memory_changes(NULL, 3)->'changes') AS page;
SELECT (SELECT array_agg(c->>'id') FROM jsonb_array_elements(memory_changes(memory_changes(NULL, 3)->>'cursor', 1000)->'changes') c)
     = (SELECT (array_agg(c->>'id'))[4:] FROM jsonb_array_elements(pg_temp.feed(NULL, 10)->'changes') c) AS pages_join_up;

-- What is not a change: reading memories (their access bookkeeping) adds nothing.
SELECT jsonb_array_length(memory_query('{"query": "Where does Ana live?"}')->'items') > 0 AS found;
SELECT jsonb_array_length(memory_changes((SELECT r->>'cursor' FROM second_read))->'changes') AS after_reading;

-- Another tenant sees none of it, and has a tag of its own.
SET memory_ext.user_id = 'feed-b';
SELECT jsonb_array_length(r->'changes') AS others_changes,
       r->'tags' <> (SELECT r->'tags' FROM first_read) AS own_tag
FROM memory_changes() r;
-- Nor through the table.
SELECT count(*) AS rows_of_feed_a FROM memory.changes WHERE user_id = 'feed-a';

-- memory_purge drops changes older than memory_ext.changes_days (a superuser's setting).
RESET ROLE;
UPDATE memory.changes SET at = at - interval '8 days' WHERE user_id = 'feed-a' AND entity = 'block';
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'feed-a';
SELECT memory_purge() >= 0 AS purged;
SELECT count(*) FILTER (WHERE c->>'entity' = 'block') AS blocks_left, count(*) AS left
FROM jsonb_array_elements(memory_changes(NULL, 1000)->'changes') c;
SET memory_ext.user_id = 'feed-b';

-- Bad input: 22023 with the reason.
SELECT memory_changes(NULL, 0);
SELECT memory_changes(NULL, 1001);
SELECT memory_changes('garbage');
SELECT memory_changes('0a1b2c3d.1.1');
-- Nobody writes the feed by hand.
INSERT INTO memory.changes (user_id, entity, id, op) VALUES ('feed-b', 'memory', 'x', 'insert');
-- The feed's secret is the owner's.
SELECT * FROM memory.feed;
SELECT memory._owner_tag('feed-a');
-- 'now': no changes, and the cursor at the end of the feed, from which the next read starts.
SET memory_ext.user_id = 'feed-a';
SELECT jsonb_array_length(r -> 'changes') AS changes,
       (r ->> 'cursor') = (memory_changes(NULL, 1000) ->> 'cursor') AS at_the_end,
       (r ->> 'cursor') <> (memory_changes(NULL, 1) ->> 'cursor') AS past_the_first
FROM memory_changes('now') r;
SELECT jsonb_array_length(memory_changes(memory_changes('now') ->> 'cursor') -> 'changes') AS after_now;
