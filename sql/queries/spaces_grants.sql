-- memory_grants: the caller's own grants and every grant of the spaces it administers, as JSON
-- objects, by space and grantee. $1 the caller.
SELECT jsonb_build_object('space', g.space, 'grantee', g.user_id, 'access', g.access,
                          'agent', g.agent_id, 'categories', g.categories,
                          'granted_by', g.granted_by,
                          'granted_at', to_char(g.granted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
FROM memory.grants g
WHERE g.user_id = $1
   OR g.space IN (SELECT a.space FROM memory.grants a WHERE a.user_id = $1 AND a.access = 'admin')
ORDER BY g.space, g.user_id
