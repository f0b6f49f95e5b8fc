-- memory_ext data model (bootstrap: runs before any function is created).
--
-- Every table is in schema `memory`, and every table's primary key and btree indexes lead
-- with `user_id text NOT NULL`: the tenant is the shard key (e.g. Citus
-- `create_distributed_table('memory.items', 'user_id')`) and every lookup is tenant-first.
-- Two kinds of index cannot lead with it: HNSW (pgvector indexes one column) and GIN over
-- tsvector (that needs btree_gin); on a sharded cluster both are local to each shard.
--
-- Ids are caller-chosen text (agent_id, thread_id) or uuids we generate (items, messages).
-- Constraints reject nonsense at the table level too, so a plain INSERT from an application
-- cannot store what our functions would refuse.

CREATE SCHEMA IF NOT EXISTS memory;
COMMENT ON SCHEMA memory IS 'memory_ext: tables, views and internal helpers (API functions live in the extension schema)';

-- The tenant as a lexeme, added to every full-text vector: a GIN search for `terms & tenant`
-- then intersects posting lists inside the index instead of fetching every tenant's matches
-- and filtering them by user_id (GIN cannot lead with user_id without btree_gin).
CREATE FUNCTION memory.tenant_lexeme(user_id text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 't' || md5(user_id) $$;
-- A standard SQL body (BEGIN ATOMIC), not a string: Postgres then records that it calls
-- tenant_lexeme, and pg_dump --binary-upgrade (pg_upgrade) creates the two in that order before
-- the tables whose generated columns use it. With a string body pg_upgrade from 15 to 17 failed
-- ("function memory.tenant_lexeme(text) does not exist"; tests/upgrade/pg_upgrade.sh).
CREATE FUNCTION memory.tenant_tsvector(user_id text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT memory.tenant_lexeme(user_id)::tsvector;
END;

-- Languages (docs/api.md "Languages", crates/memory_core/src/language.rs): a text's language
-- (an ISO 639-1 code, or NULL when unknown) decides how keyword search reads it.
-- The Snowball configuration of a language; 'simple' (lower case, no stemming, no stop words)
-- for a language Postgres has none for; 'english' for no language, what every text got before
-- 0.13.0. Only configurations every supported PostgreSQL ships (15, 17, 18). A searched CASE,
-- not `CASE language WHEN ...`: Citus deparses the inlined simple form into "text = boolean".
CREATE FUNCTION memory.ts_config(language text) RETURNS regconfig
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT CASE WHEN language IS NULL THEN 'english'::regconfig
        WHEN language = 'ar' THEN 'arabic'::regconfig
        WHEN language = 'ca' THEN 'catalan'::regconfig
        WHEN language = 'da' THEN 'danish'::regconfig
        WHEN language = 'de' THEN 'german'::regconfig
        WHEN language = 'el' THEN 'greek'::regconfig
        WHEN language = 'en' THEN 'english'::regconfig
        WHEN language = 'es' THEN 'spanish'::regconfig
        WHEN language = 'eu' THEN 'basque'::regconfig
        WHEN language = 'fi' THEN 'finnish'::regconfig
        WHEN language = 'fr' THEN 'french'::regconfig
        WHEN language = 'ga' THEN 'irish'::regconfig
        WHEN language = 'hi' THEN 'hindi'::regconfig
        WHEN language = 'hu' THEN 'hungarian'::regconfig
        WHEN language = 'hy' THEN 'armenian'::regconfig
        WHEN language = 'id' THEN 'indonesian'::regconfig
        WHEN language = 'it' THEN 'italian'::regconfig
        WHEN language = 'lt' THEN 'lithuanian'::regconfig
        WHEN language = 'nb' THEN 'norwegian'::regconfig
        WHEN language = 'ne' THEN 'nepali'::regconfig
        WHEN language = 'nl' THEN 'dutch'::regconfig
        WHEN language = 'nn' THEN 'norwegian'::regconfig
        WHEN language = 'no' THEN 'norwegian'::regconfig
        WHEN language = 'pt' THEN 'portuguese'::regconfig
        WHEN language = 'ro' THEN 'romanian'::regconfig
        WHEN language = 'ru' THEN 'russian'::regconfig
        WHEN language = 'sr' THEN 'serbian'::regconfig
        WHEN language = 'sv' THEN 'swedish'::regconfig
        WHEN language = 'ta' THEN 'tamil'::regconfig
        WHEN language = 'tr' THEN 'turkish'::regconfig
        ELSE 'simple'::regconfig END;
END;
-- The text as the configurations should see it: runs of scripts written without spaces
-- (Chinese, Japanese, Thai, ...) as overlapping character bigrams, accents folded for the
-- languages that want it (memory_core::language::prepare). C, declared here because the
-- generated columns below need it before pgrx creates the extension's functions.
CREATE FUNCTION memory.text_prepare(language text, body text) RETURNS text
IMMUTABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'text_prepare_wrapper';
-- A text's lexemes in its language: every full-text column and every query goes through it
-- (a query in its own language, src/pg/fulltext.rs). BEGIN ATOMIC for the reason given at
-- memory.tenant_tsvector.
CREATE FUNCTION memory.text_tsvector(language text, body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT to_tsvector(memory.ts_config(language), memory.text_prepare(language, body));
END;
-- The language of a text written without one: detected when detection is sure, else NULL
-- (the tenant's default then applies: memory.settings.language).
CREATE FUNCTION memory.detect_language(body text) RETURNS text
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'detect_language_wrapper';

-- memory.items is hash-partitioned by user_id into this many partitions (see memory.items).
CREATE FUNCTION memory._item_partitions() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 16 $$;

-- Gives each partition's copy of a partitioned index its parent's name plus the partition's
-- suffix (items_tsv_idx -> items_tsv_idx_p03), so plans read like the schema.
CREATE FUNCTION memory._name_partition_indexes(VARIADIC parents text[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p text;
    r record;
BEGIN
    FOREACH p IN ARRAY parents LOOP
        FOR r IN SELECT t.relid::regclass AS child, ci.relname AS name,
                        split_part(p, '.', 2) || '_' || substring(c.relname FROM '_(p[0-9]+)$') AS wanted
                 FROM pg_partition_tree(p::regclass) t
                 JOIN pg_index i ON i.indexrelid = t.relid
                 JOIN pg_class c ON c.oid = i.indrelid
                 JOIN pg_class ci ON ci.oid = i.indexrelid
                 WHERE t.level = 1 LOOP
            IF r.name <> r.wanted THEN
                EXECUTE format('ALTER INDEX %s RENAME TO %I', r.child, r.wanted);
            END IF;
        END LOOP;
    END LOOP;
END $$;
REVOKE ALL ON FUNCTION memory._name_partition_indexes(text[]) FROM PUBLIC;

-- Agents: one per (user, agent_id). An agent serves exactly one user.
CREATE TABLE memory.agents (
    user_id     text        NOT NULL CHECK (user_id <> ''),
    agent_id    text        NOT NULL CHECK (agent_id <> ''),
    metadata    jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    -- The tools it may use at all (memory_tool_allowlist); NULL: every tool.
    tools       text[],
    -- The directories its file tools may write (memory_file_allowlist), each ending in '/';
    -- NULL: none.
    file_paths  text[],
    PRIMARY KEY (user_id, agent_id)
);

-- Core memory blocks (docs/design.md "Core memory blocks"): always in the prompt, edited by the agent.
CREATE TABLE memory.blocks (
    user_id     text        NOT NULL,
    agent_id    text        NOT NULL,
    label       text        NOT NULL CHECK (label ~ '^[A-Za-z_][A-Za-z0-9_-]{0,99}$'),
    id          uuid        NOT NULL DEFAULT gen_random_uuid(),
    description text,
    value       text        NOT NULL DEFAULT '',
    char_limit  integer     NOT NULL DEFAULT 20000 CHECK (char_limit BETWEEN 1 AND 1000000),
    read_only   boolean     NOT NULL DEFAULT false,
    version     integer     NOT NULL DEFAULT 1 CHECK (version >= 1),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, agent_id, label),
    UNIQUE (user_id, id),
    FOREIGN KEY (user_id, agent_id) REFERENCES memory.agents ON DELETE CASCADE,
    CONSTRAINT blocks_value_within_char_limit CHECK (char_length(value) <= char_limit)
);

-- Threads: a conversation. `revision` counts every change that touched the thread (messages,
-- memories); the triggers in triggers.sql own it. `reported_rev` is the revision the last
-- delta header told this thread about; `last_seq` numbers its messages.
CREATE TABLE memory.threads (
    user_id      text        NOT NULL CHECK (user_id <> ''),
    thread_id    text        NOT NULL CHECK (thread_id <> ''),
    agent_id     text,
    revision     bigint      NOT NULL DEFAULT 0 CHECK (revision >= 0),
    reported_rev bigint      NOT NULL DEFAULT 0 CHECK (reported_rev >= 0),
    last_seq     bigint      NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
    metadata     jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, thread_id)
);

-- Recall memory (docs/design.md "Recall and archival memory"): every message, kept forever, searchable. `in_context` is
-- false once compaction has folded the message into a summary. `token_count` is counted once,
-- at write time (a trigger fills it for plain INSERTs).
CREATE TABLE memory.messages (
    user_id         text        NOT NULL,
    id              uuid        NOT NULL DEFAULT gen_random_uuid(),
    thread_id       text        NOT NULL,
    seq             bigint      NOT NULL CHECK (seq >= 1),
    role            text        NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         text        NOT NULL DEFAULT '',
    tool_calls      jsonb       CHECK (tool_calls IS NULL OR jsonb_typeof(tool_calls) = 'array'),
    tool_call_id    text,
    name            text,
    token_count     integer     NOT NULL CHECK (token_count >= 0),
    in_context      boolean     NOT NULL DEFAULT true,
    is_summary      boolean     NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    embedding       vector,
    embedding_model text,
    -- Full-text over the first 100,000 characters: tsvector is capped at 1 MB, and a huge tool
    -- output must not make the whole message unstorable.
    -- The content's language (ISO 639-1; NULL: unknown), set at write (sql/triggers.sql
    -- memory._set_language): it decides how keyword search reads the text.
    language        text        CHECK (language ~ '^[a-z]{2}$'),
    tsv             tsvector    GENERATED ALWAYS AS (memory.text_tsvector(language, left(content, 100000))
                                                     || memory.tenant_tsvector(user_id)) STORED,
    -- The Responses-API item this message was added as (session_add_items), kept verbatim.
    item            jsonb,
    -- The caller's own fields (message_append's metadata; imported history keeps its source's).
    metadata        jsonb       CHECK (metadata IS NULL OR jsonb_typeof(metadata) = 'object'),
    -- Kept in the context by the application (message_pin, 0.12.0): compaction
    -- never folds it and context_messages' caps always keep it.
    pinned          boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (user_id, id),
    UNIQUE (user_id, thread_id, seq),
    FOREIGN KEY (user_id, thread_id) REFERENCES memory.threads ON DELETE CASCADE,
    CHECK (embedding IS NULL OR embedding_model IS NOT NULL)
);
CREATE INDEX messages_context_idx ON memory.messages (user_id, thread_id, seq) WHERE in_context;
CREATE INDEX messages_created_idx ON memory.messages (user_id, thread_id, created_at);
CREATE INDEX messages_tsv_idx ON memory.messages USING gin (tsv);
-- Compaction summaries an application wrote without the model, for the worker's refine job
-- (sql/queries/refine_due.sql; 0.13.0).
CREATE INDEX messages_refine_idx ON memory.messages (created_at) WHERE metadata -> 'summary' ->> 'pending' = 'llm';

-- Memories (docs/api.md "Memories"): semantic, episodic, procedural, insight, archival and detail
-- items in one table. `text` is the Layer-1 line, `content` the optional Layer-2 detail.
-- `content_hash` is over the normalised, lower-cased text: the exact-duplicate check.
--
-- # Why hash partitions by user_id
-- Vector search is per tenant, but pgvector's HNSW graph is per index: with one index over every
-- tenant, a search for one tenant walks past the others' rows (at 100 tenants, 564 of 569 rows
-- visited belonged to someone else: 5.7 ms for 5 neighbours, paid by every write's dedupe check
-- and every query). Sixteen partitions by hash(user_id), each with its own indexes, make a
-- tenant 16 times denser in the graph it searches. Every statement names user_id, so the planner
-- prunes to one partition. Partitions get no privileges of their own: ordinary roles reach
-- memories only through memory.items and its row-level security.
CREATE TABLE memory.items (
    user_id          text        NOT NULL CHECK (user_id <> ''),
    id               uuid        NOT NULL DEFAULT gen_random_uuid(),
    kind             text        NOT NULL DEFAULT 'semantic'
                     CHECK (kind IN ('semantic', 'episodic', 'procedural', 'insight', 'archival', 'detail')),
    category         text        CHECK (category <> ''),
    text             text        NOT NULL CHECK (btrim(text) <> ''),
    content          text,
    key              text        CHECK (key <> ''),
    tags             text[]      NOT NULL DEFAULT '{}',
    importance       smallint    NOT NULL DEFAULT 2 CHECK (importance BETWEEN 1 AND 5),
    pinned           boolean     NOT NULL DEFAULT false,
    state            text        NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'soft_deleted', 'purged', 'superseded')),
    purge_at         timestamptz,
    last_accessed_at timestamptz NOT NULL DEFAULT now(),
    access_count     bigint      NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    content_hash     text        GENERATED ALWAYS AS (md5(lower(regexp_replace(btrim(text), '\s+', ' ', 'g')))) STORED,
    metadata         jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    agent_id         text,
    run_id           text,
    actor_id         text,
    role             text        CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    thread_id        text,
    happened_at      timestamptz NOT NULL DEFAULT now(),
    embedding        vector,
    embedding_model  text,
    -- The text's language (0.13.0; as memory.messages.language).
    language         text        CHECK (language ~ '^[a-z]{2}$'),
    tsv              tsvector    GENERATED ALWAYS AS (
                         setweight(memory.text_tsvector(language, left(text, 100000)), 'A') ||
                         setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'B') ||
                         memory.tenant_tsvector(user_id)) STORED,
    -- clock_timestamp, not now(): memories written in one transaction (memory_write_batch) must
    -- still be ordered, since a thread's memories are chained in creation order.
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- Supersede (0.5.0, docs/api.md "Supersede"): a memory replaced by a newer one ends where
    -- its successor happens and links to it; state 'superseded' keeps it out of recall, not
    -- out of history, export or `as_of` queries.
    valid_until      timestamptz,
    superseded_by    uuid,
    PRIMARY KEY (user_id, id),
    CONSTRAINT items_soft_deleted_has_purge_at CHECK (state <> 'soft_deleted' OR purge_at IS NOT NULL),
    CONSTRAINT items_superseded_has_successor CHECK (state <> 'superseded' OR (superseded_by IS NOT NULL AND valid_until IS NOT NULL)),
    CHECK (embedding IS NULL OR embedding_model IS NOT NULL)
) PARTITION BY HASH (user_id);
DO $$
BEGIN
    FOR n IN 0..memory._item_partitions() - 1 LOOP
        -- fillfactor 70: a row is ~2 KB (the vector alone 1.5 KB), so only a page with that much
        -- free room can keep a retrieval's access bookkeeping update HOT. A non-HOT update
        -- re-inserts the row into every index, HNSW included (measured at 100k: 4.8 ms for the
        -- 5 rows a top-5 query touches, 0.5 ms HOT).
        EXECUTE format('CREATE TABLE memory.%I PARTITION OF memory.items FOR VALUES WITH (MODULUS %s, REMAINDER %s) WITH (fillfactor = 70)',
                       'items_p' || lpad(n::text, 2, '0'), memory._item_partitions(), n);
    END LOOP;
