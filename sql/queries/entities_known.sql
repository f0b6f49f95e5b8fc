-- Entities (src/ops/entities.rs): the tenant's newest $2 entities, oldest first, as the
-- resolver compares names with them. $1 user_id.
SELECT x.id::text, x.name, x.type, x.aliases
FROM (SELECT e.id, e.name, e.type, e.aliases, e.created_at
      FROM memory.entities e WHERE e.user_id = $1
      ORDER BY e.created_at DESC, e.id DESC LIMIT $2) x
ORDER BY x.created_at, x.id
