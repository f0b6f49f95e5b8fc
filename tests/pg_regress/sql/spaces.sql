-- Spaces (docs/api.md "Spaces"): memories a team shares, reached through grants that row-level
-- security enforces; a revoke counts from the member's next statement.
\set SHOW_CONTEXT never
SET ROLE regress_memory_user;

-- A tenant's own rows are admitted by tenant_isolation's comparison before any space function
-- is called (sql/security.sql says why the policies' names matter).
SET memory_ext.user_id = 'ann';
CREATE FUNCTION pg_temp.own_rows_first() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXPLAIN (COSTS OFF) SELECT label FROM memory.blocks WHERE user_id = 'ann' AND value = 'x' LOOP
        IF l LIKE '%Filter:%' THEN
            RETURN strpos(l, 'memory.current_tenant()') BETWEEN 1 AND strpos(l, 'memory.space_');
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
SELECT pg_temp.own_rows_first();

-- Ann creates the support team's space and is its admin.
SET memory_ext.user_id = 'ann';
SELECT memory_space_create('support') ->> 'name' AS space;
SELECT memory_space_create('support');                        -- 42710: the name is taken
SELECT memory_space_create('a:b');                            -- 22023: no colon in a name
SELECT g ->> 'space' AS space, g ->> 'grantee' AS grantee, g ->> 'access' AS access
FROM jsonb_array_elements(memory_grants()) g;

-- Ann writes the team's policy into the space, and a note of her own.
SELECT memory_write('{"text": "Refunds over 500 euros need a manager''s approval.", "category": "policy", "space": "support"}') ->> 'event' AS written;
SELECT memory_write('{"text": "Salaries are reviewed every March.", "category": "hr", "space": "support"}') ->> 'event' AS written;
SELECT memory_write('{"text": "Ann prefers refunds by bank transfer."}') ->> 'event' AS written;
-- History names who wrote into the space (setting mode: the member after the role).
RESET ROLE;
SELECT event, actor FROM memory.history WHERE user_id = 'space:support' AND entity = 'item' ORDER BY ts;
SET ROLE regress_memory_user;

-- Bob is no member yet: he sees nothing of the space, and may not write or grant into it.
SET memory_ext.user_id = 'bob';
SELECT count(*) AS seen FROM memory.items WHERE user_id = 'space:support';
SELECT jsonb_array_length(memory_query('{"query": "refunds approval"}') -> 'items') AS found;
SELECT memory_write('{"text": "x", "space": "support"}');     -- 42501: not granted
SELECT memory_grant('support', 'bob', 'admin');               -- 42501: not its admin
SET memory_ext.user_id = 'space:support';                     -- a space is not claimed
SELECT memory_query('{"query": "refunds"}');                  -- 42501
SET memory_ext.user_id = 'bob';

-- Ann grants Bob read: he finds the policy, labelled with its space, in one ranking with his own.
SET memory_ext.user_id = 'ann';
SELECT memory_grant('support', 'bob') ->> 'access' AS access;
SET memory_ext.user_id = 'bob';
SELECT memory_write('{"text": "Bob handles refunds for the Lisbon store."}') ->> 'event' AS written;
SELECT i ->> 'space' AS space, i ->> 'category' AS category
FROM jsonb_array_elements(memory_query('{"query": "who approves refunds over 500 euros", "top_k": 3}') -> 'items') i
ORDER BY 1 NULLS FIRST, 2;
-- "spaces": [] reads his own memories only; a space not granted is 42501.
SELECT count(*) FILTER (WHERE i ? 'space') AS from_spaces
FROM jsonb_array_elements(memory_query('{"query": "refunds", "spaces": []}') -> 'items') i;
SELECT memory_query('{"query": "refunds", "spaces": ["sales"]}');  -- 42501
-- memory_context reads the space too.
SELECT memory_agent('helper', 'bob') IS NOT NULL AS agent;
SELECT memory_context('helper', 't1', 'refund approval', 2000) LIKE '%manager''s approval%' AS in_context;
-- Read-only: no write into the space, by the API or by plain SQL.
SELECT memory_write('{"text": "Refunds need no approval.", "space": "support"}');  -- 42501
UPDATE memory.items SET text = 'tampered' WHERE user_id = 'space:support';
SELECT count(*) AS tampered FROM memory.items WHERE text = 'tampered';

-- Write access: Bob adds to the space; history names him.
SET memory_ext.user_id = 'ann';
SELECT memory_grant('support', 'bob', 'write') ->> 'access' AS access;
SET memory_ext.user_id = 'bob';
SELECT memory_write('{"text": "Refunds are paid within 14 days.", "category": "policy", "space": "support"}') ->> 'event' AS written;
RESET ROLE;
SELECT actor FROM memory.history WHERE user_id = 'space:support' AND entity = 'item' AND new_ref LIKE '%14 days%';
SET ROLE regress_memory_user;

-- A revoke counts from Bob's next statement, inside his open transaction.
SET memory_ext.user_id = 'bob';
BEGIN;
SELECT count(*) AS before_revoke FROM memory.items WHERE user_id = 'space:support';
SELECT memory_revoke('support', 'bob') ->> 'revoked' AS left_space;  -- a member may leave (rolled back)
SELECT memory_revoke('support', 'ann');                       -- 42501: only the admin changes others' grants
ROLLBACK;
BEGIN;
SELECT count(*) AS before_revoke FROM memory.items WHERE user_id = 'space:support';
SET LOCAL memory_ext.user_id = 'ann';
SELECT memory_revoke('support', 'bob') ->> 'revoked' AS revoked;
SET LOCAL memory_ext.user_id = 'bob';
SELECT count(*) AS after_revoke FROM memory.items WHERE user_id = 'space:support';
COMMIT;
SELECT memory_write('{"text": "y", "space": "support"}');     -- 42501

-- A grant limited to categories shows only those memories, and nothing else of the space.
SET memory_ext.user_id = 'ann';
SELECT memory_grant('support', 'cleo', 'read', categories => ARRAY['Policy']) -> 'categories' AS categories;
SET memory_ext.user_id = 'cleo';
SELECT category, count(*) FROM memory.items WHERE user_id = 'space:support' GROUP BY 1 ORDER BY 1;
-- Asked for the other category's words: keyword candidates are read through the full-text
-- index as the owner, then through the policies (sql/queries/search_memories_lexical.sql), so
-- the memory cleo may not read stays out of the answer.
SELECT count(*) AS found, count(*) FILTER (WHERE i::text ILIKE '%salaries%') AS salaries
FROM jsonb_array_elements(memory_query('{"query": "salaries reviewed every March", "return": "full"}') -> 'items') i;

-- A grant limited to an agent: only that agent of the member reads through it.
SET memory_ext.user_id = 'ann';
SELECT memory_grant('support', 'dan', 'read', agent => 'support-bot') ->> 'agent' AS agent;
SET memory_ext.user_id = 'dan';
SELECT jsonb_array_length(memory_query('{"query": "refunds approval", "agent": "support-bot"}') -> 'items') > 0 AS bot_reads;
SELECT jsonb_array_length(memory_query('{"query": "refunds approval", "agent": "sales-bot"}') -> 'items') AS other_agent_reads;
SELECT count(*) AS plain_sql_reads FROM memory.items WHERE user_id = 'space:support';

-- The admin sees every grant of the space; a member its own.
SET memory_ext.user_id = 'ann';
SELECT g ->> 'grantee' AS grantee, g ->> 'access' AS access, g ->> 'agent' AS agent, g -> 'categories' AS categories
FROM jsonb_array_elements(memory_grants()) g;
SET memory_ext.user_id = 'cleo';
SELECT g ->> 'grantee' AS grantee FROM jsonb_array_elements(memory_grants()) g;
-- A space keeps an admin; a member may leave.
SET memory_ext.user_id = 'ann';
SELECT memory_revoke('support', 'ann');                       -- 42501: the last admin
SET memory_ext.user_id = 'cleo';
SELECT memory_revoke('support', 'cleo') ->> 'revoked' AS left_space;
-- Hostile and bad input.
SET memory_ext.user_id = 'ann';
SELECT memory_grant('support', 'eve', 'owner');               -- 22023
SELECT memory_grant('support', 'space:support', 'read');      -- 22023
SELECT memory_grant(NULL, 'eve');                             -- 22004
SELECT memory_grant('support', 'eve', 'read', categories => ARRAY[]::text[]);  -- 22023
SELECT memory_query('{"query": "x", "spaces": "support"}');   -- 22023

-- Role mode: the member is the role.
RESET ROLE;
CREATE ROLE regress_space_fay;
CREATE ROLE regress_space_gil;
GRANT regress_space_fay, regress_space_gil TO regress_memory_user;
SET memory_ext.tenant_source = 'role';
SET ROLE regress_space_fay;
SELECT memory_space_create('fay-team') ->> 'name' AS space;
SELECT memory_write('{"text": "The deploy window is Tuesday morning.", "space": "fay-team"}') ->> 'event' AS written;
SELECT memory_grant('fay-team', 'regress_space_gil', 'read') ->> 'grantee' AS grantee;
SET ROLE regress_space_gil;
SELECT i ->> 'space' AS space FROM jsonb_array_elements(memory_query('{"query": "deploy window"}') -> 'items') i;
SELECT memory_write('{"text": "z", "space": "fay-team"}');    -- 42501
RESET ROLE;
SELECT actor FROM memory.history WHERE user_id = 'space:fay-team' AND entity = 'item';
RESET memory_ext.tenant_source;

-- Erasing a member removes its grants and its own rows, not the space's.
SELECT count(*) AS dan_grants FROM memory.grants WHERE user_id = 'dan';
SELECT memory_erase_tenant('dan', 'test') IS NOT NULL AS erased;
SELECT count(*) AS dan_grants FROM memory.grants WHERE user_id = 'dan';
SELECT count(*) AS space_memories FROM memory.items WHERE user_id = 'space:support';
RESET ROLE;
DROP OWNED BY regress_space_fay, regress_space_gil;
DROP ROLE regress_space_fay, regress_space_gil;

-- Shared blocks: a block of a space attached to members' agents (block_attach). One edit is
-- seen by every attached agent and keeps one version line; a member with read sees it
-- read-only; a revoke takes it out of the member's prompt.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'ann';
SELECT memory_space_create('ops') ->> 'name' AS space;
SELECT memory_agent('ops-team', 'space:ops') ->> 'user_id' AS space_agent;
SELECT block_set('ops-team', 'runbook', 'Page the on-call engineer for outages.') ->> 'version' AS version;
SELECT memory_grant('ops', 'hal', 'write') ->> 'access' AS access;
SELECT memory_grant('ops', 'ivy', 'read') ->> 'access' AS access;
SET memory_ext.user_id = 'hal';
SELECT memory_agent('hal-bot', 'hal') ->> 'created' AS created;
SELECT r ->> 'label' AS label, r ->> 'space' AS space, r ->> 'read_only' AS read_only
FROM block_attach('hal-bot', (SELECT id FROM memory.blocks WHERE user_id = 'space:ops' AND label = 'runbook')) r;
SET memory_ext.user_id = 'ivy';
SELECT memory_agent('ivy-bot', 'ivy') ->> 'created' AS created;
SELECT r ->> 'read_only' AS read_only
FROM block_attach('ivy-bot', (SELECT id FROM memory.blocks WHERE user_id = 'space:ops' AND label = 'runbook')) r;
SELECT block_append('ivy-bot', 'runbook', 'Ivy was here.');      -- 42501: read-only for Ivy
-- Hal edits through his agent: the space's block changes, once.
SET memory_ext.user_id = 'hal';
SELECT block_append('hal-bot', 'runbook', 'Escalate after 15 minutes.') ->> 'version' AS version;
SELECT compile_blocks('hal-bot') ->> 'text' LIKE '%Escalate after 15 minutes.%' AS hal_sees;
SET memory_ext.user_id = 'ivy';
SELECT compile_blocks('ivy-bot') ->> 'text' LIKE '%Escalate after 15 minutes.%' AS ivy_sees;
SELECT compile_core_blocks('ivy-bot') LIKE '%read_only=true%' AS ivy_read_only;
SET memory_ext.user_id = 'ann';
SELECT block_append('ops-team', 'runbook', 'Ann checked this.') ->> 'version' AS version;
RESET ROLE;
SELECT event, actor FROM memory.history WHERE user_id = 'space:ops' AND entity = 'block' ORDER BY ts;
SELECT count(*) AS copies FROM memory.blocks WHERE label = 'runbook';
SET ROLE regress_memory_user;
-- Bad attachments: an unknown block, a block already the agent's, a label it already has.
SET memory_ext.user_id = 'hal';
SELECT block_attach('hal-bot', '00000000-0000-0000-0000-000000000000');  -- P0002
SELECT block_attach('hal-bot', (SELECT id FROM memory.blocks WHERE user_id = 'hal' AND label = 'human'));  -- 22023
SELECT block_set('hal-bot', 'runbook2', 'x') IS NOT NULL AS own_block;
SELECT block_attach('ivy-bot', (SELECT id FROM memory.blocks WHERE user_id = 'hal' AND label = 'runbook2'));  -- P0002: not Hal's agent
-- A block of one's own, shared between two of one's agents.
SELECT memory_agent('hal-helper', 'hal') ->> 'created' AS created;
SELECT r ->> 'label' AS label, r ->> 'space' AS space
FROM block_attach('hal-helper', (SELECT id FROM memory.blocks WHERE user_id = 'hal' AND agent_id = 'hal-bot' AND label = 'runbook2')) r;
SELECT block_replace('hal-helper', 'runbook2', 'x', 'shared within Hal') ->> 'value' AS value;
SELECT compile_blocks('hal-bot') ->> 'text' LIKE '%shared within Hal%' AS own_agent_sees;
-- Revoked: the space's block leaves Ivy's prompt at her next statement; detached: Hal's.
SET memory_ext.user_id = 'ann';
SELECT memory_revoke('ops', 'ivy') ->> 'revoked' AS revoked;
SET memory_ext.user_id = 'ivy';
SELECT compile_blocks('ivy-bot') ->> 'text' LIKE '%runbook%' AS ivy_still_sees;
SET memory_ext.user_id = 'hal';
SELECT block_detach('hal-bot', (SELECT id FROM memory.blocks WHERE user_id = 'space:ops' AND label = 'runbook')) ->> 'detached' AS detached;
SELECT compile_blocks('hal-bot') ->> 'text' LIKE '%Escalate%' AS hal_still_sees;
RESET ROLE;

-- The change feed of a member holds its spaces' changes too, each naming its space, and a tag
-- per space to filter notifications by.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'hal';
CREATE FUNCTION pg_temp.feed(want int) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE r jsonb;
BEGIN
    FOR i IN 1..200 LOOP
        r := memory_changes(NULL, 1000);
        EXIT WHEN jsonb_array_length(r->'changes') >= want;
        PERFORM pg_sleep(0.05);
    END LOOP;
    RETURN r;
END $$;
SELECT c ->> 'space' AS space, c ->> 'entity' AS entity, count(*)
FROM jsonb_array_elements(pg_temp.feed(11) -> 'changes') c GROUP BY 1, 2 ORDER BY 1 NULLS FIRST, 2;
SELECT jsonb_array_length(memory_changes() -> 'tags') AS tags;
RESET ROLE;

-- The agent's archival_search tool reads the spaces too, each result naming its space.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'ann';
SELECT memory_write('{"text": "The ops on-call rotation changes every Monday.", "space": "ops"}') ->> 'event' AS written;
SET memory_ext.user_id = 'hal';
SELECT (memory_tool_call('hal-bot', NULL, 'archival_search', '{"query": "on-call rotation"}') ->> 'content') LIKE '%every Monday. (space: ops)%' AS names_its_space;
RESET ROLE;

-- A space's conversation: a member with write starts it; his agent's conversation_search tool
-- finds it beside his own conversations, in one ranking, each line of the space naming it; a
-- member with read searches the space's thread by its id and may not write to it.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'hal';
SELECT message_append('ops-standup', 'user', 'The database failover drill is on Thursday.', user_id => 'space:ops') ->> 'seq' AS seq;
SELECT message_append('hal-notes', 'user', 'I sent the slides for the failover drill.') ->> 'seq' AS seq;
SELECT regexp_replace(line, '^- \[[^]]*\]', '- [when]') AS line FROM regexp_split_to_table(memory_tool_call('hal-bot', NULL, 'conversation_search', '{"query": "failover drill"}') ->> 'content', E'\n') line
WHERE line LIKE '%failover%' ORDER BY line LIKE '%(space: ops)' DESC;
SET memory_ext.user_id = 'ann';
SELECT memory_grant('ops', 'jon', 'read') ->> 'access' AS access;
SET memory_ext.user_id = 'jon';
SELECT content FROM conversation_search('ops-standup', 'failover drill');
SELECT message_append('ops-standup', 'user', 'Jon was here.');  -- 42501: read-only
SELECT message_append('ops-other', 'user', 'x', user_id => 'space:ops');  -- 42501: read-only
-- Supersede within a space: the newer memory replaces the older for every member.
SET memory_ext.user_id = 'hal';
SELECT memory_write(jsonb_build_object('text', 'The ops on-call rotation changes every Friday.', 'space', 'ops',
       'supersedes', (SELECT id FROM memory.items WHERE user_id = 'space:ops' AND text LIKE '%every Monday%'))) ? 'superseded' AS superseded;
SET memory_ext.user_id = 'jon';
SELECT i ->> 'space' AS space, i ->> 'text' LIKE '%every Friday%' AS newest
FROM jsonb_array_elements(memory_query('{"query": "when does the on-call rotation change", "top_k": 1}') -> 'items') i;
RESET ROLE;

-- memory.query_plan explains what memory_query runs: with a space granted, one search over the
-- caller and the space (the owners as an array), and without the space the caller alone.
SET ROLE regress_memory_user;
SET memory_ext.user_id = 'jon';
SELECT memory.query_plan('{"query": "on-call rotation"}') ~ 'user_id = ANY' AS across_owners,
       memory.query_plan('{"query": "on-call rotation", "spaces": []}') ~ 'user_id = ANY' AS spaces_none;
RESET ROLE;
