-- Whether role $1 has memory_ext.tenant_source = 'role' set for it (ALTER ROLE ... SET, for
-- every database or for this one): such a tenant belongs to that role (src/pg/tenant.rs).
SELECT EXISTS (
    SELECT 1
    FROM pg_catalog.pg_db_role_setting s
    JOIN pg_catalog.pg_roles r ON r.oid = s.setrole
    CROSS JOIN LATERAL unnest(s.setconfig) c
    WHERE r.rolname = $1
      AND s.setdatabase IN (0, (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = current_database()))
      AND lower(c) = 'memory_ext.tenant_source=role'
)