END $$;
CREATE UNIQUE INDEX items_key_idx ON memory.items (user_id, key) WHERE key IS NOT NULL;
CREATE INDEX items_hash_idx ON memory.items (user_id, content_hash) WHERE state = 'active';
CREATE INDEX items_thread_idx ON memory.items (user_id, thread_id, created_at) WHERE thread_id IS NOT NULL;
-- A thread-less memory's predecessor (sql/queries/write_previous_unthreaded.sql), 0.3.0.
CREATE INDEX items_unthreaded_idx ON memory.items (user_id, created_at) WHERE thread_id IS NULL;
-- No index on last_accessed_at: every retrieval updates it, and an indexed column would make
-- those updates non-HOT (see the fillfactor above). The TTL sweep reads a partition at a time.
CREATE INDEX items_purge_idx ON memory.items (user_id, purge_at) WHERE state = 'soft_deleted';
CREATE INDEX items_updated_idx ON memory.items (user_id, updated_at);
CREATE INDEX items_tsv_idx ON memory.items USING gin (tsv);
-- Tag filters (memory_query's `filters.tags`, the archival_search tool): a rare tag in a large
-- tenant is found through this index instead of an HNSW walk past every other row.
CREATE INDEX items_tags_idx ON memory.items USING gin (tags) WHERE state = 'active';
-- What a memory replaced (0.12.0): the supersede chain read backwards, as the inspector's memory
-- page shows it (crates/memory_gateway/src/inspect/sql/memory_page.sql), by index instead of
-- reading all of a tenant's memories (1.3 s at 100,000). Partial: only replaced memories have
-- a successor.
CREATE INDEX items_superseded_by_idx ON memory.items (user_id, superseded_by) WHERE superseded_by IS NOT NULL;
SELECT memory._name_partition_indexes('memory.items_key_idx', 'memory.items_hash_idx', 'memory.items_thread_idx',
                                      'memory.items_purge_idx',
                                      'memory.items_updated_idx', 'memory.items_tsv_idx', 'memory.items_tags_idx',
                                      'memory.items_superseded_by_idx', 'memory.items_pkey');

-- Access waiting to be counted (0.13.0; docs/operations.md "Access bookkeeping"): where the
-- background worker serves the database, a retrieval queues the ids of the memories it
-- returned here (sql/queries/access_queue.sql), one row per read, and the worker writes them
-- to memory.items (last_accessed_at, access_count: sql/queries/access_fold.sql) at each look
-- for work. Writing them at read time made new versions of the rows read, and of their index
-- entries when a page was full (~1 ms of a read at 100k memories, the dearest statement of a
-- read). Ids and times only, never text; a tenant's erasure takes its rows with the rest.
CREATE TABLE memory.access_queue (
    user_id text        NOT NULL,
    ids     uuid[]      NOT NULL,
    read_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX access_queue_user_idx ON memory.access_queue (user_id);

-- Relations (docs/design.md "Relations"): lightweight edges between memories, one per (from, to, type).
CREATE TABLE memory.relations (
    user_id       text        NOT NULL,
    id            uuid        NOT NULL DEFAULT gen_random_uuid(),
    from_id       uuid        NOT NULL,
    to_id         uuid        NOT NULL,
    relation_type text        NOT NULL DEFAULT 'related_to' CHECK (relation_type <> ''),
    strength      real        NOT NULL CHECK (strength >= 0 AND strength <= 1),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, id),
    UNIQUE (user_id, from_id, to_id, relation_type),
    FOREIGN KEY (user_id, from_id) REFERENCES memory.items ON DELETE CASCADE,
    FOREIGN KEY (user_id, to_id) REFERENCES memory.items ON DELETE CASCADE,
    CHECK (from_id <> to_id)
);
CREATE INDEX relations_to_idx ON memory.relations (user_id, to_id);

-- Entities (0.12.0; docs/design.md "Entities"): the people, places, organisations, projects and
-- things memories are about, each with its canonical name, its type and the other names it is
-- known by. Written by memory_write as memories are written (crates/memory_core/src/entities.rs
-- resolves the names), merged and split by SQL; an entity no memory mentions any more is
-- deleted with its last link (src/ops/entities.rs), so a deleted memory leaves no name behind.
CREATE TABLE memory.entities (
    user_id    text        NOT NULL,
    id         uuid        NOT NULL DEFAULT gen_random_uuid(),
    name       text        NOT NULL CHECK (name <> '' AND length(name) <= 100),
    type       text        NOT NULL DEFAULT 'thing'
                           CHECK (type IN ('person', 'place', 'organization', 'project', 'thing')),
    aliases    text[]      NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, id)
);
-- Which memories mention which entity.
CREATE TABLE memory.entity_links (
    user_id   text NOT NULL,
    entity_id uuid NOT NULL,
    item_id   uuid NOT NULL,
    PRIMARY KEY (user_id, entity_id, item_id),
    FOREIGN KEY (user_id, entity_id) REFERENCES memory.entities ON DELETE CASCADE,
    FOREIGN KEY (user_id, item_id) REFERENCES memory.items ON DELETE CASCADE
);
CREATE INDEX entity_links_item_idx ON memory.entity_links (user_id, item_id);
-- How two entities relate, as a memory states it ("Robert is the user's brother": Robert,
-- 'brother of', the user; "Ana works at Acme"): kept as long as that memory is
-- (crates/memory_core/src/entities.rs `relations_in` reads them).
CREATE TABLE memory.entity_relations (
    user_id    text NOT NULL,
    subject_id uuid NOT NULL,
    relation   text NOT NULL CHECK (relation <> '' AND length(relation) <= 60),
    object_id  uuid NOT NULL,
    item_id    uuid NOT NULL,
    PRIMARY KEY (user_id, subject_id, relation, object_id, item_id),
    FOREIGN KEY (user_id, subject_id) REFERENCES memory.entities ON DELETE CASCADE,
    FOREIGN KEY (user_id, object_id) REFERENCES memory.entities ON DELETE CASCADE,
    FOREIGN KEY (user_id, item_id) REFERENCES memory.items ON DELETE CASCADE
);
CREATE INDEX entity_relations_object_idx ON memory.entity_relations (user_id, object_id);
CREATE INDEX entity_relations_item_idx ON memory.entity_relations (user_id, item_id);

