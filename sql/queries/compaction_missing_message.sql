-- The first of message ids $3 (text) that is not a message of thread $2 (src/ops/compaction.rs
-- `set_message_ids`). $1 user_id.
SELECT x FROM unnest($3::text[]) x WHERE NOT EXISTS (SELECT 1 FROM memory.messages m
    WHERE m.user_id = $1 AND m.thread_id = $2 AND m.id::text = x) LIMIT 1
