-- memory_ext 0.6.0 -> 0.7.0 (ALTER EXTENSION memory_ext UPDATE TO '0.7.0')
--
-- What changes: on a Citus node, the trigger functions that run statements plan them on every
-- call (plan_cache_mode = force_custom_plan): with kept generic plans, a worker node's backend
-- serving the coordinator grew without bound (about 20 kB per statement; sql/citus.sql says
-- more, docs/citus.md has the figures). New function memory._citus_trigger_plans, applied here
-- when citus is installed. Nothing changes on plain Postgres; no table changes.
--
-- On Citus, run ALTER EXTENSION on the coordinator: Citus runs it on every node.
CREATE FUNCTION memory._citus_trigger_plans() RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['_items_term_stats', '_items_audit', '_relations_audit', '_blocks_audit',
                             '_messages_before_insert', '_messages_audit', '_files_audit', '_threads_guard']
    LOOP
        EXECUTE format('ALTER FUNCTION memory.%I() SET plan_cache_mode = force_custom_plan', f);
    END LOOP;
END $$;
REVOKE ALL ON FUNCTION memory._citus_trigger_plans() FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        PERFORM memory._citus_trigger_plans();
    END IF;
END $$;