-- Change log (docs/design.md "Delta header"): exactly one row per thread revision. Written only by triggers.
CREATE TABLE memory.change_log (
    user_id   text        NOT NULL,
    thread_id text        NOT NULL,
    rev       bigint      NOT NULL CHECK (rev >= 1),
    memory_id text        NOT NULL,
    event     text        NOT NULL CHECK (event IN ('created', 'updated', 'merged', 'deleted', 'soft_deleted',
                                                    'restored', 'message_added', 'message_updated', 'message_deleted',
                                                    'superseded')),
    meta      jsonb       NOT NULL DEFAULT '{}',
    ts        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, thread_id, rev),
    FOREIGN KEY (user_id, thread_id) REFERENCES memory.threads ON DELETE CASCADE
);

-- Audit history (docs/design.md "History"): every change to a memory item, a block or a memory file, and
-- every edit or deletion of a message. Written only by triggers; kept after the item is purged.
CREATE TABLE memory.history (
    user_id   text        NOT NULL,
    id        uuid        NOT NULL DEFAULT gen_random_uuid(),
    entity    text        NOT NULL CHECK (entity IN ('item', 'block', 'file', 'message', 'store')),
    memory_id text        NOT NULL,
    event     text        NOT NULL CHECK (event IN ('ADD', 'UPDATE', 'DELETE', 'MERGE', 'LINK', 'TTL', 'RESTORE', 'PURGE', 'SUPERSEDE')),
    old_ref   text,
    new_ref   text,
    actor     text,
    meta      jsonb       NOT NULL DEFAULT '{}',
    ts        timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (user_id, id)
);
CREATE INDEX history_memory_idx ON memory.history (user_id, memory_id, ts DESC);

