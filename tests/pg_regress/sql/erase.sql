-- Erasure (docs/operations.md "Privacy"): what a hard forget, a purge, a deleted message, file
-- or block and memory_erase_tenant leave behind. pg_temp.traces scans every column of every
-- table of schema memory (found in the catalog, so a new table is scanned too) for a string.
\set SHOW_CONTEXT never
CREATE FUNCTION pg_temp.traces(needle text) RETURNS TABLE (tbl text, n bigint) LANGUAGE plpgsql AS $$
DECLARE
    t regclass;
    c bigint;
BEGIN
    FOR t IN SELECT k.oid::regclass FROM pg_class k
             WHERE k.relnamespace = 'memory'::regnamespace AND k.relkind IN ('r', 'p') AND NOT k.relispartition
             ORDER BY k.relname
    LOOP
        EXECUTE format('SELECT count(*) FROM %s x WHERE strpos(x::text, $1) > 0', t) INTO c USING needle;
        IF c > 0 THEN
            tbl := t::text;
            n := c;
            RETURN NEXT;
        END IF;
    END LOOP;
END $$;
CREATE FUNCTION pg_temp.masked(j jsonb) RETURNS jsonb LANGUAGE sql AS $$
    SELECT regexp_replace(regexp_replace(j::text, '"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"', '"<id>"', 'g'),
                          '"(erased_at|purge_at)": "[^"]*"', '"\1": "<time>"', 'g')::jsonb
$$;

-- A memory in a thread, then changed: its text is in the memory, its history, the thread's
-- change log and the term statistics.
SET memory_ext.user_id = 'erin';
SELECT memory_write('{"text": "My password is hunter2 and my locker code is zorblaxian.", "thread_id": "e1"}') ->> 'event' AS event;
SELECT memory_write(jsonb_build_object('id', (SELECT id FROM memory.items WHERE text LIKE 'My password%'),
                                       'text', 'My password is hunter2; the locker code zorblaxian changed.')) ->> 'event' AS event;
SELECT memory_write('{"text": "Erin waters the ferns on Sundays.", "thread_id": "e1"}') ->> 'event' AS event;
SELECT * FROM pg_temp.traces('zorblaxian');
-- A hard forget purges at once; every copy of what it said goes, the events stay.
SELECT pg_temp.masked(memory_forget((SELECT id FROM memory.items WHERE text LIKE 'My password%'), hard => true));
SELECT * FROM pg_temp.traces('zorblaxian');
SELECT * FROM pg_temp.traces('hunter2');
SELECT event, old_ref IS NULL AS no_old, new_ref IS NULL AS no_new, meta ? 'text' AS has_text, meta ->> 'erased' AS erased
FROM memory.history WHERE user_id = 'erin' AND entity = 'item'
  AND memory_id NOT IN (SELECT id::text FROM memory.items) ORDER BY ts;
SELECT event, meta ? 'text' AS has_text FROM memory.change_log WHERE user_id = 'erin' ORDER BY rev;
-- The other memory keeps its text and history; a soft forget keeps the text (it can be restored).
SELECT pg_temp.masked(memory_forget((SELECT id FROM memory.items WHERE text LIKE 'Erin waters%')));
SELECT count(*) AS history_with_text FROM memory.history WHERE user_id = 'erin' AND new_ref LIKE 'Erin waters%';
-- The purge after purge_at erases the same way.
UPDATE memory.items SET purge_at = now() - interval '1 second' WHERE text LIKE 'Erin waters%';
SELECT memory_purge() AS purged;
SELECT * FROM pg_temp.traces('ferns');
-- A hard forget of a memory that is not there, and of no id.
SELECT memory_forget('00000000-0000-0000-0000-000000000000', hard => true);
SELECT memory_forget(NULL, hard => true);

