-- A message pinned or unpinned (message_pin, src/ops/compaction.rs): a pinned message is put
-- back into the context. $1 user_id, $2 thread, $3 message id (text), $4 pinned.
UPDATE memory.messages SET pinned = $4, in_context = in_context OR $4
WHERE user_id = $1 AND thread_id = $2 AND id::text = $3
RETURNING id::text, seq, pinned, in_context
