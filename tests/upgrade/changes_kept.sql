-- What the upgrade must leave as it was for the tenant of tests/upgrade/changes_before.sql,
-- whose memories' categories it normalises: their updated_at, their history and change log
-- (no event for the normalising). One line, taken before and after by tests/upgrade/run.sh.
SELECT (SELECT coalesce(string_agg(id::text || '=' || updated_at::text, ',' ORDER BY id), '')
        FROM memory.items WHERE user_id = 'upgrade-changes')
       || ' history ' || (SELECT count(*) FROM memory.history WHERE user_id = 'upgrade-changes')
       || ' change_log ' || (SELECT count(*) FROM memory.change_log WHERE user_id = 'upgrade-changes');
