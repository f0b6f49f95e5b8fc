-- The schema memory_ext installs, as sorted text lines: one per object and property, with
-- names instead of OIDs, so that two databases can be compared with diff. Used by
-- tests/upgrade/run.sh to check that a fresh install and an upgraded one are the same.
-- Column order is left out on purpose: ALTER TABLE ADD COLUMN appends where CREATE TABLE may
-- place a column in the middle, and nothing in memory_ext depends on column positions.
\pset format unaligned
\pset tuples_only on
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'memory_ext'),
members AS (
    SELECT d.classid, d.objid FROM pg_depend d, ext WHERE d.refobjid = ext.oid AND d.deptype = 'e'
),
rels AS (
    SELECT c.oid, c.relname, c.relkind, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'memory' AND c.relkind IN ('r', 'p', 'v', 'S')
),
lines AS (
    SELECT 'relation ' || nspname || '.' || relname || ' kind=' || relkind::text ||
           ' acl=' || coalesce((SELECT relacl::text FROM pg_class WHERE oid = r.oid), '-') ||
           ' rls=' || (SELECT relrowsecurity || '/' || relforcerowsecurity FROM pg_class WHERE oid = r.oid) ||
           ' member=' || (r.oid IN (SELECT objid FROM members WHERE classid = 'pg_class'::regclass)) AS l
    FROM rels r
    UNION ALL
    SELECT 'column ' || r.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) ||
           CASE WHEN a.attnotnull THEN ' not null' ELSE '' END ||
           coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '') ||
           CASE WHEN a.attgenerated <> '' THEN ' generated' ELSE '' END ||
           coalesce(' acl=' || a.attacl::text, '')
    FROM rels r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef ad ON ad.adrelid = r.oid AND ad.adnum = a.attnum
    UNION ALL
    SELECT 'constraint ' || r.relname || '.' || co.conname || ' ' || pg_get_constraintdef(co.oid)
    FROM rels r JOIN pg_constraint co ON co.conrelid = r.oid
    UNION ALL
    SELECT 'index ' || pg_get_indexdef(i.indexrelid)
    FROM rels r JOIN pg_index i ON i.indrelid = r.oid
    UNION ALL
    SELECT 'trigger ' || pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
    FROM rels r JOIN pg_trigger t ON t.tgrelid = r.oid AND NOT t.tgisinternal
    UNION ALL
    SELECT 'policy ' || r.relname || '.' || p.polname || ' ' || p.polcmd::text || ' ' ||
           coalesce(pg_get_expr(p.polqual, p.polrelid), '-') || ' ' || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '-')
    FROM rels r JOIN pg_policy p ON p.polrelid = r.oid
    UNION ALL
    SELECT 'view ' || r.relname || ' ' || pg_get_viewdef(r.oid) FROM rels r WHERE r.relkind = 'v'
    UNION ALL
    SELECT 'function ' || p.oid::regprocedure::text || ' returns ' || pg_get_function_result(p.oid) ||
           ' ' || p.provolatile::text || p.proparallel::text || CASE WHEN p.prosecdef THEN ' definer' ELSE '' END ||
           CASE WHEN p.proisstrict THEN ' strict' ELSE '' END ||
           ' lang=' || (SELECT lanname FROM pg_language WHERE oid = p.prolang) ||
           ' config=' || coalesce(p.proconfig::text, '-') || ' acl=' || coalesce(p.proacl::text, '-') ||
           ' src=' || md5(p.prosrc) || ' bin=' || coalesce(p.probin, '-')
    FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
    UNION ALL
    SELECT 'dumped ' || c.oid::regclass::text || ' filter=' || coalesce(nullif(e.extcondition[i], ''), '-')
    FROM ext JOIN pg_extension e ON e.oid = ext.oid
    CROSS JOIN LATERAL generate_subscripts(e.extconfig, 1) i
    JOIN pg_class c ON c.oid = e.extconfig[i]
    UNION ALL
    SELECT 'comment ' || d.classoid::regclass::text || ' ' ||
           CASE WHEN d.classoid = 'pg_class'::regclass THEN d.objoid::regclass::text
                WHEN d.classoid = 'pg_proc'::regclass THEN d.objoid::regprocedure::text
                WHEN d.classoid = 'pg_namespace'::regclass THEN d.objoid::regnamespace::text
                ELSE d.objoid::text END || ' ' || md5(d.description)
    FROM pg_description d
    WHERE d.objoid IN (SELECT objid FROM members) OR d.objoid = 'memory'::regnamespace
       OR d.objoid IN (SELECT oid FROM rels)
)
SELECT l FROM lines ORDER BY l;
