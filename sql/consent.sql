-- memory_proposals(user_id) -> table: the tenant's consent proposals (docs/api.md "Consent"),
-- newest first; a pending one past its expiry shows as 'expired' (memory_purge records it so).
-- SECURITY INVOKER: row-level security applies; user_id other than the current tenant is 42501.
-- PL/pgSQL: Citus plans no SQL function with parameters (docs/citus.md).
CREATE FUNCTION memory_proposals(user_id text DEFAULT NULL)
RETURNS TABLE (id uuid, category text, text text, policy text, signals integer, status text,
               thread_id text, memory_id uuid, created_at timestamptz, expires_at timestamptz,
               decided_at timestamptz, decided_by text)
LANGUAGE plpgsql STABLE
AS $$
#variable_conflict use_column
DECLARE
    tenant text := memory.resolve_tenant(memory_proposals.user_id);
BEGIN
    RETURN QUERY
    SELECT p.id, p.category, p.text, p.policy, p.signals,
           CASE WHEN p.status = 'pending' AND p.expires_at <= now() THEN 'expired' ELSE p.status END,
           p.thread_id, p.memory_id, p.created_at, p.expires_at, p.decided_at, p.decided_by
    FROM memory.proposals p
    WHERE p.user_id = tenant
    ORDER BY p.created_at DESC, p.id;
END
$$;