-- Operational events (docs/design.md "Operational events"): minimal counters of what the system did.
CREATE TABLE memory.events (
    user_id   text        NOT NULL,
    id        uuid        NOT NULL DEFAULT gen_random_uuid(),
    thread_id text,
    node      text        NOT NULL CHECK (node IN ('hotpath', 'context', 'episodic', 'worker')),
    op        text        NOT NULL CHECK (op <> ''),
    status    text        NOT NULL CHECK (status IN ('ok', 'error', 'skipped')),
    memory_id text,
    category  text,
    sim       real,
    ts        timestamptz NOT NULL DEFAULT now(),
    sqlstate  text,
    -- Who made the call (0.12.0): the role, and whom it acted for (sql/triggers.sql
    -- memory._actor); NULL for the worker's and the purge's own events and for those written
    -- before 0.12.0.
    actor     text,
    PRIMARY KEY (user_id, id)
);
CREATE INDEX events_ts_idx ON memory.events (user_id, ts DESC);
CREATE INDEX events_node_idx ON memory.events (user_id, node, ts DESC);

-- A tenant's settings (0.13.0): its default language (memory_configure's "language", an ISO
-- 639-1 code), for texts whose language detection cannot tell (sql/triggers.sql
-- memory._set_language) and for reading queries.
CREATE TABLE memory.settings (
    user_id  text NOT NULL PRIMARY KEY CHECK (user_id <> ''),
    language text CHECK (language ~ '^[a-z]{2}$')
);

