-- What an upgrade is meant to change, written on the release upgraded from, after the rows the
-- upgrade must leave alone have been hashed (tests/upgrade/run.sh leaves this tenant out of the
-- hashes); tests/upgrade/changes_after.sql checks it after the upgrade. Only functions every
-- release has.
\set ON_ERROR_STOP on
SET memory_ext.user_id = 'upgrade-changes';
-- 0.9.0: categories are normalised; memories and configurations written before are too.
SELECT memory_configure('{"categories": [{"name": "Travel Plans"}, {"name": "health"}], "allowlists": {"ch-agent": ["Travel Plans", "health"]}}') IS NOT NULL;
SELECT memory_write('{"text": "Ana booked the night train to Vienna.", "category": "Travel Plans"}') IS NOT NULL;
SELECT memory_write('{"text": "Ana swims on Mondays.", "category": " Health"}') IS NOT NULL;
-- 0.13.0: a text written without spaces is read as bigrams; the term statistics follow.
SELECT memory_write('{"text": "我住在里斯本。"}') IS NOT NULL;
-- 0.11.0: what a purge left in history and the change log before 0.11.0 is scrubbed.
SELECT memory_forget((memory_write('{"text": "Ana hid the spare key under the quokkastone.", "thread_id": "ch-thread"}') ->> 'id')::uuid) IS NOT NULL;
UPDATE memory.items SET purge_at = now() - interval '1 minute' WHERE user_id = 'upgrade-changes' AND state = 'soft_deleted';
SELECT memory_purge() >= 1;
-- 0.13.0: a store filter on an array value matched the items without the field (a release
-- from before 0.12.0 has no store: nothing to write).
DO $$
BEGIN
    IF to_regproc('store_put') IS NOT NULL THEN
        PERFORM store_put(ARRAY['ch-docs'], 'shared', '{"acl": ["alice"], "text": "for alice"}');
        PERFORM store_put(ARRAY['ch-docs'], 'no-acl', '{"text": "for nobody in particular"}');
    END IF;
END $$;
