-- Revisions, change log and audit history, kept by triggers so that they hold for every write
-- path: our functions, an application's plain INSERT/UPDATE/DELETE, the worker.
--
-- # Why SECURITY DEFINER
-- `memory.history` and `memory.change_log` are read-only to ordinary roles and
-- `threads.revision` is not theirs to set: an audit trail a tenant can edit is worthless. The
-- trigger functions below therefore run as the extension owner. That is sound because
--   * a trigger function cannot be called directly, only fired by a row change;
--   * they only act on NEW/OLD rows of the triggering table, which the table's row-level
--     security has admitted (a BEFORE trigger's effects roll back with the statement when the
--     row then fails the policy check);
--   * search_path is pinned and every name is schema-qualified.
-- The helper memory._bump_revision is revoked from PUBLIC for the same reason.
--
-- # Why revisions are gapless
-- `UPDATE threads SET revision = revision + 1 ... RETURNING` takes the thread row's lock until
-- commit, so concurrent writers to one thread queue there and each sees the previous one's
-- committed value: revisions are assigned in commit order, and a rolled-back writer's bump
-- rolls back with it.
--
-- Hints the extension's own functions set around the statement they label, read through
-- memory._hint(name) (src/pg/hints.rs; plain SQL cannot set them):
--   reason  'forget' | 'ttl' | 'merge' | 'purge' | 'restore': which event a change is
--   meta    a JSON object merged into the history/change_log meta

-- Whether this session is restoring a dump. pg_dump's scripts and pg_restore start every
-- session with `SET row_security = off` and `SET check_function_bodies = false`; an
-- application has no reason to set either, and a role that row-level security applies to cannot
-- write these tables at all with row_security off (it gets an error instead). The rows a
-- restore loads already carry their bookkeeping — revisions, change log, history, statistics
-- and message numbers are restored with them — so the triggers below leave them as they are
-- instead of counting them a second time (docs/operations.md "Backup and restore").
--
-- _restoring, _invoker and _actor are inlined where they are called (0.13.0): every name and
-- operator in them is schema-qualified instead of a `SET search_path`, which Postgres does not
-- inline. Each history row calls them (a store put three times): as functions of their own
-- they cost 1.6, 5 and 10 µs a call, inlined 0.1-0.5 (docs/performance.md "A store put").
CREATE FUNCTION memory._restoring() RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT pg_catalog.current_setting('row_security') OPERATOR(pg_catalog.=) 'off'
       AND pg_catalog.current_setting('check_function_bodies') OPERATOR(pg_catalog.=) 'off'
$$;

-- The role that issued the statement, seen from inside a SECURITY DEFINER function (where
-- current_user is the owner): SET ROLE if one is active, else the session user.
CREATE FUNCTION memory._invoker() RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN pg_catalog.current_setting('role') OPERATOR(pg_catalog.<>) 'none'
                THEN pg_catalog.current_setting('role') ELSE CAST(SESSION_USER AS pg_catalog.text) END
$$;