-- Categories and agent allowlists (docs/design.md "Categories and allowlists"), per tenant; memory_configure replaces them.
CREATE TABLE memory.categories (
    user_id    text    NOT NULL,
    name       text    NOT NULL CHECK (name <> ''),
    context    text    NOT NULL DEFAULT 'rag' CHECK (context IN ('all', 'rag')),
    rag_length integer CHECK (rag_length > 0),
    custom     boolean NOT NULL DEFAULT false,
    -- screening overrides for this category's memories (0.11.0, docs/api.md "Screening")
    screen     jsonb   CHECK (screen IS NULL OR jsonb_typeof(screen) = 'object'),
    PRIMARY KEY (user_id, name)
);

CREATE TABLE memory.allowlists (
    user_id  text NOT NULL,
    agent    text NOT NULL CHECK (agent <> ''),
    category text NOT NULL,
    PRIMARY KEY (user_id, agent, category),
    FOREIGN KEY (user_id, category) REFERENCES memory.categories ON DELETE CASCADE
);

-- Checkpoints (docs/design.md "Checkpoints"): one per (user, thread).
CREATE TABLE memory.checkpoints (
    user_id         text        NOT NULL,
    thread_id       text        NOT NULL CHECK (thread_id <> ''),
    id              uuid        NOT NULL DEFAULT gen_random_uuid(),
    checkpoint_data jsonb       NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, thread_id)
);
CREATE INDEX checkpoints_updated_idx ON memory.checkpoints (user_id, updated_at DESC);

