-- The change feed (docs/api.md "Change feed"): what changed in a tenant's memory, in an order a
-- reader can follow with a cursor (memory_changes, src/ops/changes.rs), and a NOTIFY on channel
-- memory_ext_changes when it changes.
--
-- # What is recorded
-- One row per change of a memory, block, file, store item or message (fed by memory.history,
-- which every such change already writes, and by new messages, which history leaves to the
-- change log) and of a consent proposal. Ids only, never text: the feed says that something
-- changed and where to read it, under the reader's row-level security.
--
-- # Why (xid, seq) and the snapshot's xmin
-- A sequence number alone is not commit order: a transaction that took 41 may commit after one
-- that took 42, and a reader that had gone past 42 would never see 41. Each row carries the
-- id of the transaction that wrote it (pg_current_xact_id()), and a reader reads only rows of
-- transactions older than its snapshot's xmin, in (xid, seq) order. Every transaction below
-- the xmin has ended, and any transaction that writes later gets a higher id, so that part of
-- the feed is final: a cursor into it never skips or repeats. The price: a transaction that
-- stays open holds the feed back until it ends (docs/api.md says so).
--
-- # Why the feed is not dumped
-- Transaction ids belong to one cluster: restored into another, old rows would carry ids the
-- new cluster has not reached, and cursors would skip its first changes. The feed is left out
-- of pg_dump's output (sql/backup.sql) with its epoch; a restore starts a new feed with a new
-- epoch, and a cursor of the old one is refused with a clear error (memory_core::changes).

-- The feed's epoch and the secret the NOTIFY payload's owner tags are made with: one row,
-- made by CREATE EXTENSION, readable by the extension's owner only.
CREATE TABLE memory.feed (
    one    boolean NOT NULL DEFAULT true PRIMARY KEY CHECK (one),
    epoch  text    NOT NULL,
    secret bytea   NOT NULL
);
INSERT INTO memory.feed (epoch, secret)
VALUES (left(md5(gen_random_uuid()::text), 8), decode(md5(gen_random_uuid()::text) || md5(gen_random_uuid()::text), 'hex'));
REVOKE ALL ON memory.feed FROM PUBLIC;

CREATE TABLE memory.changes (
    user_id  text        NOT NULL,
    xid      xid8        NOT NULL DEFAULT pg_current_xact_id(),
    seq      bigint      GENERATED ALWAYS AS IDENTITY,
    entity   text        NOT NULL CHECK (entity IN ('memory', 'block', 'message', 'file', 'store_item', 'proposal')),
    id       text        NOT NULL,
    op       text        NOT NULL CHECK (op IN ('insert', 'update', 'delete')),
    at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, xid, seq)
);
-- An object's changes, counted into its revision as the feed is read (not as it is written: on
-- Citus a trigger on a shard may not read another distributed table, docs/citus.md).
CREATE INDEX changes_object_idx ON memory.changes (user_id, entity, id, xid, seq);
-- The worker's pruning (memory_ext.changes_days).
CREATE INDEX changes_at_idx ON memory.changes (at);

-- The epoch memory_changes writes into its cursors.
CREATE FUNCTION memory._feed_epoch() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT epoch FROM memory.feed
$$;
GRANT EXECUTE ON FUNCTION memory._feed_epoch() TO PUBLIC;

-- The tag a tenant's (or space's) notifications carry: 16 hex digits of SHA-256 over the
-- feed's secret and the owner. A listener learns its own tags from memory_changes and keeps the
-- notifications that carry them; it cannot compute another tenant's tag from the tenant's name
-- (role names, user ids are often guessable), so the shared channel tells it nothing of others
-- but that something changed. memory._change repeats this expression inline (a SQL function
-- is planned at every call): change both together.
CREATE FUNCTION memory._owner_tag(p_owner text) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT left(encode(sha256(secret || convert_to(p_owner, 'UTF8')), 'hex'), 16) FROM memory.feed
$$;
REVOKE ALL ON FUNCTION memory._owner_tag(text) FROM PUBLIC;

