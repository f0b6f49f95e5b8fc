-- Extraction: the active facts nearest to what the user said in the batch, shown to the LLM so
-- that it neither repeats them nor misses one a new fact replaces. $1 user_id, $2 the vector's
-- text form, $3 how many. Slots as in write_neighbours.sql (the model's partial HNSW index).
SELECT id::text, text, actor_id
FROM memory.items
WHERE user_id = $1 AND state = 'active' AND kind = 'semantic' AND embedding_model = {model}
ORDER BY embedding::{vt} {op} $2::{vt}
LIMIT $3