-- Layer-2 detail memory (docs/design.md "Detail memory"): the full content behind a `[MemoryRef: <key> - ...]`
-- placeholder. Its Layer-1 line is a memory.items row of kind 'detail' (item_id), which is what
-- memory_query can find; the content lives here so that no retrieval path ever reads it by
-- accident (a 10 MB log in memory.items would be detoasted by every query that ranks it).
-- `chars` is counted once at store time: pagination answers `total` without reading 10 MB.
--
-- # Why the content is in chunks
-- Postgres' substr over a UTF-8 text value must read the value from its start to find a
-- character offset (measured on one 10 MB value: a 4,000-character page took 5.6 ms at the
-- start and 67 ms at the end). Stored as rows of 65,536 characters (memory.detail_chunks), a
-- page reads only the one or two chunks it spans, wherever it is.
CREATE TABLE memory.details (
    user_id     text        NOT NULL,
    key         text        NOT NULL CHECK (key ~ '^[a-z0-9][a-z0-9_-]{0,99}$'),
    item_id     uuid        NOT NULL,
    type        text        NOT NULL CHECK (type ~ '^[A-Za-z0-9_.-]{1,50}$'),
    description text        NOT NULL CHECK (description <> ''),
    chars       bigint      NOT NULL CHECK (chars >= 0),
    thread_id   text,
    metadata    jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- The agent it was stored for (0.12.0), NULL when stored for the user.
    agent_id    text,
    PRIMARY KEY (user_id, key),
    UNIQUE (user_id, item_id),
    FOREIGN KEY (user_id, item_id) REFERENCES memory.items ON DELETE CASCADE
);
CREATE INDEX details_thread_idx ON memory.details (user_id, thread_id, created_at) WHERE thread_id IS NOT NULL;
-- Captured outputs whose description waits for the model (sql/queries/refine_due.sql; 0.13.0).
CREATE INDEX details_refine_idx ON memory.details (created_at) WHERE metadata ->> 'pending' = 'llm';

