-- memory_citus_distribute (src/ops/citus.rs): the forms that take their tenant as `user_id`
-- (src/pg/citus.rs `routed`), made Citus distributed functions by it when they are not yet.
-- Found by name among the extension's own functions, whatever schema it was created in;
-- the signature as regprocedure text, qualified when the schema is not on the search_path.
SELECT p.oid::regprocedure::text
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
WHERE e.extname = 'memory_ext'
  AND p.proname IN ('memory_query_for', 'memory_write_for', 'message_append_for',
                    'compile_core_blocks_for', 'memory_context_for')
  AND NOT EXISTS (SELECT 1 FROM pg_dist_object o
                  WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid
                    AND o.distribution_argument_index IS NOT NULL)
ORDER BY p.proname
