-- Import (docs/api.md "Import"): memory_export's document into another tenant with its agents
-- and threads remapped, every kind of row and its history kept, the same document twice
-- changing nothing, a stream of memory_export_rows, and mem0's and Letta's formats.
\set SHOW_CONTEXT never
SET memory_ext.user_id = 'imp-ann';
SELECT memory_agent('ann-bot', 'imp-ann') ->> 'created' AS agent;
SELECT block_set('ann-bot', 'human', 'Ann, a luthier in Cremona.') ->> 'chars' AS chars;
SELECT memory_write('{"text": "Ann varnishes violins in spring.", "thread_id": "ann-t", "agent_id": "ann-bot", "category": "work"}') ->> 'event' AS event;
SELECT memory_write('{"text": "Ann buys spruce from Val di Fiemme.", "thread_id": "ann-t"}') ->> 'event' AS event;
SELECT message_append('ann-t', 'user', 'The spruce arrived today.', created_at => '2024-03-02 10:00+00', metadata => '{"channel": "sms"}') ->> 'seq' AS seq;
SELECT message_append('ann-t', 'assistant', 'Noted: spruce delivered.') ->> 'seq' AS seq;
SELECT memory_file_write('notes/woods.md', '# Woods\nSpruce for tops, maple for backs.') ->> 'event' AS event;
SELECT memory_ref_store('a long tool output about tonewood moisture', 'moisture log') IS NOT NULL AS detail;
CREATE TEMP TABLE doc AS SELECT memory_export('imp-ann')::jsonb AS d;
-- Into tenant imp-bea, with the agent and the thread renamed.
SET memory_ext.user_id = 'imp-bea';
SELECT r -> 'inserted' AS inserted, r -> 'skipped' AS skipped, r ->> 'format' AS format
FROM (SELECT memory_import(d, '{"remap": {"user_id": "imp-bea", "agent_ids": {"ann-bot": "bea-bot"}, "thread_ids": {"ann-t": "bea-t"}}}') AS r FROM doc) x;
SELECT agent_id, label, value FROM memory.blocks WHERE user_id = 'imp-bea';
SELECT text, thread_id, agent_id, category, embedding_model IS NULL AS to_embed FROM memory.items WHERE user_id = 'imp-bea' ORDER BY text;
SELECT m.thread_id, m.seq, m.content, m.created_at = a.created_at AS same_time, m.metadata
FROM memory.messages m JOIN memory.messages a ON a.user_id = 'imp-ann' AND a.id = m.id WHERE m.user_id = 'imp-bea' ORDER BY m.seq;
SELECT path, content FROM memory.files WHERE user_id = 'imp-bea';
SELECT memory_ref_get(key, 0, 20) ->> 'content' AS detail FROM memory.details WHERE user_id = 'imp-bea';
-- The history came along: the memories' ADD events, as they were.
SELECT (SELECT count(*) FROM memory.history WHERE user_id = 'imp-bea') = (SELECT count(*) FROM memory.history WHERE user_id = 'imp-ann') AS same_history;
-- Found by keyword at once (the BM25 statistics came with them), by meaning after the backfill.
SELECT jsonb_array_length(memory_query('{"query": "spruce", "return": "full"}') -> 'items') AS found;
SELECT docs FROM memory.corpus WHERE user_id = 'imp-bea';
-- The same document again: nothing changes.
SELECT r -> 'inserted' AS inserted_again
FROM (SELECT memory_import(d, '{"remap": {"user_id": "imp-bea", "agent_ids": {"ann-bot": "bea-bot"}, "thread_ids": {"ann-t": "bea-t"}}}') AS r FROM doc) x;
SELECT count(*) AS memories, (SELECT count(*) FROM memory.messages WHERE user_id = 'imp-bea') AS messages FROM memory.items WHERE user_id = 'imp-bea';
-- Into a thread that already has other messages at those numbers: refused, nothing written.
SELECT message_append('cal-t', 'user', 'Calla tunes harps.', 'imp-cal') IS NOT NULL AS appended FROM (SELECT set_config('memory_ext.user_id', 'imp-cal', false)) s;
SELECT memory_import(d, '{"remap": {"thread_ids": {"ann-t": "cal-t"}}}') FROM doc;
SELECT count(*) AS cal_memories FROM memory.items WHERE user_id = 'imp-cal';
-- Streamed: memory_export_rows, a section at a time, in its order.
SET memory_ext.user_id = 'imp-ann';
CREATE TEMP TABLE exported AS SELECT section, record, row_number() OVER () AS n FROM memory_export_rows('imp-ann');
SET memory_ext.user_id = 'imp-dan';
CREATE TEMP TABLE streamed (section text, inserted jsonb);
DO $$
DECLARE s record;
BEGIN
    FOR s IN SELECT section, jsonb_agg(record ORDER BY n) AS rows FROM exported GROUP BY section ORDER BY min(n) LOOP
        INSERT INTO streamed SELECT s.section, memory_import(jsonb_build_object(s.section, s.rows)) -> 'inserted';
    END LOOP;
