-- Term statistics for BM25 (the lexical score of the search engine, src/ops/search.rs).
--
-- # Why our own statistics
-- Postgres' ts_rank has no inverse document frequency: a word in every memory counts as much as
-- a rare name. BM25 needs, per tenant, how many memories contain each term (df), how many
-- memories there are and their average length. These tables keep exactly that, per tenant,
-- and per thread for the episode score (a thread's memories read as one document). Statement
-- triggers keep them current for every write path, aggregating a whole multi-row statement
-- into one sorted upsert per term (sorted, so concurrent writers lock rows in the same order).
-- Counts cover all stored memories, soft-deleted ones included until they are purged: a
-- deliberate simplification (a few stale counts move BM25 scores negligibly).
--
-- Document length is the number of distinct lexemes (length(tsv)), which is what a tsvector
-- knows cheaply; for memory-sized texts it tracks the token count closely.

CREATE TABLE memory.lexicon (
    user_id text    NOT NULL,
    lexeme  text    NOT NULL,
    df      integer NOT NULL CHECK (df >= 0),
    PRIMARY KEY (user_id, lexeme)
);
-- The tenant's words by their ending (0.13.0): the compounds whose head a query names
-- (memory.query_lexemes), without reading the tenant's whole lexicon.
CREATE INDEX lexicon_ending_idx ON memory.lexicon (user_id, reverse(lexeme) text_pattern_ops);

CREATE TABLE memory.corpus (
    user_id   text   NOT NULL PRIMARY KEY,
    docs      bigint NOT NULL CHECK (docs >= 0),
    total_len bigint NOT NULL CHECK (total_len >= 0)
);

-- Episode documents: all memories of a thread together.
CREATE TABLE memory.thread_terms (
    user_id   text    NOT NULL,
    thread_id text    NOT NULL,
    lexeme    text    NOT NULL,
    tf        integer NOT NULL CHECK (tf >= 0),
    PRIMARY KEY (user_id, thread_id, lexeme)
);
CREATE INDEX thread_terms_lexeme_idx ON memory.thread_terms (user_id, lexeme);

CREATE TABLE memory.thread_corpus (
    user_id   text   NOT NULL,
    thread_id text   NOT NULL,
    len       bigint NOT NULL CHECK (len >= 0),
    PRIMARY KEY (user_id, thread_id)
);

-- Applies the rows of a statement to the statistics: `sign` +1 for rows added, -1 for rows
-- removed. SECURITY DEFINER: the statistics are bookkeeping that ordinary roles read but do not
-- write; the rows come from transition tables of memory.items, already admitted by row-level
-- security.
-- One row per (document, lexeme) of the given documents, without the tenant lexeme.
-- A body parsed at creation (BEGIN ATOMIC: its names resolved then, whatever the caller's
-- search_path) and no SET clause, so that the planner inlines it into the statements of
-- memory._apply_term_stats, whose plans PL/pgSQL keeps: called as a function, every write
-- parsed and planned it twice (0.3 ms of a memory_write, perf at 5,000 memories).
CREATE FUNCTION memory._terms(p_users text[], p_threads text[], p_tsvs tsvector[])
RETURNS TABLE (user_id text, thread_id text, lexeme text, tf integer)
LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    SELECT r.user_id, r.thread_id, u.lexeme, coalesce(array_length(u.positions, 1), 1)
    FROM unnest(p_users, p_threads, p_tsvs) AS r(user_id, thread_id, tsv)
    CROSS JOIN LATERAL unnest(r.tsv) u
    WHERE u.lexeme <> memory.tenant_lexeme(r.user_id);
END;

CREATE FUNCTION memory._apply_term_stats(p_users text[], p_threads text[], p_tsvs tsvector[], sign integer)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    uid text;
BEGIN
    IF sign > 0 THEN
        INSERT INTO memory.corpus AS c (user_id, docs, total_len)
        SELECT user_id, count(*), coalesce(sum(length(tsv) - 1), 0)
        FROM unnest(p_users, p_tsvs) AS r(user_id, tsv) GROUP BY user_id ORDER BY user_id
        ON CONFLICT (user_id) DO UPDATE SET docs = c.docs + EXCLUDED.docs, total_len = c.total_len + EXCLUDED.total_len;
        INSERT INTO memory.lexicon AS l (user_id, lexeme, df)
        SELECT user_id, lexeme, count(*) FROM memory._terms(p_users, p_threads, p_tsvs) GROUP BY user_id, lexeme ORDER BY user_id, lexeme
        ON CONFLICT (user_id, lexeme) DO UPDATE SET df = l.df + EXCLUDED.df;
        INSERT INTO memory.thread_corpus AS t (user_id, thread_id, len)
        SELECT user_id, thread_id, coalesce(sum(length(tsv) - 1), 0)
        FROM unnest(p_users, p_threads, p_tsvs) AS r(user_id, thread_id, tsv) WHERE thread_id IS NOT NULL
        GROUP BY user_id, thread_id ORDER BY user_id, thread_id
        ON CONFLICT (user_id, thread_id) DO UPDATE SET len = t.len + EXCLUDED.len;
        INSERT INTO memory.thread_terms AS t (user_id, thread_id, lexeme, tf)
        SELECT user_id, thread_id, lexeme, sum(tf) FROM memory._terms(p_users, p_threads, p_tsvs) WHERE thread_id IS NOT NULL
        GROUP BY user_id, thread_id, lexeme ORDER BY user_id, thread_id, lexeme
        ON CONFLICT (user_id, thread_id, lexeme) DO UPDATE SET tf = t.tf + EXCLUDED.tf;
    ELSE
        -- Decrements are plain UPDATEs: an upsert would check the constraints of its proposed
        -- (negative) insert row before finding the conflict, and fail. One tenant at a time,
        -- named in each statement: on Citus this runs in a shard's trigger, where only a
        -- statement routed to one tenant's shard may run (a join over several tenants is a
        -- distributed query inside a shard's, which Citus refuses; docs/citus.md).
        FOREACH uid IN ARRAY (SELECT array_agg(DISTINCT x) FROM unnest(p_users) x) LOOP
            UPDATE memory.corpus c SET docs = c.docs - d.docs, total_len = c.total_len - d.len
            FROM (SELECT count(*) AS docs, coalesce(sum(length(tsv) - 1), 0) AS len
                  FROM unnest(p_users, p_tsvs) AS r(user_id, tsv) WHERE r.user_id = uid) d
            WHERE c.user_id = uid;
            UPDATE memory.lexicon l SET df = l.df - d.df
            FROM (SELECT lexeme, count(*) AS df FROM memory._terms(p_users, p_threads, p_tsvs)
                  WHERE user_id = uid GROUP BY lexeme) d
            WHERE l.user_id = uid AND l.lexeme = d.lexeme;
            UPDATE memory.thread_corpus t SET len = t.len - d.len
            FROM (SELECT thread_id, coalesce(sum(length(tsv) - 1), 0) AS len
                  FROM unnest(p_users, p_threads, p_tsvs) AS r(user_id, thread_id, tsv)
                  WHERE r.user_id = uid AND thread_id IS NOT NULL
                  GROUP BY thread_id) d
            WHERE t.user_id = uid AND t.thread_id = d.thread_id;
            UPDATE memory.thread_terms t SET tf = t.tf - d.tf
            FROM (SELECT thread_id, lexeme, sum(tf) AS tf FROM memory._terms(p_users, p_threads, p_tsvs)
                  WHERE user_id = uid AND thread_id IS NOT NULL
                  GROUP BY thread_id, lexeme) d
            WHERE t.user_id = uid AND t.thread_id = d.thread_id AND t.lexeme = d.lexeme;
            -- Terms no memory has any more go, so the tables do not grow without bound.
            DELETE FROM memory.lexicon l
            USING (SELECT DISTINCT lexeme FROM memory._terms(p_users, p_threads, p_tsvs) WHERE user_id = uid) d
            WHERE l.user_id = uid AND l.lexeme = d.lexeme AND l.df <= 0;
            DELETE FROM memory.thread_terms t
            USING (SELECT DISTINCT thread_id, lexeme FROM memory._terms(p_users, p_threads, p_tsvs) WHERE user_id = uid) d
            WHERE t.user_id = uid AND t.thread_id = d.thread_id AND t.lexeme = d.lexeme AND t.tf <= 0;
        END LOOP;
    END IF;
END $$;
REVOKE ALL ON FUNCTION memory._apply_term_stats(text[], text[], tsvector[], integer) FROM PUBLIC;

CREATE FUNCTION memory._items_term_stats() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    u text[];
    t text[];
    v tsvector[];
BEGIN
    IF memory._restoring() THEN
        RETURN NULL;  -- the statistics are restored with the memories (sql/triggers.sql)
    END IF;
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(user_id), array_agg(thread_id), array_agg(tsv) INTO u, t, v FROM new_rows;
        IF u IS NOT NULL THEN PERFORM memory._apply_term_stats(u, t, v, 1); END IF;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(user_id), array_agg(thread_id), array_agg(tsv) INTO u, t, v FROM old_rows;
        IF u IS NOT NULL THEN PERFORM memory._apply_term_stats(u, t, v, -1); END IF;
    ELSE
        -- Only rows whose text (or thread) changed; access bookkeeping does not touch terms.
        SELECT array_agg(o.user_id), array_agg(o.thread_id), array_agg(o.tsv) INTO u, t, v
        FROM old_rows o JOIN new_rows n ON n.user_id = o.user_id AND n.id = o.id
        WHERE o.tsv IS DISTINCT FROM n.tsv OR o.thread_id IS DISTINCT FROM n.thread_id;
        IF u IS NOT NULL THEN PERFORM memory._apply_term_stats(u, t, v, -1); END IF;
        SELECT array_agg(n.user_id), array_agg(n.thread_id), array_agg(n.tsv) INTO u, t, v
        FROM old_rows o JOIN new_rows n ON n.user_id = o.user_id AND n.id = o.id
        WHERE o.tsv IS DISTINCT FROM n.tsv OR o.thread_id IS DISTINCT FROM n.thread_id;
        IF u IS NOT NULL THEN PERFORM memory._apply_term_stats(u, t, v, 1); END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER items_term_stats_insert AFTER INSERT ON memory.items
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory._items_term_stats();
CREATE TRIGGER items_term_stats_update AFTER UPDATE ON memory.items
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory._items_term_stats();
CREATE TRIGGER items_term_stats_delete AFTER DELETE ON memory.items
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memory._items_term_stats();

-- A memory's BM25 score for a query, from its stored tsvector (src/pg/tsvector.rs): the sum over
-- `terms` it contains of idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * (length(tsv) - 1) / avg_len)).
-- memory_query computes `idf` and `avg_len` from memory.lexicon and memory.corpus.
CREATE FUNCTION memory.bm25(tsv tsvector, terms text[], idf float8[], avg_len float8) RETURNS float8
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'bm25_wrapper';

