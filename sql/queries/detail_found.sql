-- memory_ref_search (src/ops/detail.rs): the details behind ranked Layer-1 memories, in rank
-- order. $1 user_id, $2 the memories' ids (text), $3 their scores, in step.
SELECT d.key, d.description, d.type, d.thread_id, d.agent_id, d.chars, d.created_at, r.score
FROM unnest($2::text[], $3::float8[]) WITH ORDINALITY AS r(id, score, n)
JOIN memory.details d ON d.user_id = $1 AND d.item_id = r.id::uuid
ORDER BY r.n