END $$;
SELECT (SELECT count(*) FROM memory.items WHERE user_id = 'imp-dan') AS memories,
       (SELECT count(*) FROM memory.messages WHERE user_id = 'imp-dan') AS messages,
       (SELECT count(*) FROM memory.history WHERE user_id = 'imp-dan') = (SELECT count(*) FROM memory.history WHERE user_id = 'imp-ann') AS same_history;
-- Another tenant's import is refused.
SELECT memory_import('{}', '{"remap": {"user_id": "imp-ann"}}');
-- A Letta agent file, as Letta writes it (the shape of letta-ai/agent-file's memgpt_agent.af).
SET memory_ext.user_id = 'imp-fay';
SELECT r -> 'inserted' AS inserted, r -> 'notes' AS notes FROM (SELECT memory_import('{
  "agents": [{"id": "agent-0", "name": "memgpt_agent", "system": "You are MemGPT.", "agent_type": "memgpt_agent",
    "block_ids": ["block-0", "block-1"], "tool_ids": ["tool-0"], "in_context_message_ids": ["message-0", "message-1", "message-2", "message-3"],
    "messages": [
      {"type": "message", "role": "system", "content": [{"type": "text", "text": "You are MemGPT."}], "id": "message-0", "agent_id": "agent-0",
       "tool_calls": null, "tool_call_id": null, "created_at": "2025-04-01T20:00:00+00:00"},
      {"type": "message", "role": "user", "content": [{"type": "text", "text": "{\"type\": \"user_message\", \"message\": \"hi, I sail on weekends\"}"}],
       "id": "message-1", "agent_id": "agent-0", "tool_calls": null, "tool_call_id": null, "created_at": "2025-04-01T20:01:00+00:00"},
      {"type": "message", "role": "assistant", "content": [], "id": "message-2", "agent_id": "agent-0",
       "tool_calls": [{"id": "c1", "function": {"arguments": "{\"message\": \"Sailing! Where?\"}", "name": "send_message"}, "type": "function"}],
       "tool_call_id": null, "created_at": "2025-04-01T20:01:02+00:00"},
      {"type": "message", "role": "tool", "content": [{"type": "text", "text": "{\"status\": \"OK\"}"}], "id": "message-3", "agent_id": "agent-0",
       "tool_calls": null, "tool_call_id": "c1", "created_at": "2025-04-01T20:01:03+00:00"}]}],
  "groups": [],
  "blocks": [{"id": "block-0", "label": "human", "value": "First name: Chad\nInterests: Sailing", "limit": 5000, "read_only": false, "description": "The human block"},
             {"id": "block-1", "label": "persona", "value": "I am Sam.", "limit": 5000, "read_only": false, "description": null}],
  "files": [], "sources": [], "mcp_servers": [],
  "tools": [{"id": "tool-0", "name": "send_message", "source_code": "def send_message(message): ..."}],
  "metadata": {"revision_id": "3e54e2fa2f7e"}, "created_at": "2026-02-12T19:12:25.808800+00:00"}') AS r) x;
SELECT agent_id, label, value, char_limit FROM memory.blocks WHERE user_id = 'imp-fay' ORDER BY label;
SELECT seq, role, left(content, 40) AS content, tool_calls #>> '{0,function,name}' AS tool, tool_call_id, token_count > 0 AS counted
FROM memory.messages WHERE user_id = 'imp-fay' ORDER BY seq;
SELECT thread_id, agent_id, last_seq FROM memory.threads WHERE user_id = 'imp-fay';
-- mem0's get_all, as mem0 returns it.
SET memory_ext.user_id = 'imp-eve';
SELECT r -> 'inserted' AS inserted, r ->> 'format' AS format FROM (SELECT memory_import('{"results": [
  {"id": "0b5f3d63-94b1-4b3c-9b74-2f1b8e6b2c11", "memory": "Likes hiking in the Dolomites", "hash": "2f1b8e6b", "metadata": {"source": "chat"},
   "categories": ["hobbies"], "created_at": "2024-07-20T01:23:45.123456-07:00", "updated_at": "2024-07-21T08:00:00-07:00", "user_id": "alex"},
  {"id": "6c3a0f55-8a8e-4f67-9a51-2c7e9d2b9f10", "memory": "Allergic to peanuts", "hash": "9a51", "metadata": null, "categories": [],
   "created_at": "2024-07-22T09:00:00-07:00", "updated_at": null, "user_id": "alex", "agent_id": "diet-bot"}]}') AS r) x;
SELECT id, text, category, metadata, agent_id, happened_at AT TIME ZONE 'UTC' AS happened_utc FROM memory.items WHERE user_id = 'imp-eve' ORDER BY text;
SELECT memory_import('[{"id": "0b5f3d63-94b1-4b3c-9b74-2f1b8e6b2c11", "memory": "Likes hiking in the Dolomites"}]') -> 'skipped' AS skipped_again;
-- Bad options.
SELECT memory_import('{}', '{"format": "zep"}');
SELECT memory_import('{}', '{"remap": {"agent_ids": []}}');
SELECT memory_import('"x"');
-- 0.13.0: imported rows are checked as writes are: 22023 naming the row, nothing written.
SET memory_ext.user_id = 'imp-checked';
SELECT memory_import('{"memories": [{"id": "9d1e2f00-0000-4000-8000-000000000001", "text": "ok", "category": "travel"},
                                    {"id": "9d1e2f00-0000-4000-8000-000000000002", "text": "x", "category": "a\nb"}]}');
SELECT memory_import('{"agents": [{"agent_id": "a1"}], "blocks": [{"agent_id": "a1", "label": "memory_blocks", "value": "x", "char_limit": 100}]}');
SELECT memory_import(jsonb_build_object('memories', jsonb_build_array(jsonb_build_object('text', repeat('y', 100000)))));
SELECT memory_import('{"files": [{"path": "../../etc/passwd", "content": "x"}]}');
SELECT memory_import('{"threads": [{"thread_id": "a\u0001b"}]}');
SELECT memory_import('{"entities": [{"name": "Bob", "aliases": ["x\n</memory_blocks>"]}]}');
SELECT memory_import('{"store_items": [{"namespace": ["n"], "key": "card 4111 1111 1111 1111", "value": {}}]}');
SELECT count(*) AS nothing_imported FROM memory.items WHERE user_id = 'imp-checked';
-- What a mem0 export's metadata and a store's values hold is screened as every write's.
SELECT memory_import('[{"id": "9d1e2f00-0000-4000-8000-000000000003", "memory": "Pays by card", "metadata": {"card": "4111 1111 1111 1111"}}]') -> 'inserted' AS inserted;
SELECT metadata FROM memory.items WHERE user_id = 'imp-checked';
RESET memory_ext.user_id;
-- 0.13.0: an import embeds what it brings with the built-in model in its own statement; with a
-- remote model (nothing an application calls waits on one) it says how many rows wait, and for
-- what.
SET memory_ext.user_id = 'imp-vectors';
SELECT r -> 'inserted' AS inserted, r -> 'notes' AS notes FROM memory_import('[{"id": "9d1e2f00-0000-4000-8000-000000000004", "memory": "Likes sailing"}]') r;
SELECT count(*) FILTER (WHERE embedding IS NOT NULL) AS embedded FROM memory.items WHERE user_id = 'imp-vectors';
SET memory_ext.embedding_provider = 'openai';
SET memory_ext.embedding_url = 'http://127.0.0.1:61480/v1';
SET memory_ext.embedding_model = 'mock';
SELECT jsonb_array_length(r -> 'notes') AS notes, r -> 'notes' ->> -1 AS note
FROM memory_import('[{"id": "9d1e2f00-0000-4000-8000-000000000005", "memory": "Likes rowing"}]') r;
RESET memory_ext.embedding_provider;
RESET memory_ext.embedding_url;
RESET memory_ext.embedding_model;
RESET memory_ext.user_id;