-- The language a tenant usually writes in: the most common one among its 25 most recently
-- updated memories (items_updated_idx), NULL when none has one. What a text or a query whose
-- language detection cannot tell is read in when the tenant has set no default: a German
-- tenant's "Wo wohnt Anna?" is read in German without anyone configuring it.
-- PL/pgSQL, not SQL: Citus plans a distributed query in an SQL function with parameters not at
-- all ("could not create distributed plan"), in PL/pgSQL with the values bound.
CREATE FUNCTION memory._usual_language(p_user text) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    found text;
BEGIN
    SELECT r.language INTO found
    FROM (SELECT i.language FROM memory.items i WHERE i.user_id = p_user ORDER BY i.updated_at DESC LIMIT 25) r
    WHERE r.language IS NOT NULL
    GROUP BY r.language ORDER BY count(*) DESC, r.language LIMIT 1;
    RETURN found;
END $$;

-- A query's lexemes (docs/api.md "Languages"): the query read in its own language (p_language,
-- when detection was sure) and in the tenant's default (else the language it usually writes
-- in, memory._usual_language; English without either), distinct and
-- sorted; every keyword path takes its terms from here (src/pg/fulltext.rs, memory_query's
-- sql/queries/search_terms.sql). A text matches in its own language (memory.text_tsvector).
-- German: Snowball keeps the -t of a weak verb's past ("wohnte" -> wohnt, "wohnen" -> wohn), so
-- a German reading also asks for each stem with and without a final t. Compounds (German,
-- Dutch, the Scandinavian languages, Finnish) are split and found against the tenant's own
-- words (memory.lexicon), not a dictionary: see the comments below.
CREATE FUNCTION memory.query_lexemes(p_user text, p_query text, p_language text,
                                     p_tenant_language text DEFAULT NULL) RETURNS text[]
LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tenant_language text;
    out text[];
BEGIN
    IF p_tenant_language IS NOT NULL THEN
        -- As the caller read it for its statement ('' for none; src/pg/fulltext.rs).
        tenant_language := nullif(p_tenant_language, '');
    ELSE
        -- Read first, on its own (PL/pgSQL for Citus, as memory._usual_language).
        SELECT s.language INTO tenant_language FROM memory.settings s WHERE s.user_id = p_user;
        IF tenant_language IS NULL THEN
            tenant_language := memory._usual_language(p_user);
        END IF;
    END IF;
    WITH l AS (
        SELECT u.lexeme, v.lang
        FROM (VALUES (p_language), (tenant_language)) v(lang),
             LATERAL unnest(memory.text_tsvector(v.lang, p_query)) u
    ), e AS (
        SELECT lexeme AS x, lang FROM l
        UNION ALL SELECT lexeme || 't', lang FROM l WHERE lang = 'de' AND lexeme !~ 't$'
        UNION ALL SELECT left(lexeme, -1), lang FROM l WHERE lang = 'de' AND lexeme ~ '...t$'
    ), c AS (
        -- Languages that write compounds as one word (0.13.0): the compounds the tenant wrote
        -- whose head is a query word ("studio" finds "tanzstudio"; the head carries a
        -- compound's meaning, so "tanz" does not), the eight it wrote most.
        SELECT e.x FROM e WHERE e.lang IN ('de', 'nl', 'sv', 'da', 'no', 'nb', 'fi') AND length(e.x) >= 4
    )
    SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}') INTO out
    FROM (SELECT x FROM e
          UNION ALL
          SELECT k.lexeme FROM c, LATERAL (
              SELECT w.lexeme FROM memory.lexicon w
              WHERE w.user_id = p_user AND w.df > 0 AND length(w.lexeme) >= length(c.x) + 3
                AND reverse(w.lexeme) LIKE replace(replace(replace(reverse(c.x), '\', '\\'), '%', '\%'), '_', '\_') || '%'
              ORDER BY w.df DESC, w.lexeme LIMIT 8) k
          UNION ALL
          -- A query compound the tenant never wrote, split where its head (a tail of four
          -- letters or more) is a word the tenant wrote: "tanzstudio" finds "studio", and
          -- "tanz" too when the tenant wrote it (a linking s or es before the head dropped).
          SELECT p.part FROM c
          CROSS JOIN LATERAL generate_series(4, length(c.x) - 4) i
          CROSS JOIN LATERAL (VALUES (left(c.x, i)), (regexp_replace(left(c.x, i), 'e?s$', '')), (right(c.x, -i))) p(part)
          WHERE NOT EXISTS (SELECT 1 FROM memory.lexicon w WHERE w.user_id = p_user AND w.lexeme = c.x AND w.df > 0)
            AND EXISTS (SELECT 1 FROM memory.lexicon w WHERE w.user_id = p_user AND w.lexeme = right(c.x, -i) AND w.df > 0)
            AND length(p.part) >= 4
            AND EXISTS (SELECT 1 FROM memory.lexicon w WHERE w.user_id = p_user AND w.lexeme = p.part AND w.df > 0)) y;
    RETURN out;
END $$;