-- Records one change and notifies. NOTIFY folds identical payloads of one transaction into
-- one, so a transaction that changes a thousand memories of a tenant sends that tenant one
-- notification, at commit, and none if it rolls back. Not on Citus (pg_dist_partition is its
-- catalog): a shard's write may be part of a two-phase commit, which cannot carry a NOTIFY
-- ("cannot PREPARE a transaction that has executed ... NOTIFY"), docs/citus.md.
CREATE FUNCTION memory._change(p_user text, p_entity text, p_id text, p_op text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    INSERT INTO memory.changes (user_id, entity, id, op) VALUES (p_user, p_entity, p_id, p_op);
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        -- memory._owner_tag's expression, written here so that its plan is kept with this
        -- function's (a SQL function is parsed and planned at every call: two a write).
        PERFORM pg_notify('memory_ext_changes',
                          json_build_object('owner', (SELECT left(encode(sha256(secret || convert_to(p_user, 'UTF8')), 'hex'), 16)
                                                      FROM memory.feed),
                                            'xid', pg_current_xact_id()::text)::text);
    END IF;
END $$;
REVOKE ALL ON FUNCTION memory._change(text, text, text, text) FROM PUBLIC;

-- Memories, blocks, files, store items and message edits: from their history rows. A history
-- row written while restoring a dump is not a change (memory._restoring, sql/triggers.sql).
CREATE FUNCTION memory._history_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    PERFORM memory._change(
        NEW.user_id,
        CASE NEW.entity WHEN 'item' THEN 'memory' WHEN 'store' THEN 'store_item' ELSE NEW.entity END,
        NEW.memory_id,
        CASE
            WHEN NEW.event = 'ADD' THEN 'insert'
            WHEN NEW.event IN ('DELETE', 'TTL', 'PURGE') THEN 'delete'
            WHEN NEW.event = 'MERGE' AND coalesce(NEW.meta->>'state_to', 'active') NOT IN ('active', 'superseded') THEN 'delete'
            ELSE 'update'
        END);
    RETURN NULL;
END $$;

-- New messages (their edits and deletions come through history).
CREATE FUNCTION memory._message_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    PERFORM memory._change(NEW.user_id, 'message', NEW.id::text, 'insert');
    RETURN NULL;
END $$;

-- Consent proposals: made, decided, removed.
CREATE FUNCTION memory._proposal_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p memory.proposals := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    PERFORM memory._change(p.user_id, 'proposal', p.id::text, lower(TG_OP));
    RETURN NULL;
END $$;

-- The triggers that feed it. A function, not plain statements, for a cluster upgraded from
-- 0.12.0: on Citus the coordinator runs the upgrade before the workers have the functions
-- above, so memory_citus_distribute() makes them there afterwards (src/ops/citus.rs), as it
-- makes the language columns; on one node the upgrade calls it. Does nothing where they are.
CREATE FUNCTION memory._change_triggers() RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
    IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'memory.history'::regclass AND tgname = 'history_change') THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        -- As memory_citus_distribute sets it: triggers on distributed tables (docs/citus.md).
        PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    END IF;
    EXECUTE $s$CREATE TRIGGER history_change AFTER INSERT ON memory.history FOR EACH ROW
               EXECUTE FUNCTION memory._history_change()$s$;
    EXECUTE $s$CREATE TRIGGER messages_change AFTER INSERT ON memory.messages FOR EACH ROW
               EXECUTE FUNCTION memory._message_change()$s$;
    EXECUTE $s$CREATE TRIGGER proposals_change AFTER INSERT OR UPDATE OR DELETE ON memory.proposals FOR EACH ROW
               EXECUTE FUNCTION memory._proposal_change()$s$;
    RETURN true;
END $fn$;
REVOKE ALL ON FUNCTION memory._change_triggers() FROM PUBLIC;
SELECT memory._change_triggers();