-- A deleted message, file and block.
SELECT message_append('e2', 'user', 'The alarm code is quintarine.') ->> 'seq' AS seq;
UPDATE memory.messages SET content = 'The alarm code is quintarine, twice.' WHERE user_id = 'erin' AND thread_id = 'e2';
SELECT * FROM pg_temp.traces('quintarine');
DELETE FROM memory.messages WHERE user_id = 'erin' AND thread_id = 'e2';
SELECT * FROM pg_temp.traces('quintarine');
SELECT memory_file_write('notes/vault-plumbrella.md', 'Vault plumbrella notes.') IS NOT NULL AS written;
SELECT memory_file_delete('notes/vault-plumbrella.md') AS deleted;
SELECT * FROM pg_temp.traces('plumbrella');
SELECT memory_agent('erin-agent', 'erin') ->> 'created' AS created;
SELECT block_set('erin-agent', 'secret', 'The safe opens with mandrivelle.') IS NOT NULL AS set;
DELETE FROM memory.blocks WHERE user_id = 'erin' AND label = 'secret';
SELECT * FROM pg_temp.traces('mandrivelle');

-- memory_erase_tenant: everything of a tenant, through many write paths, then nothing left but
-- the receipt, which holds the tenant only as a hash.
SET memory_ext.user_id = 'gone-tenant';
SELECT memory_write('{"text": "Gus likes the blue kayak.", "thread_id": "g1", "category": "hobbies"}') IS NOT NULL AS ok;
SELECT memory_write_batch('[{"text": "Gus fixed the red bike."}, {"text": "Gus sings in a choir."}]') IS NOT NULL AS ok;
SELECT message_append('g1', 'user', 'Gus here, hello.') IS NOT NULL AS ok;
SELECT session_add_items('g-session', '[{"role": "user", "content": "Gus asks about kayaks."}]') IS NOT NULL AS ok;
SELECT memory_agent('gus-agent', 'gone-tenant') IS NOT NULL AS ok;
SELECT block_set('gus-agent', 'human', 'Gus, kayaker.') IS NOT NULL AS ok;
SELECT memory_file_write('notes/gus.md', 'Gus notes.') IS NOT NULL AS ok;
SELECT memory_ref_store('Gus detail: a long kayak log.', 'kayak log') IS NOT NULL AS ok;
SELECT checkpoint_save('gone-tenant', 'g1', '{"messages": ["Gus"]}') IS NOT NULL AS ok;
SELECT memory_configure('{"categories": [{"name": "hobbies"}]}') IS NOT NULL AS ok;
SELECT count(*) > 10 AS rows_before FROM pg_temp.traces('gone-tenant');
-- Not for a tenant (self_erase is off), nor for another tenant's role.
SET ROLE regress_memory_user;
SELECT memory_erase_tenant('gone-tenant', 'asked');
SELECT memory_erase_tenant('erin', 'asked');
RESET ROLE;
SELECT memory_erase_tenant(NULL, 'asked');
SELECT memory_erase_tenant('gone-tenant', ' ');
SELECT pg_temp.masked(memory_erase_tenant('gone-tenant', 'the user asked (ticket 17)') - 'erased_by');
SELECT * FROM pg_temp.traces('gone-tenant');
SELECT * FROM pg_temp.traces('kayak');
SELECT tenant_hash = encode(sha256('gone-tenant'::bytea), 'hex') AS hashed, reason, rows ->> 'items' AS items
FROM memory.erasures;
-- Erasing again finds nothing; the other tenant is untouched.
SELECT (memory_erase_tenant('gone-tenant', 'again') ->> 'total') AS total;
SELECT count(*) > 0 AS erin_kept FROM memory.history WHERE user_id = 'erin';
-- A tenant may erase itself only when a superuser allows it.
SET memory_ext.self_erase = on;
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'erin';
SELECT (memory_erase_tenant('erin', 'self') -> 'rows') ? 'history' AS erased_self;
-- (A tenant cannot change the setting back, or on.)
SET memory_ext.self_erase = off;
RESET ROLE;
RESET memory_ext.self_erase;
SELECT * FROM pg_temp.traces('erin');
-- Tenants cannot read the receipts.
SET ROLE regress_memory_user;
SELECT count(*) FROM memory.erasures;
RESET ROLE;