-- A detail's content, chunk `n` (from 0) holding characters n*65536 .. n*65536+65535.
CREATE TABLE memory.detail_chunks (
    user_id text    NOT NULL,
    key     text    NOT NULL,
    n       integer NOT NULL CHECK (n >= 0),
    content text    NOT NULL,
    PRIMARY KEY (user_id, key, n),
    FOREIGN KEY (user_id, key) REFERENCES memory.details ON DELETE CASCADE
);

-- Memory files (docs/design.md "Memory files"): a small virtual file system per tenant, paths unique per user.
-- Searched by memory_file_search (keyword + meaning); embeddings follow the same backfill as
-- items and messages, and get the same per-model HNSW index (sql/embed.sql): an exact scan
-- of one tenant's 10,000 file vectors took 38-44 ms (each row's vector is detoasted and cast).
CREATE TABLE memory.files (
    user_id          text        NOT NULL CHECK (user_id <> ''),
    path             text        NOT NULL CHECK (char_length(path) BETWEEN 1 AND 512),
    id               uuid        NOT NULL DEFAULT gen_random_uuid(),
    title            text        CHECK (char_length(title) <= 255),
    content          text        NOT NULL,
    tags             text[]      NOT NULL DEFAULT '{}',
    metadata         jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    embedding        vector,
    embedding_model  text,
    -- The content's language (0.13.0; as memory.messages.language).
    language         text        CHECK (language ~ '^[a-z]{2}$'),
    tsv              tsvector    GENERATED ALWAYS AS (
                         setweight(memory.text_tsvector(language, coalesce(title, '') || ' ' || translate(path, '/_.-', '    ')), 'A') ||
                         memory.text_tsvector(language, left(content, 100000)) ||
                         memory.tenant_tsvector(user_id)) STORED,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    last_accessed_at timestamptz,
    PRIMARY KEY (user_id, path),
    UNIQUE (user_id, id),
    CHECK (embedding IS NULL OR embedding_model IS NOT NULL)
);
-- Episodes episode_write wrote without the model, for the worker's refine job
-- (sql/queries/refine_due.sql; 0.13.0).
CREATE INDEX files_refine_idx ON memory.files (updated_at) WHERE metadata ->> 'pending' = 'llm';
CREATE INDEX files_tsv_idx ON memory.files USING gin (tsv);
CREATE INDEX files_tags_idx ON memory.files USING gin (tags);
CREATE INDEX files_embedding_model_idx ON memory.files (embedding_model);

