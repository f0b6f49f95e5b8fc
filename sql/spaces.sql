-- Spaces and grants (docs/api.md "Spaces"): owners of memories other than one user, and who
-- may read or write them. A space's rows carry `space:<name>` in user_id, like a tenant's id
-- (crates/memory_core/src/spaces.rs says why); sql/security.sql's row policies admit a member
-- through memory.space_reads / memory.space_writes (src/pg/spaces.rs).

-- A space: its name (unique in the database, as a role's is) and a stable id.
CREATE TABLE memory.spaces (
    name       text        NOT NULL PRIMARY KEY,
    id         uuid        NOT NULL DEFAULT gen_random_uuid() UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- Read and written through memory_space_create and memory_grants only (as the owner): the
-- names of other tenants' spaces are theirs.
REVOKE ALL ON memory.spaces FROM PUBLIC;

-- Who may use a space: user_id is the member (the grantee), so that memory_erase_tenant of a
-- member removes its grants with its rows (sql/erase.sql finds tables by that column) and the
-- tenant policy lets a member read its own grants. Written as the owner by memory_grant and
-- memory_revoke, which check that the caller is the space's admin (src/ops/spaces.rs).
CREATE TABLE memory.grants (
    space      text        NOT NULL REFERENCES memory.spaces (name) ON DELETE CASCADE,
    user_id    text        NOT NULL,
    access     text        NOT NULL CHECK (access IN ('read', 'write', 'admin')),
    agent_id   text,
    categories text[],
    granted_by text        NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, space)
);
CREATE INDEX grants_space_idx ON memory.grants (space);

-- History names who wrote into a space. In role mode the actor (the role) is the member
-- already; in setting mode the role is the application's, shared by all its users, so the
-- member (memory_ext.user_id) is added after it. A BEFORE trigger on history, so that every
-- trigger that writes history (items, blocks, files, messages, the store) names the member
-- without each knowing about spaces.
CREATE FUNCTION memory._history_writer() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    me text := CASE WHEN current_setting('memory_ext.tenant_source', true) = 'role' THEN NULL
                    ELSE memory.current_tenant() END;
BEGIN
    IF NEW.user_id LIKE 'space:%' AND me IS NOT NULL AND me IS DISTINCT FROM NEW.user_id THEN
        NEW.actor := coalesce(NEW.actor, '') || ' [member: ' || me || ']';
    END IF;
    RETURN NEW;
END $$;
-- Made by a function, as the change feed's triggers are (sql/changes.sql
-- `memory._change_triggers`): on a Citus cluster upgraded from 0.12.0 the coordinator runs the
-- upgrade before the workers have the function, so memory_citus_distribute() makes it there
-- afterwards (src/ops/citus.rs); on one node the upgrade calls it. Does nothing where it is.
CREATE FUNCTION memory._space_triggers() RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
    IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'memory.history'::regclass AND tgname = 'history_writer') THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        -- As memory_citus_distribute sets it: triggers on distributed tables (docs/citus.md).
        PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    END IF;
    -- Only a space's rows: a tenant's own history rows do not call the function (~20 µs a
    -- write, docs/performance.md "A store put").
    EXECUTE $s$CREATE TRIGGER history_writer BEFORE INSERT ON memory.history
               FOR EACH ROW WHEN (NEW.user_id LIKE 'space:%')
               EXECUTE FUNCTION memory._history_writer()$s$;
    RETURN true;
END $fn$;
REVOKE ALL ON FUNCTION memory._space_triggers() FROM PUBLIC;
SELECT memory._space_triggers();

-- Shared blocks (block_attach, src/ops/blocks.rs): a block attached to an agent other than its
-- own, the caller's (another of its agents) or a granted space's. The block stays one row with
-- one version line; each attached agent's compile_core_blocks reads it where it lives, and an
-- edit through any of them changes it there. user_id is the attaching agent's tenant; owner
-- the block's. No foreign keys, to the block or to the agent: on Citus the block may live on
-- another shard, and a Citus cluster upgraded from 0.12.0 makes this table while memory.agents
-- is already distributed (a local table cannot reference it). A block or an agent deleted
-- leaves an attachment that shows nothing; erasing the tenant removes it.
CREATE TABLE memory.block_attachments (
    user_id     text        NOT NULL,
    agent_id    text        NOT NULL,
    owner       text        NOT NULL,
    block_id    uuid        NOT NULL,
    read_only   boolean     NOT NULL DEFAULT false,
    attached_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, agent_id, block_id)
);
