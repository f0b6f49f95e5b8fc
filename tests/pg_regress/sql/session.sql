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
-- Bad items: 22023 naming the item, nothing added.
SELECT session_add_items('sid-s1', '[{"role": "user", "content": "ok"}, {"role": "robot", "content": "x"}]');
\echo :LAST_ERROR_SQLSTATE
SELECT session_add_items('sid-s1', '{"role": "user"}');
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
RESET ROLE;
