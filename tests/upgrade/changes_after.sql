-- After the upgrade, what tests/upgrade/changes_before.sql wrote has changed as meant: one
-- boolean per line, every one true. (psql runs as a superuser: each check names the tenant.)
\set ON_ERROR_STOP on
SET memory_ext.user_id = 'upgrade-changes';
-- 0.9.0: categories normalised and found by any spelling (that the memories' updated_at,
-- history and change log stay as they were is tests/upgrade/changes_kept.sql's).
SELECT array_agg(category ORDER BY category) = ARRAY['health', 'travel_plans'] AS memories_normalised
FROM memory.items WHERE user_id = 'upgrade-changes' AND category IS NOT NULL;
SELECT array_agg(name ORDER BY name) = ARRAY['health', 'travel_plans'] AS categories_normalised
FROM memory.categories WHERE user_id = 'upgrade-changes';
SELECT array_agg(category ORDER BY category) = ARRAY['health', 'travel_plans'] AS allowlist_normalised
FROM memory.allowlists WHERE user_id = 'upgrade-changes';
SELECT count(*) = 1 AS found_by_old_spelling FROM memory_search('night train', filters => '{"category": "Travel Plans"}');
SELECT count(*) = 1 AS found_by_new_spelling FROM memory_search('night train', filters => '{"category": "travel_plans"}');
-- 0.10.0: tenant_tsvector records that it calls tenant_lexeme (pg_upgrade's dump order needs it).
SELECT EXISTS (SELECT 1 FROM pg_depend
               WHERE classid = 'pg_proc'::regclass AND objid = 'memory.tenant_tsvector(text)'::regprocedure
                 AND refobjid = 'memory.tenant_lexeme(text)'::regprocedure) AS tenant_tsvector_depends_on_lexeme;
-- 0.11.0: the purged memory's text is gone from history and the change log; its events stay.
SELECT count(*) = 0 AS purged_text_scrubbed FROM memory.history
WHERE user_id = 'upgrade-changes' AND (old_ref LIKE '%quokkastone%' OR new_ref LIKE '%quokkastone%' OR meta::text LIKE '%quokkastone%');
SELECT count(*) = 0 AS purged_text_scrubbed_from_change_log FROM memory.change_log
WHERE user_id = 'upgrade-changes' AND meta::text LIKE '%quokkastone%';
SELECT count(*) >= 3 AS purged_events_kept FROM memory.history
WHERE user_id = 'upgrade-changes' AND meta ->> 'erased' = 'true';
-- 0.13.0 (languages): rows written before have no language and keep their English reading; a
-- text without spaces is read as bigrams now, in the row and in the term statistics.
SELECT bool_and(language IS NULL) AS old_rows_have_no_language FROM memory.items WHERE user_id = 'upgrade-changes';
SELECT EXISTS (SELECT 1 FROM memory.lexicon WHERE user_id = 'upgrade-changes' AND lexeme = '里斯' AND df = 1)
   AND NOT EXISTS (SELECT 1 FROM memory.lexicon WHERE user_id = 'upgrade-changes' AND lexeme LIKE '我住在%')
   AS bigrams_in_statistics;
SELECT (SELECT text FROM memory_search('里斯本') ORDER BY score DESC LIMIT 1) = '我住在里斯本。' AS found_by_bigrams;
-- 0.13.0: a filter whose value is an array matches only the items that have it.
SELECT coalesce(array_agg(s.key), '{}') <@ ARRAY['shared'] AS store_filter_needs_the_field
FROM store_search(ARRAY['ch-docs'], filter => '{"acl": ["alice"]}') s;
-- 0.13.0: a memory written after the upgrade records the relation it states, which the agent's
-- memory_entity tool shows; an agent's file directories are kept in the new column. (A tenant
-- of its own: this one's allowlists shut out agents that have none.)
SET memory_ext.user_id = 'upgrade-relations';
SELECT memory_write('{"user_id": "upgrade-relations", "text": "Quill is Nora''s sister."}') ->> 'event' = 'created' AS relation_written;
SELECT count(*) = 1 AS relation_recorded FROM memory.entity_relations r JOIN memory.entities s ON s.id = r.subject_id
WHERE r.user_id = 'upgrade-relations' AND s.name = 'Quill' AND r.relation = 'sister of';
SELECT memory_agent('upgrade-relations-agent', 'upgrade-relations') IS NOT NULL
   AND memory_file_allowlist('upgrade-relations-agent', ARRAY['episodes']) ->> 'paths' = '["episodes/"]' AS file_allowlist_kept;
SELECT memory_tool_call('upgrade-relations-agent', NULL, 'memory_entity', '{"name": "Quill"}') ->> 'content' LIKE '%- Quill: sister of Nora%' AS entity_tool_answers;
-- 0.13.0: memory_export writes other systems' formats (docs/migrating.md "Leaving").
SELECT jsonb_array_length(memory_export('upgrade-relations', 'mem0') -> 'results') >= 1
   AND memory_export('upgrade-relations', 'letta_af') -> 'agents' -> 0 ->> 'name' = 'upgrade-relations-agent' AS export_formats;
-- 0.13.0: a tenant's default language, set without touching its categories, taken by a text too
-- short to detect.
SET memory_ext.user_id = 'upgrade-languages';
SELECT memory_configure('{"categories": [{"name": "home"}]}') IS NOT NULL AS configured;
SELECT memory_configure('{"language": "de"}') ->> 'language' = 'de' AS default_language_set;
SELECT count(*) = 1 AS categories_kept_by_language FROM memory.categories WHERE user_id = 'upgrade-languages';
SELECT memory_write('{"text": "Sie kocht gern."}') ->> 'event' = 'created' AS german_written;
SELECT language = 'de' AS short_text_takes_the_default FROM memory.items WHERE user_id = 'upgrade-languages';
-- 0.13.0: the change feed starts at the upgrade: changes made after it are in it (not those
-- before), in order, with a cursor that goes on from where it was.
SET memory_ext.user_id = 'upgrade-feed';
SELECT jsonb_array_length(memory_changes() -> 'changes') = 0 AS feed_starts_empty;
SELECT memory_write('{"text": "Nora moved to Porto."}') ->> 'event' = 'created' AS feed_written;
SELECT message_append('upgrade-feed-thread', 'user', 'hello') IS NOT NULL AS feed_message;
-- (Read until both are there: a transaction of another session still running holds the feed
-- back for a moment, sql/changes.sql.)
CREATE FUNCTION pg_temp.feed(want int) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE r jsonb;
BEGIN
    FOR i IN 1..200 LOOP
        r := memory_changes();
        EXIT WHEN jsonb_array_length(r -> 'changes') >= want;
        PERFORM pg_sleep(0.05);
    END LOOP;
    RETURN r;
END $$;
SELECT array_agg(c ->> 'entity' || ':' || (c ->> 'op') ORDER BY ord) = ARRAY['memory:insert', 'message:insert'] AS feed_lists_both
FROM jsonb_array_elements(pg_temp.feed(2) -> 'changes') WITH ORDINALITY x(c, ord);
SELECT jsonb_array_length(memory_changes(memory_changes() ->> 'cursor') -> 'changes') = 0 AS feed_cursor_goes_on;
-- 0.13.0: spaces. A space made after the upgrade, written by its admin and read by a member
-- under the row policies the upgrade added; a member with read only cannot write.
DO $$ BEGIN CREATE ROLE regress_space_upgrade; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
SET ROLE regress_space_upgrade;
SET memory_ext.user_id = 'upgrade-space-admin';
SELECT memory_space_create('upgrade-team') ->> 'name' = 'upgrade-team' AS space_created;
SELECT memory_write('{"text": "The team meets on Mondays.", "space": "upgrade-team"}') ->> 'event' = 'created' AS space_written;
SELECT memory_grant('upgrade-team', 'upgrade-space-member') ->> 'access' = 'read' AS space_granted;
SET memory_ext.user_id = 'upgrade-space-member';
SELECT (SELECT count(*) FROM memory.items WHERE user_id = 'space:upgrade-team') = 1 AS member_reads_space;
SELECT memory_query('{"query": "when does the team meet"}') -> 'items' -> 0 ->> 'space' = 'upgrade-team' AS member_finds_space;
UPDATE memory.items SET text = 'x' WHERE user_id = 'space:upgrade-team';
SELECT (SELECT count(*) FROM memory.items WHERE user_id = 'space:upgrade-team' AND text = 'x') = 0 AS read_member_cannot_write;
RESET ROLE;
