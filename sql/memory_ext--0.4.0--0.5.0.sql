-- memory_ext 0.4.0 -> 0.5.0 (ALTER EXTENSION memory_ext UPDATE TO '0.5.0')
--
-- What changes: supersede (docs/api.md "Supersede"). memory_write's "supersedes" ends an older
-- memory where its successor happens and links them: two new nullable columns on memory.items
-- (valid_until, superseded_by; NULL for every existing memory), a new state 'superseded' (kept
-- out of recall, in history and export), a history event SUPERSEDE and a change-log event
-- 'superseded' (the audit trigger function is replaced to write them). memory_query and
-- memory_search read "as_of" and "include_superseded" (no SQL signature changes);
-- memory_forget takes a superseded memory too and memory_restore returns it superseded; recall
-- leaves procedural memories out unless asked for ("kinds") and memory_context always lists the
-- categories in context 'all' (all in the library: no SQL change). memory_prompt takes the tool
-- set it describes (a new argument, tools text[] DEFAULT NULL: the function is replaced). No stored row is rewritten; the new checks are validated against the
-- existing rows.
-- The fresh-install script of 0.5.0 and this upgrade give the same schema: tests/upgrade checks
-- it, catalog by catalog.

\echo Use "ALTER EXTENSION memory_ext UPDATE TO '0.5.0'" to load this file. \quit

-------------------------------------------------------------------------------- supersede
ALTER TABLE memory.items ADD COLUMN valid_until timestamptz, ADD COLUMN superseded_by uuid;
ALTER TABLE memory.items DROP CONSTRAINT items_state_check,
    ADD CONSTRAINT items_state_check CHECK (state IN ('active', 'soft_deleted', 'purged', 'superseded')),
    ADD CONSTRAINT items_superseded_has_successor CHECK (state <> 'superseded' OR (superseded_by IS NOT NULL AND valid_until IS NOT NULL));
ALTER TABLE memory.history DROP CONSTRAINT history_event_check,
    ADD CONSTRAINT history_event_check CHECK (event IN ('ADD', 'UPDATE', 'DELETE', 'MERGE', 'LINK', 'TTL', 'RESTORE', 'PURGE', 'SUPERSEDE'));
ALTER TABLE memory.change_log DROP CONSTRAINT change_log_event_check,
    ADD CONSTRAINT change_log_event_check CHECK (event IN ('created', 'updated', 'merged', 'deleted', 'soft_deleted',
                                                    'restored', 'message_added', 'message_updated', 'message_deleted',
                                                    'superseded'));

-- The audit trigger's function, as in sql/triggers.sql (a SUPERSEDE branch).
CREATE OR REPLACE FUNCTION memory._items_audit() RETURNS trigger
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
    RETURN NULL;
END $$;

-------------------------------------------------------------------------------- tools
-- memory_prompt takes the tool set it describes (as memory_tools does): the function is replaced.
DROP FUNCTION memory_prompt(text, text[]);
CREATE  FUNCTION "memory_prompt"(
	"agent_id" TEXT, /* Option < & str > */
	"parts" TEXT[] DEFAULT NULL, /* :: std :: option :: Option < Vec < Option < String > > > */
	"tools" TEXT[] DEFAULT NULL /* :: std :: option :: Option < Vec < Option < String > > > */
) RETURNS TEXT /* String */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'memory_prompt_wrapper';