-- Who made a change, for history rows and consent decisions: the role that issued the
-- statement. Not a hint: an audit trail names who acted, not who a session says acted. A role
-- that serves several people (the gateway's inspector, one per token) adds in parentheses whom
-- it acts for, with memory_ext.on_behalf_of (0.12.0): `memory_mcp (inspector: ops)`. The role
-- comes first and is Postgres's own word, so a session can add to its name but never pass for
-- another role; the addition is cut to 100 characters and kept on one line.
CREATE FUNCTION memory._actor() RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT memory._invoker()
           OPERATOR(pg_catalog.||) COALESCE(' (' OPERATOR(pg_catalog.||) NULLIF(pg_catalog.btrim(pg_catalog.left(
               pg_catalog.regexp_replace(pg_catalog.current_setting('memory_ext.on_behalf_of', true),
                                         '[[:cntrl:]]+', ' ', 'g'), 100)), '') OPERATOR(pg_catalog.||) ')', '')
$$;

CREATE FUNCTION memory._hint_meta() RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE m jsonb;
BEGIN
    m := memory._hint('meta')::jsonb;
    RETURN CASE WHEN jsonb_typeof(m) = 'object' THEN m ELSE '{}'::jsonb END;
EXCEPTION WHEN others THEN
    RETURN '{}'::jsonb;  -- a malformed hint must not fail the user's write
END $$;

-- What a row said goes from every place it was copied to once the row itself is gone for good
-- (a purge, a DELETE; docs/operations.md "Privacy"): the entity's history keeps its events
-- (which, who, when, ids) but not its text, path or title; the change log keeps that the memory
-- changed, not its text; the bookkeeping that names it (embedding retries, consolidation pairs,
-- the consent proposal that made or changed it) forgets it. A soft delete keeps everything: it
-- can be restored. Called by the audit triggers below, as the owner.
CREATE FUNCTION memory._erase_copies(p_user text, p_entity text, p_id text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- An episode_write's kept answer (sql/idempotency.sql) holds the episode's text, and its
    -- file's path is made from it: the text goes with the episode's memory, text and path with
    -- its file (found by the paths the file's history names, before those go).
    IF p_entity IN ('item', 'file') THEN
        UPDATE memory.idempotency_keys k
           SET answer = (k.answer - 'content' - CASE WHEN p_entity = 'file' THEN 'path' ELSE 'content' END)
                        || '{"erased": true}'
         WHERE k.user_id = p_user AND k.op = 'episode_write'
           AND (k.answer ->> 'memory_id' = p_id
                OR p_entity = 'file' AND k.answer ->> 'path' IN (
                    SELECT h.meta ->> 'path' FROM memory.history h
                     WHERE h.user_id = p_user AND h.entity = 'file' AND h.memory_id = p_id));
    END IF;
    UPDATE memory.history
       SET old_ref = NULL,
           -- a LINK's new_ref is the other memory's id, not what either said
           new_ref = CASE WHEN event = 'LINK' THEN new_ref END,
           meta = (meta - 'text' - 'path' - 'title' - 'old_path' - 'value') || '{"erased": true}'
     WHERE user_id = p_user AND entity = p_entity AND memory_id = p_id;
    IF p_entity IN ('item', 'message', 'file') THEN
        DELETE FROM memory.embedding_failures
         WHERE user_id = p_user AND target = p_entity AND row_id = p_id::uuid;
    END IF;
    IF p_entity = 'item' THEN
        UPDATE memory.change_log SET meta = (meta - 'text') || '{"erased": true}'
         WHERE user_id = p_user AND memory_id = p_id AND meta ? 'text';
        DELETE FROM memory.consolidation_fingerprints
         WHERE user_id = p_user AND (id_a = p_id::uuid OR id_b = p_id::uuid);
        DELETE FROM memory.consolidation_seen WHERE user_id = p_user AND id = p_id::uuid;
        UPDATE memory.proposals SET text = '', request = '{}'
         WHERE user_id = p_user AND memory_id = p_id::uuid;
        -- A summary's answer that rested on the memory may repeat it (sql/summaries.sql): the
        -- current answer goes (the worker writes the next from what is left), and so does every
        -- past version's; that the versions were written stays.
        -- (Two statements: Citus refuses now() inside COALESCE or CASE.)
        UPDATE memory.summaries SET stale_since = now()
         WHERE user_id = p_user AND evidence @> ARRAY[p_id::uuid] AND stale_since IS NULL;
        UPDATE memory.summaries
           SET answer = NULL, evidence = array_remove(evidence, p_id::uuid), stale = true, retry_at = NULL
         WHERE user_id = p_user AND evidence @> ARRAY[p_id::uuid];
        UPDATE memory.summary_versions SET answer = NULL, erased = true
         WHERE user_id = p_user AND evidence @> ARRAY[p_id::uuid];
    END IF;
END $$;
REVOKE ALL ON FUNCTION memory._erase_copies(text, text, text) FROM PUBLIC;

-- Increments a thread's revision and appends its change-log row; returns the new revision.
-- `create_thread` upserts the thread (a new item or message may name a thread that does not
-- exist yet); otherwise a missing thread (being deleted in this statement) is left alone.
CREATE FUNCTION memory._bump_revision(p_user text, p_thread text, p_memory_id text, p_event text,
                                      p_meta jsonb, p_create_thread boolean)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE r bigint;
BEGIN
    IF p_create_thread THEN
        -- now() in VALUES, not in DO UPDATE SET: Citus allows only immutable functions there
        -- (docs/citus.md); the same statement on plain Postgres.
        INSERT INTO memory.threads AS t (user_id, thread_id, revision, updated_at)
        VALUES (p_user, p_thread, 1, now())
        ON CONFLICT (user_id, thread_id) DO UPDATE SET revision = t.revision + 1, updated_at = EXCLUDED.updated_at
        RETURNING t.revision INTO r;
    ELSE
        UPDATE memory.threads SET revision = revision + 1, updated_at = now()
        WHERE user_id = p_user AND thread_id = p_thread
        RETURNING revision INTO r;
        IF r IS NULL THEN
            RETURN NULL;
        END IF;
    END IF;
    INSERT INTO memory.change_log (user_id, thread_id, rev, memory_id, event, meta)
    VALUES (p_user, p_thread, r, p_memory_id, p_event, coalesce(p_meta, '{}'::jsonb) || memory._hint_meta());
    RETURN r;
END $$;
REVOKE ALL ON FUNCTION memory._bump_revision(text, text, text, text, jsonb, boolean) FROM PUBLIC;

-------------------------------------------------------------------------------- items

-- What a change-log bullet needs to render later ("+created: [Personal] ... (imp=2)"), as it
-- was at the time of the change. A body parsed at creation and no SET clause, so that it is
-- inlined into the audit trigger's kept expression rather than parsed and planned per row.
CREATE FUNCTION memory._item_meta(i memory.items) RETURNS jsonb
LANGUAGE sql STABLE
RETURN jsonb_build_object('kind', i.kind, 'category', i.category, 'text', left(i.text, 280),
                          'importance', i.importance);

CREATE FUNCTION memory._items_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    reason text := memory._hint('reason');
    cur    memory.items := coalesce(NEW, OLD);  -- NEW is NULL on DELETE, OLD on INSERT
    hist   text;
    change text;
    meta   jsonb;
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        hist := 'ADD';
        change := 'created';
    ELSIF TG_OP = 'DELETE' THEN
        hist := CASE WHEN reason = 'purge' THEN 'PURGE' ELSE 'DELETE' END;
        change := 'deleted';
    ELSIF OLD.state = 'active' AND NEW.state = 'superseded' THEN
        hist := 'SUPERSEDE';
        change := 'superseded';
    ELSIF OLD.state IN ('active', 'superseded') AND NEW.state NOT IN ('active', 'superseded') THEN
        hist := CASE reason WHEN 'ttl' THEN 'TTL' WHEN 'merge' THEN 'MERGE' ELSE 'DELETE' END;
        change := CASE reason WHEN 'merge' THEN 'merged' WHEN 'forget' THEN 'deleted' ELSE 'soft_deleted' END;
    ELSIF OLD.state NOT IN ('active', 'superseded') AND NEW.state IN ('active', 'superseded') THEN
        hist := 'RESTORE';
        change := 'restored';
    ELSIF reason = 'merge' THEN
        hist := 'MERGE';
        change := 'merged';
    ELSE
        hist := 'UPDATE';
        change := 'updated';
    END IF;

    meta := memory._item_meta(cur);
    IF TG_OP = 'UPDATE' AND OLD.state IS DISTINCT FROM NEW.state THEN
        meta := meta || jsonb_build_object('state_from', OLD.state, 'state_to', NEW.state);
    END IF;

    INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
    VALUES (cur.user_id, 'item', cur.id::text, hist,
            CASE WHEN TG_OP <> 'INSERT' THEN OLD.text END,
            CASE WHEN TG_OP <> 'DELETE' THEN NEW.text END,
            memory._actor(),
            meta || jsonb_build_object('reason', reason) || memory._hint_meta());

    -- The thread the item is in now; when it moved, or on DELETE, the thread it was in.
    IF TG_OP <> 'DELETE' AND NEW.thread_id IS NOT NULL THEN
        PERFORM memory._bump_revision(NEW.user_id, NEW.thread_id, NEW.id::text, change, meta, true);
    END IF;
    -- A purge removes what the thread already saw go (~soft_deleted / -deleted): history only.
    IF TG_OP <> 'INSERT' AND OLD.thread_id IS NOT NULL AND reason IS DISTINCT FROM 'purge'
       AND (TG_OP = 'DELETE' OR OLD.thread_id IS DISTINCT FROM NEW.thread_id) THEN
        PERFORM memory._bump_revision(OLD.user_id, OLD.thread_id, OLD.id::text, change, meta, false);
    END IF;
    IF TG_OP = 'DELETE' THEN
        PERFORM memory._erase_copies(OLD.user_id, 'item', OLD.id::text);
    END IF;
    RETURN NULL;
END $$;

-- Keeps updated_at honest for plain UPDATEs too.
CREATE FUNCTION memory._touch_updated_at() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END $$;

-- The columns whose change is a memory event, defined once for both triggers below. Access
-- bookkeeping (last_accessed_at, access_count) and embeddings are not: retrieval and backfill
-- must not bump revisions.
DO $$
DECLARE
    cols text[] := ARRAY['text', 'content', 'kind', 'category', 'tags', 'importance', 'pinned', 'state',
                         'metadata', 'key', 'agent_id', 'run_id', 'actor_id', 'role', 'thread_id', 'happened_at'];
    changed text := format('(%s) IS DISTINCT FROM (%s)',
                           (SELECT string_agg('OLD.' || c, ', ') FROM unnest(cols) c),
                           (SELECT string_agg('NEW.' || c, ', ') FROM unnest(cols) c));
BEGIN
    -- Plain column references, evaluated without calling a function: an access-only update
    -- (every retrieval makes one) runs no trigger function at all. (A BEFORE trigger's WHEN may
    -- not use whole-row NEW on a table with generated columns, hence the list.)
    EXECUTE format('CREATE TRIGGER items_touch BEFORE UPDATE ON memory.items FOR EACH ROW WHEN (%s)
                    EXECUTE FUNCTION memory._touch_updated_at()', changed);
    EXECUTE format('CREATE TRIGGER items_audit_update AFTER UPDATE ON memory.items FOR EACH ROW WHEN (%s)
                    EXECUTE FUNCTION memory._items_audit()', changed);
END $$;
CREATE TRIGGER items_audit_insert AFTER INSERT ON memory.items FOR EACH ROW
EXECUTE FUNCTION memory._items_audit();
CREATE TRIGGER items_audit_delete AFTER DELETE ON memory.items FOR EACH ROW
EXECUTE FUNCTION memory._items_audit();

-- A new relation edge is a LINK event in the history of the memory it starts from.
CREATE FUNCTION memory._relations_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    INSERT INTO memory.history (user_id, entity, memory_id, event, new_ref, actor, meta)
    VALUES (NEW.user_id, 'item', NEW.from_id::text, 'LINK', NEW.to_id::text, memory._actor(),
            jsonb_build_object('relation_type', NEW.relation_type, 'strength', NEW.strength) || memory._hint_meta());
    RETURN NULL;
END $$;
CREATE TRIGGER relations_audit AFTER INSERT ON memory.relations FOR EACH ROW
EXECUTE FUNCTION memory._relations_audit();

-------------------------------------------------------------------------------- blocks

-- Every change to a block bumps its version, whoever makes it.
CREATE FUNCTION memory._blocks_version() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.version := OLD.version + 1;
    NEW.updated_at := now();
    RETURN NEW;
END $$;

CREATE FUNCTION memory._blocks_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    b memory.blocks := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
    VALUES (b.user_id, 'block', b.id::text,
            CASE WHEN TG_OP = 'INSERT' THEN 'ADD' WHEN TG_OP = 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
            CASE WHEN TG_OP <> 'INSERT' THEN OLD.value END,
            CASE WHEN TG_OP <> 'DELETE' THEN NEW.value END,
            memory._actor(),
            jsonb_build_object('agent_id', b.agent_id, 'label', b.label, 'version', b.version)
              || memory._hint_meta());
    IF TG_OP = 'DELETE' THEN
        PERFORM memory._erase_copies(OLD.user_id, 'block', OLD.id::text);
    END IF;
    RETURN NULL;
END $$;

-- What counts as a change of a block (updated_at alone does not), written out in each WHEN
-- rather than as a function of the table's row type: on Citus a trigger runs on a shard, whose
-- rows are of the shard's type, and such a function would not exist for it (docs/citus.md).
CREATE TRIGGER blocks_version BEFORE UPDATE ON memory.blocks FOR EACH ROW
WHEN ((OLD.value, OLD.description, OLD.char_limit, OLD.read_only, OLD.label)
      IS DISTINCT FROM (NEW.value, NEW.description, NEW.char_limit, NEW.read_only, NEW.label))
EXECUTE FUNCTION memory._blocks_version();
CREATE TRIGGER blocks_audit_insert AFTER INSERT ON memory.blocks FOR EACH ROW
EXECUTE FUNCTION memory._blocks_audit();
CREATE TRIGGER blocks_audit_update AFTER UPDATE ON memory.blocks FOR EACH ROW
WHEN ((OLD.value, OLD.description, OLD.char_limit, OLD.read_only, OLD.label)
      IS DISTINCT FROM (NEW.value, NEW.description, NEW.char_limit, NEW.read_only, NEW.label))
EXECUTE FUNCTION memory._blocks_audit();
CREATE TRIGGER blocks_audit_delete AFTER DELETE ON memory.blocks FOR EACH ROW
EXECUTE FUNCTION memory._blocks_audit();

-------------------------------------------------------------------------------- languages

-- A row's language when its writer gave none (docs/api.md "Languages"): detected from its text
-- when detection is sure (memory.detect_language), else the tenant's default
-- (memory.settings.language), else the language it usually writes in (memory._usual_language),
-- else NULL. An update that changes the text and not the language
-- detects again, keeping the old language when detection is not sure. TG_ARGV[0] names the
-- text column ('text' for memories, 'content' for messages and files). A restore keeps what
-- was dumped.
CREATE FUNCTION memory._set_language() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    body text;
BEGIN
    IF memory._restoring() THEN
        RETURN NEW;
    END IF;
    IF TG_ARGV[0] = 'text' THEN
        body := NEW.text;
        IF TG_OP = 'UPDATE' AND (NEW.text IS NOT DISTINCT FROM OLD.text OR NEW.language IS DISTINCT FROM OLD.language) THEN
            RETURN NEW;
        END IF;
    ELSE
        body := NEW.content;
        IF TG_OP = 'UPDATE' AND (NEW.content IS NOT DISTINCT FROM OLD.content OR NEW.language IS DISTINCT FROM OLD.language) THEN
            RETURN NEW;
        END IF;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        NEW.language := coalesce(memory.detect_language(body), OLD.language);
    ELSIF NEW.language IS NULL THEN
        NEW.language := memory.detect_language(body);
        -- On Citus this runs on a shard, where reading another distributed table is refused:
        -- there memory_write reads the default itself (src/ops/write.rs `language_of`), and a
        -- message or file takes only what detection says.
        IF NEW.language IS NULL AND NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
            NEW.language := coalesce((SELECT s.language FROM memory.settings s WHERE s.user_id = NEW.user_id),
                                     memory._usual_language(NEW.user_id));
        END IF;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER items_language BEFORE INSERT OR UPDATE OF text, language ON memory.items FOR EACH ROW
EXECUTE FUNCTION memory._set_language('text');
CREATE TRIGGER messages_language BEFORE INSERT OR UPDATE OF content, language ON memory.messages FOR EACH ROW
EXECUTE FUNCTION memory._set_language('content');
-- Files: at insert only. A BEFORE UPDATE trigger would make every update recompute the
-- generated full-text column, and a file's are mostly access bookkeeping (memory_file_read's
-- last_accessed_at); its writes set the language themselves (sql/queries/files_write.sql,
-- files_edit.sql).
CREATE TRIGGER files_language BEFORE INSERT ON memory.files FOR EACH ROW
EXECUTE FUNCTION memory._set_language('content');

-------------------------------------------------------------------------------- messages

-- Numbers a new message within its thread (creating the thread on first use) and counts its
-- tokens when the writer did not. Runs as owner because it writes threads.last_seq.
CREATE FUNCTION memory._messages_before_insert() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF memory._restoring() THEN
        RETURN NEW;  -- numbered already, and the thread's last_seq is restored with it
    END IF;
    INSERT INTO memory.threads AS t (user_id, thread_id, last_seq, updated_at)
    VALUES (NEW.user_id, NEW.thread_id, coalesce(NEW.seq, 1), now())
    ON CONFLICT (user_id, thread_id)
        DO UPDATE SET last_seq = greatest(t.last_seq + 1, coalesce(EXCLUDED.last_seq, 0)),
                      updated_at = EXCLUDED.updated_at  -- not now() here: see _bump_revision
    RETURNING t.last_seq INTO NEW.seq;
    IF NEW.token_count IS NULL THEN
        NEW.token_count := memory.message_token_count(NEW.role, NEW.content, NEW.name, NEW.tool_calls);
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION memory._messages_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.thread_id IS DISTINCT FROM OLD.thread_id OR NEW.seq IS DISTINCT FROM OLD.seq THEN
        RAISE EXCEPTION 'a message cannot move to another thread or position'
            USING ERRCODE = '22023', HINT = 'append a new message instead';
    END IF;
    IF (NEW.role, NEW.content, NEW.name, NEW.tool_calls) IS DISTINCT FROM (OLD.role, OLD.content, OLD.name, OLD.tool_calls)
       AND NEW.token_count IS NOT DISTINCT FROM OLD.token_count THEN
        NEW.token_count := memory.message_token_count(NEW.role, NEW.content, NEW.name, NEW.tool_calls);
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION memory._messages_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    m memory.messages := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    PERFORM memory._bump_revision(m.user_id, m.thread_id, m.id::text,
        CASE WHEN TG_OP = 'INSERT' THEN 'message_added' WHEN TG_OP = 'UPDATE' THEN 'message_updated' ELSE 'message_deleted' END,
        jsonb_build_object('seq', m.seq, 'role', m.role),
        false);
    -- Edits and deletions of recall memory are history events too (docs/design.md "History"); a new message
    -- is not (the change log has it, and recall keeps every message anyway).
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
        VALUES (m.user_id, 'message', m.id::text, CASE WHEN TG_OP = 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
                left(OLD.content, 280), CASE WHEN TG_OP = 'UPDATE' THEN left(NEW.content, 280) END,
                memory._actor(),
                jsonb_build_object('thread_id', m.thread_id, 'seq', m.seq, 'role', m.role) || memory._hint_meta());
    END IF;
    IF TG_OP = 'DELETE' THEN
        PERFORM memory._erase_copies(OLD.user_id, 'message', OLD.id::text);
    END IF;
    RETURN NULL;
END $$;

-- Refuses, before anything else happens, a message that row-level security will refuse.
-- The policy's check runs only after the BEFORE triggers, and messages_before_insert (SECURITY
-- DEFINER) upserts the thread row: for another tenant's thread that took the thread's lock
-- first (a tenant inserting a huge message into another tenant's thread held that thread for
-- seconds). This trigger runs as the writer and fires first (triggers fire in name order).
-- A space the writer holds write on is admitted as the policy space_write admits it (0.13.0).
CREATE FUNCTION memory._messages_admit() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF row_security_active('memory.messages') AND NEW.user_id IS DISTINCT FROM memory.current_tenant()
       AND NOT memory.space_writes(NEW.user_id, false, NULL) THEN
        RAISE EXCEPTION 'new row violates row-level security policy for table "messages"'
            USING ERRCODE = '42501', HINT = 'a session writes only its own tenant''s messages and those of the spaces it holds write on';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER messages_admit BEFORE INSERT ON memory.messages FOR EACH ROW
EXECUTE FUNCTION memory._messages_admit();

CREATE TRIGGER messages_before_insert BEFORE INSERT ON memory.messages FOR EACH ROW
EXECUTE FUNCTION memory._messages_before_insert();
CREATE TRIGGER messages_before_update BEFORE UPDATE ON memory.messages FOR EACH ROW
EXECUTE FUNCTION memory._messages_before_update();
CREATE TRIGGER messages_audit_insert AFTER INSERT ON memory.messages FOR EACH ROW
EXECUTE FUNCTION memory._messages_audit();
CREATE TRIGGER messages_audit_update AFTER UPDATE ON memory.messages FOR EACH ROW
-- Not in_context: compaction moving 100 messages out of the context window changes no memory,
-- and must not add 100 revisions (its summary message is the one change it records).
WHEN ((OLD.role, OLD.content, OLD.tool_calls, OLD.tool_call_id, OLD.name, OLD.is_summary)
      IS DISTINCT FROM (NEW.role, NEW.content, NEW.tool_calls, NEW.tool_call_id, NEW.name, NEW.is_summary))
EXECUTE FUNCTION memory._messages_audit();
CREATE TRIGGER messages_audit_delete AFTER DELETE ON memory.messages FOR EACH ROW
EXECUTE FUNCTION memory._messages_audit();

-------------------------------------------------------------------------------- memory files

-- Every change to a memory file is a history event (entity 'file'), as for memories and blocks,
-- so that memory_history(<file id>) and memory_export tell a file's whole story. Reads
-- (last_accessed_at) and embeddings are not changes. A file may hold megabytes: history keeps
-- its first 280 characters before and after, its path, title and length, not copies of it.
CREATE FUNCTION memory._files_audit() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    f memory.files := coalesce(NEW, OLD);
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;
    END IF;
    INSERT INTO memory.history (user_id, entity, memory_id, event, old_ref, new_ref, actor, meta)
    VALUES (f.user_id, 'file', f.id::text,
            CASE WHEN TG_OP = 'INSERT' THEN 'ADD' WHEN TG_OP = 'UPDATE' THEN 'UPDATE' ELSE 'DELETE' END,
            CASE WHEN TG_OP <> 'INSERT' THEN left(OLD.content, 280) END,
            CASE WHEN TG_OP <> 'DELETE' THEN left(NEW.content, 280) END,
            memory._actor(),
            jsonb_build_object('path', f.path, 'title', f.title, 'chars', char_length(f.content))
              || CASE WHEN TG_OP = 'UPDATE' AND OLD.path <> NEW.path
                      THEN jsonb_build_object('old_path', OLD.path) ELSE '{}'::jsonb END
              || memory._hint_meta());
    IF TG_OP = 'DELETE' THEN
        PERFORM memory._erase_copies(OLD.user_id, 'file', OLD.id::text);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER files_audit_insert AFTER INSERT ON memory.files FOR EACH ROW
EXECUTE FUNCTION memory._files_audit();
CREATE TRIGGER files_audit_update AFTER UPDATE ON memory.files FOR EACH ROW
WHEN ((OLD.path, OLD.title, OLD.content, OLD.tags, OLD.metadata) IS DISTINCT FROM (NEW.path, NEW.title, NEW.content, NEW.tags, NEW.metadata))
EXECUTE FUNCTION memory._files_audit();
CREATE TRIGGER files_audit_delete AFTER DELETE ON memory.files FOR EACH ROW
EXECUTE FUNCTION memory._files_audit();

-------------------------------------------------------------------------------- threads

-- A thread cannot be deleted out from under its data: deleting it would cascade to its messages
-- and change log with no history row, and leave its memories pointing at a thread that no
-- longer exists. Its messages and memories go first (each of those deletions is audited); an
-- empty thread can go. SECURITY DEFINER: the check must see every row of the thread.
CREATE FUNCTION memory._threads_guard() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM memory.messages m WHERE m.user_id = OLD.user_id AND m.thread_id = OLD.thread_id)
       OR EXISTS (SELECT 1 FROM memory.items i WHERE i.user_id = OLD.user_id AND i.thread_id = OLD.thread_id) THEN
        RAISE EXCEPTION 'thread "%" still has messages or memories', OLD.thread_id
            USING ERRCODE = '23503', HINT = 'delete its messages and memories first';
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER threads_guard BEFORE DELETE ON memory.threads FOR EACH ROW
EXECUTE FUNCTION memory._threads_guard();

-------------------------------------------------------------------------------- housekeeping

CREATE TRIGGER agents_touch BEFORE UPDATE ON memory.agents FOR EACH ROW
EXECUTE FUNCTION memory._touch_updated_at();
CREATE TRIGGER checkpoints_touch BEFORE UPDATE ON memory.checkpoints FOR EACH ROW
EXECUTE FUNCTION memory._touch_updated_at();
