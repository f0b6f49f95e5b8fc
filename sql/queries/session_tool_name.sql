-- The tool name of an earlier call $3 in session $2: a function call item's, or a message's
-- tool_calls entry (src/ops/session.rs). $1 user_id.
SELECT coalesce(item ->> 'name', (SELECT c -> 'function' ->> 'name' FROM jsonb_array_elements(tool_calls) c WHERE c ->> 'id' = $3 LIMIT 1))
FROM memory.messages
WHERE user_id = $1 AND thread_id = $2
  AND (item ->> 'call_id' = $3 AND item ->> 'type' = 'function_call'
       OR tool_calls @> jsonb_build_array(jsonb_build_object('id', $3)))
ORDER BY seq DESC LIMIT 1
