-- memory_write's nearest active memories of the same model (dedupe and linking). $1 user_id,
-- $2 the vector's text form, $3 how many. The slots (in braces, never in a comment) are the
-- active model's id, its vector type and pgvector's cosine operator, as literals, so that the
-- planner uses that model's partial HNSW index. An immutable memory (metadata.immutable) is
-- nobody's near duplicate: a write never rewrites it.
SELECT id::text, (1 - (embedding::{vt} {op} $2::{vt}))::float8, text
FROM memory.items
WHERE user_id = $1 AND state = 'active' AND embedding_model = {model}
  AND metadata -> 'immutable' IS DISTINCT FROM 'true'::jsonb
ORDER BY embedding::{vt} {op} $2::{vt}
LIMIT $3
