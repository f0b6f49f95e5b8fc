-- Agents-SDK sessions over recall memory: add_items, get_items(limit), pop_item, clear_session;
-- items come back exactly as added, and are messages a chat request and conversation_search see.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'sid';

SELECT session_get_items('sid-s1') AS new_session;
SELECT session_add_items('sid-s1', '[
  {"role": "user", "content": "What is 2+2?"},
  {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"a\": 2, \"b\": 2}", "id": "fc_1"},
  {"type": "function_call_output", "call_id": "call_1", "output": "4"},
  {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Adding."}]},
  {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "2+2 is 4."}]}
]', 'sid') AS added;
SELECT jsonb_array_length(session_get_items('sid-s1')) AS items;
SELECT session_get_items('sid-s1', 2) AS latest_two;
SELECT session_get_items('sid-s1') -> 1 AS verbatim;
SELECT seq, role, content, tool_calls IS NOT NULL AS has_call, tool_call_id FROM context_messages('sid-s1');
-- Bad items (not JSON objects): 22023 naming the item, nothing added.
SELECT session_add_items('sid-s1', '[{"role": "user", "content": "ok"}, 42]');
\echo :LAST_ERROR_SQLSTATE
SELECT session_add_items('sid-s1', '{"role": "user"}');
\echo :LAST_ERROR_SQLSTATE
-- 0.13.0: a number no 64-bit float holds (read back as 0.0 before) is 22023 too.
SELECT session_add_items('sid-s1', '[{"role": "user", "content": "tiny", "score": 1e-400}]');
\echo :LAST_ERROR_SQLSTATE
SELECT jsonb_array_length(session_get_items('sid-s1')) AS still;
-- A message appended the ordinary way is an item too.
SELECT message_append('sid-s1', 'user', 'Thanks!') ->> 'seq' AS seq;
SELECT session_pop_item('sid-s1') AS popped;
SELECT session_pop_item('sid-s1') AS popped;
SELECT jsonb_array_length(session_get_items('sid-s1')) AS left_after_pops;
SELECT session_clear('sid-s1') AS cleared;
SELECT session_get_items('sid-s1') AS empty, session_pop_item('sid-s1') AS nothing;
-- Another tenant's session is not there.
SET memory_ext.user_id = 'sid-other';
SELECT session_add_items('sid-s2', '[{"role": "user", "content": "mine"}]', 'sid-other') AS added;
SET memory_ext.user_id = 'sid';
SELECT session_get_items('sid-s2') AS not_mine, session_clear('sid-s2') AS cleared;

-- 0.9.0: as the SDK's own sessions. The limit: 0 none, negative or NULL all.
SELECT session_add_items('sid-s3', '[{"role": "user", "content": "one"}, {"role": "user", "content": "two"}, {"role": "user", "content": "three"}]') AS added;
SELECT jsonb_array_length(session_get_items('sid-s3', 0)) AS zero, jsonb_array_length(session_get_items('sid-s3', -1)) AS negative,
       jsonb_array_length(session_get_items('sid-s3', NULL)) AS null_limit, session_get_items('sid-s3', 1) AS latest;
-- Whatever the SDK stores is stored and returned as given: a tool message, an unknown role,
-- neither role nor type; a tool output is filed under the tool it answers.
SELECT session_add_items('sid-s3', '[
  {"role": "tool", "tool_call_id": "c7", "content": "ok"},
  {"role": "critic", "content": "Looks right."},
  {"note": "no role, no type"},
  {"type": "function_call", "call_id": "c8", "name": "lookup", "arguments": "{}"},
  {"type": "function_call_output", "call_id": "c8", "output": "found"}
]') AS odd_items;
SELECT i AS item FROM jsonb_array_elements(session_get_items('sid-s3', 5)) i;
SELECT role, content, tool_call_id, name FROM memory.messages WHERE thread_id = 'sid-s3' AND seq > 3 ORDER BY seq;
-- After compact_thread the session is its compacted context: the summary, then what was kept.
SELECT compact_thread('sid-s3', keep_last => 2) ->> 'kept' AS kept;
SELECT i ->> 'role' AS role, left(i ->> 'content', 20) AS content FROM jsonb_array_elements(session_get_items('sid-s3')) i;
-- No tenant: 22004, as every call; naming it in the call works for an ordinary role.
RESET memory_ext.user_id;
SELECT session_get_items('sid-s3');
\echo :LAST_ERROR_SQLSTATE
SELECT session_pop_item('sid-s3');
\echo :LAST_ERROR_SQLSTATE
SELECT session_clear('sid-s3');
\echo :LAST_ERROR_SQLSTATE
SELECT jsonb_array_length(session_get_items('sid-s3', user_id => 'sid')) AS named;
SELECT session_add_items('sid-s4', '[{"role": "user", "content": "hi"}]', 'sid') AS added_named,
       session_pop_item('sid-s4', user_id => 'sid') ->> 'content' AS popped_named,
       session_clear('sid-s3', user_id => 'sid') AS cleared_named;
SELECT current_setting('memory_ext.user_id') = '' AS tenant_not_left_set;
RESET ROLE;