-- Extraction (0.6.0, docs/design.md "Extraction"): how far the background worker has read each
-- thread. Every message up to extracted_seq has been through extraction, and the watermark moves
-- in the transaction that writes what was extracted, so a worker killed mid-batch repeats the
-- batch instead of losing or doubling it. attempts / retry_at / last_error: a failing thread's
-- bounded retries (the others go on meanwhile). A thread without a row starts from its first
-- message. Written by the extension as its owner; tenants read their own rows.
CREATE TABLE memory.extractions (
    user_id       text        NOT NULL,
    thread_id     text        NOT NULL,
    extracted_seq bigint      NOT NULL DEFAULT 0 CHECK (extracted_seq >= 0),
    attempts      integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at      timestamptz,
    last_error    text,
    last_run_at   timestamptz,
    -- When the theory-of-mind pass last ran on this thread (0.12.0: at most one a
    -- day per tenant, insights or none).
    tom_at        timestamptz,
    PRIMARY KEY (user_id, thread_id),
    FOREIGN KEY (user_id, thread_id) REFERENCES memory.threads ON DELETE CASCADE
);

-- Per tenant and day: memories extraction wrote (memory_ext.extract_daily_cap bounds them) and
-- what its LLM calls cost. Written by the extension as its owner: a tenant cannot reset its cap.
CREATE TABLE memory.extraction_usage (
    user_id    text    NOT NULL,
    day        date    NOT NULL,
    writes     integer NOT NULL DEFAULT 0 CHECK (writes >= 0),
    calls      integer NOT NULL DEFAULT 0 CHECK (calls >= 0),
    tokens_in  bigint  NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_out bigint  NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    PRIMARY KEY (user_id, day)
);

-- Ended runs waiting for the worker (0.6.0, docs/api.md "Episodes"): run_end only records the
-- request here; the worker writes the episode and compacts when the context is full, then
-- deletes the row. One pending end per thread: a second run_end before the worker gets to it
-- updates the first (its episode covers both).
CREATE TABLE memory.run_ends (
    user_id        text        NOT NULL,
    thread_id      text        NOT NULL,
    run_id         text        CHECK (run_id <> ''),
    context_window integer     CHECK (context_window > 0),
    requested_at   timestamptz NOT NULL DEFAULT now(),
    attempts       integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    retry_at       timestamptz NOT NULL DEFAULT now(),
    last_error     text,
    PRIMARY KEY (user_id, thread_id),
    FOREIGN KEY (user_id, thread_id) REFERENCES memory.threads ON DELETE CASCADE
);
CREATE INDEX run_ends_retry_idx ON memory.run_ends (retry_at);

-- Consent (0.6.0, docs/api.md "Consent"): a change to a sensitive field (a memory of a category
-- in memory_ext.consent_categories) that was inferred, not stated (extraction, or memory_write
-- with "source": "inferred"), waits here for memory_approve / memory_reject instead of being
-- written; it expires after 7 days. A benign field (memory_ext.corroborate_categories) is written
-- once a second signal with the same text corroborates it. `request` is the memory_write request
-- applied on approval; the row stays after the decision (status, decided_at, decided_by: the
-- audit of the decision). Written by the extension as its owner; tenants read their own rows.
CREATE TABLE memory.proposals (
    user_id    text        NOT NULL,
    id         uuid        NOT NULL DEFAULT gen_random_uuid(),
    category   text        NOT NULL,
    text       text        NOT NULL,
    request    jsonb       NOT NULL CHECK (jsonb_typeof(request) = 'object'),
    policy     text        NOT NULL CHECK (policy IN ('consent', 'corroborate', 'flag')),
    signals    integer     NOT NULL DEFAULT 1 CHECK (signals >= 1),
    status     text        NOT NULL DEFAULT 'pending'
               CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'applied')),
    thread_id  text,
    memory_id  uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL DEFAULT now() + interval '7 days',
    decided_at timestamptz,
    decided_by text,
    PRIMARY KEY (user_id, id)
);
CREATE INDEX proposals_pending_idx ON memory.proposals (user_id, category) WHERE status = 'pending';
