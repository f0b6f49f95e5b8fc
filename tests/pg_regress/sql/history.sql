-- Revisions, change log and history are kept by triggers, for plain SQL writes too.
\set SHOW_CONTEXT never
-- An ordinary role (pg_regress --create-role): row-level security scopes every query below.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'hugo';

INSERT INTO memory.items (user_id, text, category, importance, thread_id)
VALUES ('hugo', 'Preferred name is Ana', 'Personal', 2, 'th');
INSERT INTO memory.items (user_id, text, category, thread_id) VALUES ('hugo', 'Ship v1 by Sep', 'Goals', 'th');
INSERT INTO memory.items (user_id, text) VALUES ('hugo', 'Not tied to a thread');
UPDATE memory.items SET text = 'Ship v1 by October' WHERE text = 'Ship v1 by Sep';
-- Bookkeeping is not an event: no revision, no history, updated_at unchanged.
CREATE TEMP TABLE stamp AS SELECT id, updated_at FROM memory.items;
UPDATE memory.items SET last_accessed_at = now() + interval '1 hour', access_count = access_count + 1;
SELECT count(*) AS touched_by_bookkeeping FROM memory.items i JOIN stamp s USING (id) WHERE i.updated_at <> s.updated_at;
UPDATE memory.items SET importance = 3 WHERE text = 'Not tied to a thread';
SELECT count(*) AS touched_by_edit FROM memory.items i JOIN stamp s USING (id) WHERE i.updated_at > s.updated_at;
-- A session cannot name the event itself: a setting such as memory.reason (which 0.1.0 read)
-- is ignored, so this soft delete is a DELETE; only the extension's own functions label
-- transitions (TTL, merge, purge: lifecycle.sql).
BEGIN;
SELECT set_config('memory.reason', 'ttl', true) IS NOT NULL AS hinted;
UPDATE memory.items SET state = 'soft_deleted', purge_at = now() + interval '30 days'
WHERE text = 'Preferred name is Ana';
COMMIT;
UPDATE memory.items SET state = 'active', purge_at = NULL WHERE text = 'Preferred name is Ana';
-- A DELETE is final: the memory's history and change log keep its events, not its text
-- (sql/triggers.sql, memory._erase_copies).
DELETE FROM memory.items WHERE text = 'Ship v1 by October';

SELECT revision FROM memory.threads WHERE thread_id = 'th';
SELECT rev, event, meta->>'category' AS category, meta->>'text' AS text, meta->>'importance' AS imp
FROM memory.change_log WHERE thread_id = 'th' ORDER BY rev;
SELECT event, old_ref, new_ref, actor, meta->>'reason' AS reason
FROM memory.history WHERE entity = 'item' ORDER BY ts, event;

-- Table constraints (terse: the failing row's DETAIL holds generated ids and clocks).
\set VERBOSITY terse
INSERT INTO memory.items (user_id, text, importance) VALUES ('hugo', 'x', 6);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO memory.items (user_id, text) VALUES ('hugo', '   ');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO memory.items (user_id, text, state) VALUES ('hugo', 'x', 'gone');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO memory.items (user_id, text, state) VALUES ('hugo', 'x', 'soft_deleted');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO memory.items (user_id, text, kind) VALUES ('hugo', 'x', 'dream');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- The audit trail is read-only to ordinary roles (tests/client/tests/tenancy.rs tries it as one).
SELECT has_table_privilege('public', 'memory.history', 'UPDATE') AS public_may_update_history,
       has_table_privilege('public', 'memory.history', 'SELECT') AS public_may_read_history;
