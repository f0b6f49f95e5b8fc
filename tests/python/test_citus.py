"""memory_ext on a real Citus cluster (docs/citus.md): a coordinator and two workers on
127.0.0.1, every table distributed by memory_citus_distribute(), everything called through the
coordinator as ordinary roles, the way an application would.

Run by `scripts/test.sh citus`, which starts the cluster and distributes:
    MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=<coordinator> user=postgres dbname=postgres" \
    MEMORY_EXT_CITUS_DIR=<the cluster's directory> python3 tests/python/test_citus.py

What is checked: every tenant table is distributed and colocated; rows written before
distributing move into the shards and answer as before; every API function answers
through the coordinator for a tenant set by a session `SET`; tenants stay apart (real roles,
role mode included); a call without a tenant is an error, not an empty answer; single-tenant
calls touch one worker and one shard group; vector search uses the HNSW index of the tenant's
shard; the backfill reaches every tenant, and backfills running at once do not deadlock; a purge keeps the term statistics; a third worker added and
rebalanced keeps every tenant's rows; a worker killed under a writer loses no
acknowledged write, the coordinator names the lost node meanwhile, and the other worker's
tenants go on; the *_for forms run wholly on the tenant's worker, one statement from the
coordinator, and keep that worker's backend bounded.
"""

import os
import re
import subprocess
import sys
import threading
import time
import uuid

import psycopg
from pgtest import connect_as, ordinary_role, run_tests
from psycopg import errors, sql
from psycopg.types.json import Jsonb

DSN = os.environ.get("MEMORY_EXT_TEST_DSN")
CLUSTER = os.environ.get("MEMORY_EXT_CITUS_DIR")
ROLE = "me_citus"
PG_CTL = os.path.join(os.environ.get("MEMORY_EXT_PGBIN", "/usr/lib/postgresql/15/bin"), "pg_ctl")


def admin():
    return psycopg.connect(DSN, autocommit=True)


def tenant(prefix="ct"):
    user = f"{prefix}-{uuid.uuid4().hex[:10]}"
    return connect_as(DSN, ROLE, user), user


def write(c, **req):
    return c.execute("SELECT memory_write(%s)", (Jsonb(req),)).fetchone()[0]


def query(c, **req):
    return c.execute("SELECT memory_query(%s)", (Jsonb(req),)).fetchone()[0]


def one(c, sql, args=()):
    return c.execute(sql, args).fetchone()[0]


def test_every_tenant_table_is_distributed_and_colocated():
    with admin() as a:
        missing = a.execute(
            """SELECT c.relname FROM pg_class c
               WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                 AND EXISTS (SELECT 1 FROM pg_attribute t WHERE t.attrelid = c.oid AND t.attname = 'user_id')
                 AND NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = c.oid)
                 -- Grants are a reference table (sql/queries/citus_reference.sql).
                 AND c.relname <> 'grants'"""
        ).fetchall()
        assert missing == [], missing
        groups = a.execute(
            """SELECT count(DISTINCT colocationid) FROM pg_dist_partition
               WHERE partmethod = 'h' AND logicalrelid::text LIKE 'memory.%'"""
        ).fetchone()[0]
        assert groups == 1, groups
        kind = one(a, "SELECT partmethod FROM pg_dist_partition WHERE logicalrelid = 'memory.embedding_models'::regclass")
        assert kind == "n", kind  # a reference table
        # Run again: nothing left to do, and the model is still registered.
        again = one(a, "SELECT memory_citus_distribute()")
        assert again["distributed"] == [] and again["reference"] == [], again
        assert again["model"], again
        # Not the tenants' to call.
        ordinary_role(DSN, ROLE)
    with psycopg.connect(DSN + f" user={ROLE}", autocommit=True) as c:
        try:
            c.execute("SELECT memory_citus_distribute()")
            raise AssertionError("an ordinary role distributed the tables")
        except errors.InsufficientPrivilege:
            pass


def test_rows_written_before_distributing_move_into_the_shards():
    # scripts/test.sh wrote tests/data/citus_before.sql on the coordinator before distributing.
    c = connect_as(DSN, ROLE, "citus-before")
    try:
        found = query(c, query="what does Ana like to drink?", top_k=1, **{"return": "bullets"})
        assert "green tea" in found["items"][0]["text"], found
        assert "Lisbon" in one(c, "SELECT compile_core_blocks('before-agent')")
        assert one(c, "SELECT memory_file_read('notes/porto.md') ->> 'content'") == "Porto in May: book the train."
        assert one(c, "SELECT checkpoint_load('citus-before', 'before-thread')") == {"step": 3}
        # They go on as any tenant's: a new memory chains after the old ones of the thread.
        assert write(c, text="Ana booked the train to Porto.", thread_id="before-thread")["event"] == "created"
    finally:
        c.close()
    with admin() as a:
        # The rows are in the shards, and the coordinator keeps no copy of them (pg_dump of the
        # coordinator would otherwise carry stale rows): every distributed table's own storage
        # on the coordinator is empty.
        left = a.execute(
            """SELECT p.logicalrelid::text FROM pg_dist_partition p
               WHERE p.logicalrelid::text LIKE 'memory.%' AND pg_relation_size(p.logicalrelid) > 0"""
        ).fetchall()
        assert left == [], left
        assert one(a, "SELECT count(*) FROM memory.items WHERE user_id = 'citus-before'") >= 3
        assert one(a, "SELECT count(*) FROM memory.messages WHERE user_id = 'citus-before' AND thread_id = 'before-thread'") == 2


def test_every_api_function_answers_through_the_coordinator():
    c, user = tenant()
    with c:
        assert write(c, text="Carol lives in Oslo.", thread_id="c1")["event"] == "created"
        c.execute("SELECT message_append('c1', 'user', %s, name => 'Carol')",
                  ("I work at Acme. Please remember that my passport expires in March. I live in Bergen.",))
        c.execute("SELECT message_append('c1', 'assistant', 'Noted.')")
        # The worker may extract the thread at the same moment: what counts is that its facts
        # are memories afterwards, whichever of the two wrote them.
        one(c, "SELECT memory_extract('c1')")
        with admin() as a:
            extracted = one(a, "SELECT count(*) FROM memory.items WHERE user_id = %s AND thread_id = 'c1' "
                               "AND text <> 'Carol lives in Oslo.'", (user,))
        assert extracted >= 2, extracted
        proposals = c.execute("SELECT id, category FROM memory_proposals()").fetchall()
        assert [p[1] for p in proposals] == ["city"], proposals
        assert one(c, "SELECT memory_approve(%s)", (proposals[0][0],))["status"] == "approved"
        proposed = write(c, text="Carol is called Caz.", category="preferred_name", source="inferred")
        assert proposed["event"] == "proposed", proposed
        assert one(c, "SELECT memory_reject(%s)", (proposed["proposal_id"],))["status"] == "rejected"
        # 0.13.0: each answer checked for what it says, not only that there is one.
        assert one(c, "SELECT run_end('c1')")["thread_id"] == "c1"
        episode = one(c, "SELECT episode_write(NULL, 'c1')")
        assert episode["path"].startswith("episodes/") and episode["event"] == "created", episode
        assert "Acme" in episode["content"], episode
        top = query(c, query="Which city is Carol's home?", top_k=3)["items"][0]["text"]
        assert "Bergen" in top, top
        assert one(c, "SELECT text FROM memory_search('passport') LIMIT 1") == "Carol's passport expires in March."
        mid = one(c, "SELECT id FROM memory_search('Oslo') LIMIT 1")
        assert one(c, "SELECT memory_forget(%s)", (mid,))["event"] == "soft_deleted"
        assert one(c, "SELECT memory_restore(%s)", (mid,))["event"] == "restored"
        assert len(one(c, "SELECT memory_history(%s)", (mid,))) >= 1
        assert one(c, "SELECT memory_file_write('notes/a.md', 'Hello world')")["event"] == "created"
        assert one(c, "SELECT memory_file_read('notes/a.md')")["content"] == "Hello world"
        assert one(c, "SELECT memory_file_edit('notes/a.md', 'world', 'there')")["event"] == "updated"
        for sql in ["SELECT path FROM memory_file_ls('notes/')", "SELECT path FROM memory_file_grep('there')",
                    "SELECT path FROM memory_file_search('there')"]:
            assert one(c, sql) == "notes/a.md", sql
        assert one(c, "SELECT text FROM memory_file_grep('there')") == "Hello there"
        assert one(c, "SELECT memory_export(NULL)")["memories"], "export"
        assert one(c, "SELECT count(*) FROM memory_export_rows()") > 10
        overview = one(c, "SELECT memory_overview()")
        assert overview["memories"]["total"] >= 3 and len(overview["memories"]["per_day"]) == 30, overview["memories"]
        assert [t["thread_id"] for t in overview["threads"]] == ["c1"], overview["threads"]
        # 0.12.0's functions through the coordinator: entities, dates across threads, detail
        # search, the in-context set, memory files in recall.
        names = [r[0] for r in c.execute("SELECT name FROM memory_entities()").fetchall()]
        assert "Carol" in names and "Oslo" in names, names
        about = query(c, query="where does she live?", entity="Carol")["items"]
        assert about and all("Carol" in i["text"] for i in about), about
        assert one(c, "SELECT count(*) FROM conversation_search_date(current_date, current_date)") >= 2
        assert one(c, "SELECT memory_ref_store('a log', 'ci build log', thread_id => 'c1')")["key"] == "ci_build_log"
        assert one(c, "SELECT key FROM memory_ref_search('build log', thread_id => 'c1')") == "ci_build_log"
        ids = [r[0] for r in c.execute("SELECT id FROM context_messages('c1')").fetchall()]
        assert one(c, "SELECT set_message_ids('c1', %s::uuid[])", (ids[-1:],))["in_context"] == 1
        assert one(c, "SELECT message_pin('c1', %s)", (ids[0],))["pinned"] is True
        assert one(c, "SELECT compact_thread('c1', before_seq => 100)")["summarized"] >= 1
        assert one(c, "SELECT checkpoint_save(NULL, 'c1', '{\"a\": 1}')")["thread_id"] == "c1"
        assert one(c, "SELECT checkpoint_load(NULL, 'c1')") == {"a": 1}
        delta = one(c, "SELECT memory_delta('c1', 0)")
        assert delta.startswith("Memory updates since rev 0:\n- +") and delta.count("\n- ") <= 3, delta
        assert "I work at Acme" in one(c, "SELECT content FROM conversation_search('c1', 'Acme') LIMIT 1")
        c.execute("SELECT memory_agent('agent-c', NULL, 'I am helpful.', 'Carol.')")
        assert "[file] notes/a.md" in one(c, "SELECT memory_context('agent-c', 'c1', 'hello there', 4000)")
        c.execute("SELECT block_append('agent-c', 'human', 'Carol likes tea.')")
        assert "Carol likes tea." in one(c, "SELECT compile_core_blocks('agent-c', now())")
        assert "Bergen" in one(c, "SELECT memory_context('agent-c', 'c1', 'where does Carol live', 500)")
        assert one(c, "SELECT memory_tools('agent-c', 'openai', NULL)")
        called = one(c, "SELECT memory_tool_call('agent-c', 'c1', 'archival_memory_search', '{\"query\": \"Oslo\"}')")
        assert "Bergen" in str(called), called  # Oslo was superseded by what Carol said
        usage = one(c, "SELECT context_usage('c1', 1000, 'agent-c')")
        assert usage["context_window"] == 1000 and usage["blocks_tokens"] > 0 and usage["total_tokens"] > 0, usage
        compacted = one(c, "SELECT compact_thread('c1')")
        assert compacted["summarized"] >= 0 and "kept" in compacted, compacted
        assert one(c, "SELECT memory_configure('{\"categories\": [{\"name\": \"health\"}]}')")["categories"] == 1
        key = one(c, "SELECT memory_ref_store(repeat('x', 5000), 'big output')")["key"]
        got = one(c, "SELECT memory_ref_get(%s)", (key,))
        assert got["total"] == 5000 and got["content"] == "x" * 4000 and got["next_offset"] == 4000, got
        captured = one(c, "SELECT memory_capture('ls', repeat('line of output ', 2000))")
        assert captured.startswith("Command 'ls' executed.") and "[MemoryRef: cmd_ls" in captured, captured
        assert one(c, "SELECT memory_rollup()") == {"projects": []}
        assert one(c, "SELECT memory_consolidate()")["errors"] == 0
        assert one(c, "SELECT memory_ttl_sweep()") == 0
        assert one(c, "SELECT memory_purge()") == 0
        c.execute("SELECT session_add_items('s1', '[{\"role\": \"user\", \"content\": \"hi\"}]')")
        assert one(c, "SELECT session_pop_item('s1')") == {"role": "user", "content": "hi"}
        batch = one(c, "SELECT memory_write_batch('[{\"text\": \"Carol owns a red bike.\"}, {\"text\": \"Carol plays chess.\"}]')")
        assert len(batch) == 2, batch
        # The rest of the API, each once.
        assert one(c, "SELECT block_set('agent-c', 'project', 'Citus tests', 'What we work on.')")["label"] == "project"
        c.execute("SELECT block_replace('agent-c', 'project', 'Citus', 'Cluster')")
        c.execute("SELECT block_insert('agent-c', 'project', 'On three nodes', 1)")
        assert "Cluster tests" in one(c, "SELECT compile_blocks('agent-c')")["text"]
        assert one(c, "SELECT count_tokens('hello world')") == 2
        assert one(c, "SELECT vector_dims(memory_embed('hello'))") == 384
        assert one(c, "SELECT count(*) FROM memory_embed_batch(ARRAY['a', 'b'])") == 2
        assert one(c, "SELECT needs_compaction('c1', 100000)") is False
        assert one(c, "SELECT needs_compaction('c1', 10)") is True
        assert len(c.execute("SELECT * FROM context_messages('c1')").fetchall()) >= 1
        assert len(one(c, "SELECT memory_prompt('agent-c')")) > 100
        # 0.13.0: relations between entities, the tools that reach and fix memory, file edits
        # under the agent's allowlist.
        c.execute("SELECT memory_write('{\"text\": \"Robert is Carol''s brother.\"}')")
        r = one(c, "SELECT memory_tool_call('agent-c', 'c1', 'memory_entity', '{\"name\": \"Robert\"}')")
        assert "- Robert: brother of Carol" in r["content"], r
        r = one(c, "SELECT memory_tool_call('agent-c', 'c1', 'memory_forget', '{\"memory\": \"Carol plays chess.\"}')")
        assert r["content"].startswith("Forgotten"), r
        assert one(c, "SELECT memory_file_allowlist('agent-c', ARRAY['episodes'])")["paths"] == ["episodes/"]
        r = one(c, "SELECT memory_tool_call('agent-c', 'c1', 'memory_file_write', "
                   "'{\"path\": \"episodes/2024-05-01/x.md\", \"content\": \"# X\\nOn the cluster.\"}')")
        assert not r["is_error"], r
        assert one(c, "SELECT memory_tool_allowlist('agent-c', ARRAY['archival_memory_search'])")["tools"] == \
            ["archival_memory_search"]
        c.execute("SELECT session_add_items('s2', '[{\"role\": \"user\", \"content\": \"hi\"}]')")
        assert len(one(c, "SELECT session_get_items('s2')")) == 1
        c.execute("SELECT session_clear('s2')")
        assert one(c, "SELECT memory_file_delete('notes/a.md')") is True
        assert one(c, "SELECT memory_file_delete('notes/a.md')") is False


def test_tenants_stay_apart_with_real_roles():
    a, ua = tenant("ca")
    b, ub = tenant("cb")
    with a, b:
        mid = write(a, text="Ann keeps her savings in a blue tin.")["id"]
        # B sees nothing of A's, by query, by id or by naming A.
        assert query(b, query="where are the savings kept")["items"] == []
        try:
            b.execute("SELECT memory_forget(%s)", (mid,))
            raise AssertionError("B forgot A's memory")
        except errors.NoDataFound:
            pass
        try:
            b.execute("SELECT * FROM memory_search('savings', %s)", (ua,))
            raise AssertionError("B read A's memories by naming A")
        except errors.InsufficientPrivilege:
            pass
        try:
            write(b, text="planted", user_id=ua)
            raise AssertionError("B wrote as A")
        except errors.InsufficientPrivilege:
            pass
        # Plain SQL on the tables, with the tenant sent to the workers (docs/citus.md):
        # each sees its own rows only.
        b.execute("BEGIN")
        b.execute("SET LOCAL citus.propagate_set_commands = 'local'")
        b.execute(sql.SQL("SET LOCAL memory_ext.user_id = {}").format(sql.Literal(ub)))
        seen = b.execute("SELECT count(*) FROM memory.items WHERE text LIKE '%%blue tin%%'").fetchone()[0]
        b.execute("COMMIT")
        assert seen == 0, seen
    # Role mode: the role's name is the tenant on every node, and nobody else may claim it.
    role = "me_citus_role"
    ordinary_role(DSN, role)
    with admin() as ad:
        ad.execute(f"ALTER ROLE {role} SET memory_ext.tenant_source = 'role'")
    with psycopg.connect(DSN + f" user={role}", autocommit=True) as r:
        row = uuid.uuid4().int % 90 + 10
        assert write(r, text=f"Rolf prefers window seats, row {row}.")["event"] == "created"
        assert one(r, "SELECT count(*) FROM memory.items") >= 1  # plain SQL works in role mode
        top = query(r, query="which seat does Rolf like")["items"][0]["text"]
        assert f"window seats, row {row}" in top, top
    other, _ = tenant("cx")
    with other:
        other.execute("SELECT set_config('memory_ext.user_id', %s, false)", (role,))
        try:
            query(other, query="which seat does Rolf like")
            raise AssertionError("another role claimed a role-mode tenant")
        except errors.InsufficientPrivilege:
            pass


def test_a_call_without_a_tenant_is_an_error_not_an_empty_answer():
    ordinary_role(DSN, ROLE)
    with psycopg.connect(DSN + f" user={ROLE}", autocommit=True) as c:
        for sql, args in [("SELECT memory_query(%s)", (Jsonb({"query": "anything"}),)),
                          ("SELECT memory_write(%s)", (Jsonb({"text": "orphan"}),)),
                          ("SELECT * FROM memory_search('anything')", ()),
                          ("SELECT * FROM memory_proposals()", ())]:
            try:
                c.execute(sql, args).fetchall()
                raise AssertionError(f"{sql} answered without a tenant")
            except errors.NullValueNotAllowed:
                pass


def test_moving_indexes_to_half_precision_is_refused_on_citus():
    # memory_embedding_reindex lists CREATE INDEX CONCURRENTLY statements for a partitioned table
    # on one node; on Citus the precision is chosen before a model's first vector (docs/operations.md).
    with admin() as a:
        try:
            a.execute("SELECT * FROM memory_embedding_reindex('half')").fetchall()
            raise AssertionError("memory_embedding_reindex answered on Citus")
        except errors.FeatureNotSupported as e:
            assert "Citus" in str(e), str(e)


SHARD = re.compile(r"memory\.[a-z_0-9]+?_(\d{6,})\b")
SERVER = re.compile(r"on server \S+@([\d.]+:\d+)")


def test_single_tenant_calls_touch_one_worker_and_one_shard_group():
    c, user = tenant("cr")
    with c, admin() as a:
        shard_group = dict(a.execute(
            """SELECT s.shardid, s.shardminvalue FROM pg_dist_shard s
               WHERE s.logicalrelid::text LIKE 'memory.%' AND s.shardminvalue IS NOT NULL"""
        ).fetchall())
        mid = write(c, text="Rita keeps bees on the roof.", thread_id="r1")["id"]
        c.execute("SELECT memory_agent('agent-r', NULL, 'I help.', 'Rita.')")
        log = []
        c.add_notice_handler(lambda d: log.append((d.message_primary or "", d.message_detail or "")))
        c.execute("SET citus.log_remote_commands = on")
        calls = {
            "memory_write": ("SELECT memory_write(%s)", (Jsonb({"text": "Rita sells honey on Saturdays.", "thread_id": "r1"}),)),
            "memory_query": ("SELECT memory_query(%s)", (Jsonb({"query": "what does Rita keep on the roof"}),)),
            "memory_search": ("SELECT * FROM memory_search('honey')", ()),
            "message_append": ("SELECT message_append('r1', 'user', 'The hive is doing well.')", ()),
            "conversation_search": ("SELECT conversation_search('r1', 'hive')", ()),
            "block_append": ("SELECT block_append('agent-r', 'human', 'Keeps bees.')", ()),
            "compile_core_blocks": ("SELECT compile_core_blocks('agent-r', now())", ()),
            "memory_context": ("SELECT memory_context('agent-r', 'r1', 'bees', 300)", ()),
            "memory_file_write": ("SELECT memory_file_write('bees.md', 'Two hives.')", ()),
            # Lookups by id: the tenant's value routes them too.
            "memory_history": ("SELECT memory_history(%s)", (mid,)),
            "memory_forget": ("SELECT memory_forget(%s)", (mid,)),
            "memory_restore": ("SELECT memory_restore(%s)", (mid,)),
        }
        for name, (sql, args) in calls.items():
            log.clear()
            c.execute(sql, args).fetchall()
            servers = {m.group(1) for _, d in log for m in [SERVER.search(d)] if m}
            groups = {shard_group[int(s)] for p, _ in log for s in SHARD.findall(p) if int(s) in shard_group}
            assert len(servers) == 1, (name, servers)
            assert len(groups) == 1, (name, groups)
        c.execute("RESET citus.log_remote_commands")


def test_the_backfill_embeds_rows_of_every_tenant():
    users = []
    for _ in range(3):
        c, user = tenant("cb")
        with c:
            write(c, text=f"{user} collects old maps.")
        users.append(user)
    with admin() as a:
        for user in users:
            a.execute("UPDATE memory.items SET embedding = NULL, embedding_model = NULL WHERE user_id = %s", (user,))
        done = 0
        for _ in range(20):
            n = one(a, "SELECT memory_reembed(100)")
            done += n
            if n == 0:
                break
        assert done >= 3, done
        left = one(a, "SELECT count(*) FROM memory.items WHERE user_id = ANY(%s) AND embedding IS NULL", (users,))
        assert left == 0, left


def test_two_backfills_at_once_over_many_tenants_do_not_deadlock():
    # Each batch spans several tenants. Its vectors are stored one tenant at a time (router
    # statements): a statement over several tenants is a multi-shard modification, which Citus
    # serializes with a lock on every shard, and two backfills holding their claims' shards
    # then wait on each other (src/embed/reembed.rs).
    users = []
    for _ in range(8):
        c, user = tenant("cd")
        with c:
            for k in range(3):
                write(c, text=f"{user} keeps notebook {k} about rivers.")
        users.append(user)
    errors_seen = []

    def backfill():
        try:
            with admin() as a:
                for _ in range(40):
                    if one(a, "SELECT memory_reembed(4)") == 0:
                        break
        except Exception as e:  # the assertion below names it
            errors_seen.append(repr(e))

    with admin() as a:
        for round_ in range(3):
            a.execute(
                "UPDATE memory.items SET embedding = NULL, embedding_model = NULL WHERE user_id = ANY(%s)",
                (users,),
            )
            threads = [threading.Thread(target=backfill) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert errors_seen == [], (round_, errors_seen)
        left = one(a, "SELECT count(*) FROM memory.items WHERE user_id = ANY(%s) AND embedding IS NULL", (users,))
        assert left == 0, left


def test_a_purged_memory_leaves_the_term_statistics():
    # The decrement runs in the shard's trigger, routed to the tenant's shard (sql/search.sql).
    c, user = tenant("cp")
    with c:
        mid = write(c, text="Dora grows purple carrots.", thread_id="d1")["id"]
        write(c, text="Dora grows tall sunflowers.", thread_id="d1")
        c.execute("SELECT memory_forget(%s)", (mid,))
    with admin() as a:
        a.execute("UPDATE memory.items SET purge_at = now() - interval '1 minute' WHERE user_id = %s AND state = 'soft_deleted'", (user,))
        assert one(a, "SELECT memory_purge()") >= 1
        lex = dict(a.execute("SELECT lexeme, df FROM memory.lexicon WHERE user_id = %s", (user,)).fetchall())
        assert "purpl" not in lex and lex.get("grow") == 1 and lex.get("sunflow") == 1, lex
        assert one(a, "SELECT docs FROM memory.corpus WHERE user_id = %s", (user,)) == 1


def test_a_german_query_reads_compounds_through_the_coordinator():
    # memory.query_lexemes reads the tenant's lexicon for compounds (sql/search.sql), a
    # distributed table joined to the query's words, routed to the tenant's shard with the
    # tenant the API call hands to the workers (a plain SELECT of it as a tenant sees no
    # lexicon there: sql/citus.sql).
    c, user = tenant("cg")
    with c:
        one(c, "SELECT memory_configure('{\"language\": \"de\"}')")
        write(c, text="Jon hat letztes Jahr ein Tanzstudio in der Stadt eröffnet.")
        write(c, text="Gina verkauft Kleidung in ihrem eigenen Laden.")
        got = query(c, query="Wo ist das Studio?", top_k=1, explain=True)["items"][0]
        assert "Tanzstudio" in got["text"] and got["explain"]["signals"]["bm25"] > 0, got


def test_erasing_a_tenant_leaves_only_its_receipt():
    # One transaction routed to the tenant's shard group; the receipt stays on the coordinator.
    c, user = tenant("ce")
    with c:
        write(c, text="Iris keeps bees on the roof.", thread_id="i1")
        c.execute("SELECT message_append('i1', 'user', 'Iris says hello.')")
        c.execute("SELECT memory_file_write('notes/iris.md', 'Iris notes.')")
    with admin() as a:
        receipt = one(a, "SELECT memory_erase_tenant(%s, 'asked')", (user,))
        assert receipt["rows"]["items"] == 1 and receipt["rows"]["messages"] == 1, receipt
        tables = [r[0] for r in a.execute("SELECT t::text FROM memory._tenant_tables() t").fetchall()]
        left = {t: one(a, f"SELECT count(*) FROM {t} WHERE user_id = %s", (user,)) for t in tables}
        assert not any(left.values()), left
        assert one(a, "SELECT count(*) FROM memory.erasures WHERE tenant_hash = encode(sha256(%s::bytea), 'hex')", (user,)) == 1


def test_an_export_imports_into_another_tenant_once():
    # memory_import's statements all name the new tenant: routed to its shard group.
    c, user = tenant("cx")
    with c:
        write(c, text="Juno restores old radios.", thread_id="j1", category="hobby")
        write(c, text="Juno lives in Ghent.", thread_id="j1")
        c.execute("SELECT message_append('j1', 'user', 'Juno here.')")
        c.execute("SELECT memory_file_write('notes/juno.md', 'Juno notes.')")
        doc = one(c, "SELECT memory_export(%s)", (user,))
    target = f"cy-{uuid.uuid4().hex[:10]}"
    d, _ = connect_as(DSN, ROLE, target), target
    with d:
        first = one(d, "SELECT memory_import(%s)", (Jsonb(doc),))
        again = one(d, "SELECT memory_import(%s)", (Jsonb(doc),))
        assert first["inserted"]["memories"] == 2 and first["inserted"]["messages"] == 1, first
        assert not any(again["inserted"].values()), again
        found = query(d, query="Where does Juno live?", top_k=2)
        assert any("Ghent" in r["text"] for r in found["items"]), found
    with admin() as a:
        for t in ("memory.items", "memory.messages", "memory.files"):
            n = one(a, f"SELECT count(*) FROM {t} WHERE user_id = %s", (target,))
            m = one(a, f"SELECT count(*) FROM {t} WHERE user_id = %s", (user,))
            assert n == m and n >= 1, (t, n, m)


def test_the_refine_job_puts_the_models_summary_in_place_through_the_coordinator():
    # compact_thread with a model configured answers at once with the extractive summary, marked
    # pending; the coordinator's worker finds it (sql/queries/refine_due.sql across the shards)
    # and writes the model's version in the tenant's shard group, once (src/ops/refine.rs).
    standin = os.environ["MEMORY_EXT_STANDIN"]
    user = f"cr-{uuid.uuid4().hex[:10]}"
    with admin() as a:
        a.execute("SELECT set_config('memory_ext.user_id', %s, false)", (user,))
        a.execute("SELECT set_config('memory_ext.llm_url', %s, false)", (standin + "/v1",))
        a.execute("SELECT set_config('memory_ext.llm_model', 'summariser', false)")
        a.execute("SELECT message_append('sum', 'user', 'We migrate the orders table on Friday.')")
        # The stand-in answers with the text after REPLY: in what it is sent.
        a.execute("SELECT message_append('sum', 'assistant', %s)",
                  ("Noted. REPLY: I agreed to migrate the orders table on Friday. " + "pad " * 150,))
        a.execute("SELECT message_append('sum', 'user', 'Thanks.')")
        assert one(a, "SELECT compact_thread('sum', 1)")["pending"] is True
        a.execute("RESET memory_ext.llm_url")
        pending = """SELECT count(*) FROM memory.messages
                     WHERE user_id = %s AND metadata -> 'summary' ->> 'pending' = 'llm'"""
        assert one(a, pending, (user,)) == 1
        a.execute("ALTER SYSTEM SET memory_ext.llm_url = %s" % sql.Literal(standin + "/v1").as_string(a))
        a.execute("ALTER SYSTEM SET memory_ext.llm_model = 'summariser'")
        a.execute("SELECT pg_reload_conf()")
        try:
            deadline = time.time() + 90
            while one(a, pending, (user,)) and time.time() < deadline:
                time.sleep(1)
        finally:
            a.execute("ALTER SYSTEM RESET memory_ext.llm_url")
            a.execute("ALTER SYSTEM RESET memory_ext.llm_model")
            a.execute("SELECT pg_reload_conf()")
        assert one(a, pending, (user,)) == 0, "still pending after 90 s"
        content, method = a.execute(
            "SELECT content, metadata -> 'summary' ->> 'method' FROM memory.messages "
            "WHERE user_id = %s AND thread_id = 'sum' AND is_summary", (user,)).fetchone()
        assert method == "llm" and "I agreed to migrate the orders table on Friday" in content, (method, content)
        refines = one(a, "SELECT count(*) FROM memory.events WHERE user_id = %s AND op = 'refine'", (user,))
        assert refines == 1, refines


def test_summaries_answer_through_the_coordinator():
    # Defined, refreshed (no model: the answer from the memories), read stale at once when a
    # memory it rests on is superseded, scrubbed by a purge, exported and imported, erased:
    # every statement names the tenant, routed to its shard group (sql/summaries.sql).
    c, user = tenant("cs")
    with c:
        veg = write(c, text="Kai is vegetarian.", category="food")["id"]
        ramen = write(c, text="Kai loves ramen.", category="food")["id"]
        one(c, "SELECT memory_summary_define('food', 'What does the user eat?', '{\"categories\": [\"food\"]}')")
        assert one(c, "SELECT memory_summary_refresh('food')")["refreshed"] == ["food"]
        s = one(c, "SELECT memory_summary_get('food')")
        assert s["version"] == 1 and not s["stale"] and veg in s["evidence"], s
        write(c, text="Kai eats fish again.", category="food", supersedes=veg)
        assert one(c, "SELECT memory_summary_get('food')")["stale"] is True
        # The coordinator's worker refreshes stale summaries too (src/worker/jobs.rs `summaries`),
        # so it may have written version 2 before this call writes version 3: either way the
        # latest version no longer rests on the superseded memory.
        assert "food" in one(c, "SELECT memory_summary_refresh()")["refreshed"]
        s = one(c, "SELECT memory_summary_get('food')")
        assert s["version"] in (2, 3) and not s["stale"] and veg not in s["evidence"], s
        c.execute("SELECT memory_agent(%s, %s)", (f"agent-{user}", user))
        assert one(c, "SELECT memory_context(%s, 't', 'dinner', 2048, 3, 0, ARRAY['food'])",
                   (f"agent-{user}",)).count("- food: ") == 1
        doc = one(c, "SELECT memory_export(%s)", (user,))
        assert len(doc["summaries"]) >= 1 and len(doc["summary_versions"]) >= 2, doc.keys()
        # Purged by the tenant's own role (src/ops/lifecycle.rs `forget`: on Citus the purge is
        # the caller's, as its soft delete is; a second user in the same shards is refused).
        assert one(c, "SELECT memory_forget(%s, true)", (ramen,))["event"] == "purged"
        with admin() as a:
            assert one(a, "SELECT count(*) FROM memory.items WHERE id = %s", (ramen,)) == 0
        assert one(c, "SELECT memory_summary_get('food') ->> 'answer'") is None
        # The tables read as the operator: a tenant's own plain SELECT reaches the workers
        # without its tenant on Citus (sql/citus.sql memory._tenant_to_workers says why).
        with admin() as a:
            assert one(a, "SELECT count(*) FROM memory.summary_versions WHERE user_id = %s AND erased", (user,)) >= 2
            assert one(a, "SELECT count(*) FROM memory.summary_versions WHERE user_id = %s AND answer LIKE '%%ramen%%'", (user,)) == 0
    target = f"ct-{uuid.uuid4().hex[:10]}"
    with connect_as(DSN, ROLE, target) as d:
        first = one(d, "SELECT memory_import(%s)", (Jsonb(doc),))
        assert first["inserted"]["summaries"] >= 1 and first["inserted"]["summary_versions"] >= 2, first
        assert one(d, "SELECT memory_summary_get('food', 2) ->> 'version'") == "2"
    with admin() as a:
        a.execute("SELECT memory_erase_tenant(%s, 'asked')", (user,))
        assert one(a, "SELECT count(*) FROM memory.summaries WHERE user_id = %s", (user,)) == 0
        assert one(a, "SELECT count(*) FROM memory.summary_versions WHERE user_id = %s", (user,)) == 0


def test_the_store_answers_through_the_coordinator():
    # Every store statement names its tenant: routed to the tenant's shard group, the vectors
    # colocated with their items, history written by the shard's trigger.
    c, user = tenant("cs")
    with c:
        put = one(c, "SELECT store_put('{prefs,food}', 'tea', %s, ttl => '1 hour')",
                  (Jsonb({"text": "Green tea, no sugar.", "n": 2}),))
        assert put["event"] == "created" and put["indexed"] == 1, put
        one(c, "SELECT store_put('{prefs,travel}', 'seat', %s, index => '[\"text\"]')", (Jsonb({"text": "Aisle seat.", "n": 5}),))
        got = one(c, "SELECT store_get('{prefs,food}', 'tea')")
        assert got["value"]["text"] == "Green tea, no sugar.", got
        rows = c.execute("SELECT key, score FROM store_search('{prefs}', query => 'what does the user drink', "
                         "filter => '{\"n\": {\"$lt\": 10}}')").fetchall()
        assert [r[0] for r in rows][0] == "tea" and rows[0][1] > rows[1][1], rows
        ns = [r[0] for r in c.execute("SELECT store_list_namespaces(prefix => '{prefs}')").fetchall()]
        assert ns == [["prefs", "food"], ["prefs", "travel"]], ns
        answers = one(c, "SELECT store_batch(%s)", (Jsonb([
            {"op": "put", "namespace": ["b"], "key": "1", "value": {"v": 1}, "index": False},
            {"op": "get", "namespace": ["b"], "key": "1"},
            {"op": "delete", "namespace": ["b"], "key": "1"}]),))
        assert answers[0] is None and answers[1]["value"] == {"v": 1} and answers[2] is None, answers
        assert one(c, "SELECT store_delete('{prefs,travel}', 'seat')") is True
    with admin() as a:
        n = one(a, "SELECT count(*) FROM memory.history WHERE user_id = %s AND entity = 'store'", (user,))
        assert n >= 5, n
        assert one(a, "SELECT count(*) FROM memory.store_vectors WHERE user_id = %s", (user,)) == 1


def test_graph_checkpoints_answer_through_the_coordinator():
    # The checkpointer's functions are PL/pgSQL whose statements each name the tenant: routed to
    # its shard group, blobs and writes colocated with the checkpoints; copy, prune, delete by run
    # and by thread each a router statement (a data-modifying CTE included).
    c, user = tenant("ck")
    with c:
        doc = lambda i, v: Jsonb({"v": 4, "id": f"c{i}", "channel_versions": {"m": v}, "channel_values": {}})  # noqa: E731
        one(c, "SELECT checkpoint_put('g', '', 'c1', NULL, %s, %s, '{m}', '{1}', '{msgpack}', ARRAY['\\x01'::bytea])",
            (doc(1, "1"), Jsonb({"run_id": "r1", "step": 0})))
        one(c, "SELECT checkpoint_put('g', '', 'c2', 'c1', %s, %s, '{m}', '{2}', '{msgpack}', ARRAY['\\x02'::bytea])",
            (doc(2, "2"), Jsonb({"run_id": "r2", "step": 1})))
        assert one(c, "SELECT checkpoint_put_writes('g', '', 'c2', 't', '', '{0,1}', '{m,n}', '{json,json}', "
                      "ARRAY['\\x0a'::bytea, '\\x0b'])") == 2
        # LangGraph's special writes replace (the other branch of the function).
        assert one(c, "SELECT checkpoint_put_writes('g', '', 'c2', 't', '', '{1}', '{n}', '{json}', "
                      "ARRAY['\\x0c'::bytea], true)") == 1
        rows = c.execute("SELECT checkpoint_id, parent_checkpoint_id, array_length(pending_writes, 1) "
                         "FROM checkpoint_list('g')").fetchall()
        assert rows == [("c2", "c1", 2), ("c1", None, None)], rows
        assert one(c, "SELECT checkpoint_id FROM checkpoint_get('g')") == "c2"
        assert one(c, "SELECT checkpoint_copy_thread('g', 'h')") == 6
        assert one(c, "SELECT checkpoint_prune('{h}')") == 2   # c1 and its blob
        assert one(c, "SELECT checkpoint_delete_runs('{r1}')") == 2   # g's c1 and its blob
        assert [r[0] for r in c.execute("SELECT thread_id FROM checkpoint_list() ORDER BY 1").fetchall()] == ["g", "h"]
        assert one(c, "SELECT checkpoint_delete_thread('g')") == 4   # c2, its blob, its two writes
    with admin() as a:
        left = {t: one(a, f"SELECT count(*) FROM memory.{t} WHERE user_id = %s", (user,))
                for t in ("checkpoint_steps", "checkpoint_blobs", "checkpoint_writes")}
        assert left == {"checkpoint_steps": 1, "checkpoint_blobs": 1, "checkpoint_writes": 2}, left


def test_a_worker_added_and_rebalanced_keeps_every_tenant():
    # A third worker joins and Citus moves shards to it (docs/citus.md "Add a node"); every
    # tenant's rows are where they were before, read through the coordinator, and its calls
    # still answer.
    c, user = tenant("cn")
    with c:
        write(c, text="Nora repairs antique clocks.", thread_id="n1")
    with admin() as a:
        before = dict(a.execute("SELECT user_id, count(*) FROM memory.items GROUP BY 1").fetchall())
        coordinator = int(one(a, "SELECT current_setting('port')"))
    subprocess.run(["scripts/citus.sh", "add", CLUSTER, str(coordinator), "3"], check=True, capture_output=True)
    with admin() as a:
        # Shards copied with writes blocked meanwhile, not streamed by logical replication:
        # Citus's replication role is not allowed to apply changes to tables with row-level
        # security (docs/citus.md "Add a node"). A stuck move fails the test, not hangs it.
        a.execute("SET statement_timeout = '5min'")
        a.execute("SELECT citus_rebalance_start(shard_transfer_mode => 'block_writes')")
        a.execute("SELECT citus_rebalance_wait()")
        moved = one(a, "SELECT count(*) FROM pg_dist_placement JOIN pg_dist_node USING (groupid) WHERE nodeport = %s",
                    (coordinator + 3,))
        assert moved > 0, moved
        after = dict(a.execute("SELECT user_id, count(*) FROM memory.items GROUP BY 1").fetchall())
        assert after == before, (before, after)
    with connect_as(DSN, ROLE, user) as again:
        top = query(again, query="what does Nora fix")["items"][0]["text"]
        assert "antique clocks" in top, top
        assert write(again, text="Nora opened a second workshop.")["event"] == "created"


def node_of(tenant_id):
    """(port, data directory) of the worker holding the tenant's shards."""
    with admin() as a:
        port = a.execute(
            """SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid)
               WHERE p.shardid = get_shard_id_for_distribution_column('memory.threads', %s::text)""",
            (tenant_id,),
        ).fetchone()[0]
        coordinator = int(a.execute("SELECT current_setting('port')").fetchone()[0])
    return port, os.path.join(CLUSTER, f"worker{port - coordinator}")


def rss_anon_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("RssAnon:"))


def test_a_worker_node_backend_stays_bounded_under_writes():
    # Every node plans the trigger functions' statements per call (sql/citus.sql): with kept
    # generic plans the worker backend serving a coordinator connection grew by ~90 kB per
    # memory_write and a large load was OOM-killed.
    with admin() as a:
        configs = a.execute(
            """SELECT result FROM run_command_on_all_nodes(
                 $$SELECT string_agg(p.proname || '=' || coalesce(array_to_string(p.proconfig, ','), ''), ' ' ORDER BY p.proname)
                   FROM pg_proc p WHERE p.pronamespace = 'memory'::regnamespace
                     AND p.proname IN ('_items_audit', '_items_term_stats', '_messages_audit')$$)"""
        ).fetchall()
        assert len(configs) >= 3, configs
        for (r,) in configs:
            assert r.count("plan_cache_mode=force_custom_plan") == 3, r
    c, user = tenant("bounded")
    try:
        write(c, text="Warm-up memory for the bound check.", thread_id="t0")
        port, _ = node_of(user)
        gpid = one(c, "SELECT citus_backend_gpid()")
        with psycopg.connect(DSN.replace(f"port={one(c, 'SHOW port')}", f"port={port}"), autocommit=True) as w:
            pid = one(w, "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
                      (f"citus_internal gpid={gpid}",))

        def writes(n, start):
            for i in range(start, start + n):
                write(c, text=f"Bound check {i}: Ana noted item {i * 7 % 101} about topic {i % 89}.",
                      thread_id=f"t{i % 4}")

        writes(200, 0)
        before = rss_anon_kb(pid)
        writes(800, 200)
        grown = rss_anon_kb(pid) - before
        # Kept generic plans grew it by ~70 MB over these 800 writes; plan caches and the
        # relation cache settle within the first 200.
        assert grown < 15_000, f"worker backend {pid} grew by {grown} kB over 800 writes"
    finally:
        c.close()


def test_vector_search_uses_the_hnsw_index_of_the_tenants_shard():
    # The registered model's HNSW index is on every shard partition of memory.items (made on the
    # coordinator: sql/embed.sql), and memory_query's vector seed uses it on the worker, since the
    # planner settings go there with the tenant (sql/citus.sql). 0.7.0 made no HNSW index on a
    # coordinator holding a copy of the reference tables, and a worker planned the seed as a
    # sort of all of the tenant's rows.
    c, user = tenant("hnsw")
    port, _ = node_of(user)
    with admin() as a:
        model = one(a, "SELECT memory_citus_distribute() ->> 'model'")
        suffix = one(a, "SELECT left(md5(%s), 12)", (model,))
        shards = [
            f"items_p{i:02d}_" + str(one(a, "SELECT get_shard_id_for_distribution_column(%s, %s::text)",
                                         (f"memory.items_p{i:02d}", user)))
            for i in range(16)
        ]
    worker_dsn = DSN.replace(f"port={one(c, 'SHOW port')}", f"port={port}")
    with psycopg.connect(worker_dsn, autocommit=True) as w:
        w.execute("SET citus.override_table_visibility = off")
        leaves = w.execute(
            """SELECT t.relname, EXISTS (SELECT FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
                                          JOIN pg_am am ON am.oid = x.relam
                                        WHERE i.indrelid = t.oid AND am.amname = 'hnsw' AND x.relname LIKE %s)
               FROM pg_class t WHERE t.relnamespace = 'memory'::regnamespace AND t.relkind = 'r'
                 AND t.relname ~ '^items_p[0-9]+_[0-9]+$'""",
            (f"items_emb_{suffix}%",),
        ).fetchall()
        assert len(leaves) >= 16, leaves
        assert all(has for _, has in leaves), [name for name, has in leaves if not has]

        def scans():
            w.execute("SELECT pg_stat_clear_snapshot()")
            return one(w, """SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes
                             WHERE indexrelname LIKE %s AND relname = ANY(%s)""",
                       (f"items_emb_{suffix}%", shards))

        try:
            for i in range(12):
                write(c, text=f"Vera's note {i}: the greenhouse needs {i + 2} new panes before winter.")
            before = scans()
            for q in ("what does the greenhouse need", "panes before winter", "Vera's notes"):
                assert query(c, query=q, top_k=3)["items"], q
        finally:
            c.close()   # the worker backend that served it reports its statistics as it ends
        deadline = time.time() + 20
        while scans() < before + 3 and time.time() < deadline:
            time.sleep(0.5)
        assert scans() >= before + 3, (before, scans())


def test_a_killed_worker_loses_no_acknowledged_write():
    assert CLUSTER, "MEMORY_EXT_CITUS_DIR is not set"
    c, victim = tenant("ck")
    port, pgdata = node_of(victim)
    # A tenant on the other worker, which must go on meanwhile.
    for _ in range(200):
        s, survivor = tenant("cs")
        if node_of(survivor)[0] != port:
            break
        s.close()
    acknowledged, errors_seen = [], []
    stop = threading.Event()

    def writer():
        n = 0
        while not stop.is_set():
            n += 1
            try:
                write(c, text=f"Kim logged sensor reading number {n}.", thread_id="k1")
                acknowledged.append(n)
            except psycopg.Error as e:
                errors_seen.append(str(e))
                if len(errors_seen) >= 3:
                    return
                time.sleep(0.2)

    t = threading.Thread(target=writer)
    t.start()
    while len(acknowledged) < 10:
        time.sleep(0.05)
    subprocess.run(["runuser", "-u", "postgres", "--", PG_CTL, "-D", pgdata, "stop", "-m", "immediate"],
                   check=True, capture_output=True)
    t.join(timeout=60)
    stop.set()
    assert errors_seen, "writes went on with the tenant's worker down"
    # The coordinator names the lost node; it is not an internal error.
    assert any(f":{port}" in e or "connection" in e for e in errors_seen), errors_seen
    assert not any("internal error" in e.lower() or "panic" in e.lower() for e in errors_seen), errors_seen
    print(f"     the coordinator said: {errors_seen[0].splitlines()[0]}")
    # The other worker's tenants go on.
    with s:
        assert write(s, text="Sam's calls still work.")["event"] == "created"
    subprocess.run(["scripts/cluster.sh", "start", pgdata, str(port)], check=True, capture_output=True)
    # Every acknowledged write is there, once; nothing unacknowledged but the one in flight.
    # A write the coordinator committed while the worker went down is a prepared transaction on
    # the worker until Citus recovers it (its maintenance daemon does so within a minute); read
    # after recovering it now, as an operator would after bringing a node back. Until then it
    # also holds the worker's xmin back, which the change feed reads below.
    c.close()
    with admin() as a:
        a.execute("SELECT recover_prepared_transactions()")
        texts = [r[0] for r in a.execute("SELECT text FROM memory.items WHERE user_id = %s", (victim,))]
        got = [int(re.search(r"number (\d+)", x).group(1)) for x in texts if "sensor reading" in x]
        assert set(acknowledged) <= set(got), (sorted(set(acknowledged) - set(got)), len(got))
        assert len(got) == len(set(got)), "a write was doubled"
        assert len(got) <= len(acknowledged) + 1, (len(got), len(acknowledged))


def test_the_change_feed_answers_through_the_coordinator():
    # memory_changes is routed to the tenant's shard group (docs/citus.md "Not done yet" says
    # what a cluster-wide feed would need); writes still work with the feed's triggers on the
    # shards, which send no NOTIFY there (a two-phase commit cannot carry one).
    c, user = tenant("feed")
    with c:
        write(c, text="Ana moved to Porto.")
        c.execute("SELECT message_append('feed-t', 'user', 'hello')")
        for _ in range(100):
            got = one(c, "SELECT memory_changes()")
            if len(got["changes"]) >= 2:
                break
            time.sleep(0.05)
        assert [(x["entity"], x["op"]) for x in got["changes"]] == [("memory", "insert"), ("message", "insert")], got
        again = one(c, "SELECT memory_changes(%s)", (got["cursor"],))
        assert again["changes"] == [] and again["cursor"] == got["cursor"], again


def test_spaces_answer_through_the_coordinator():
    # Spaces on Citus (docs/citus.md "Spaces"): a space is a tenant key like a user's, routed to
    # its shard; the grants are a reference table, so the row policies on the worker that runs
    # a statement find the member's grants. memory_query reads each owner as its own routed
    # query and merges them.
    with admin() as a:
        kinds = a.execute(
            """SELECT logicalrelid::text, partmethod FROM pg_dist_partition
               WHERE logicalrelid IN ('memory.spaces'::regclass, 'memory.grants'::regclass) ORDER BY 1"""
        ).fetchall()
        assert kinds == [("memory.grants", "n"), ("memory.spaces", "n")], kinds
    name = f"team-{uuid.uuid4().hex[:8]}"
    c, ann = tenant("sp-admin")
    d, bob = tenant("sp-member")
    e, _ = tenant("sp-other")
    with c, d, e:
        assert one(c, "SELECT memory_space_create(%s) ->> 'name'", (name,)) == name
        write(c, text="Refunds over 500 euros need a manager's approval.", space=name)
        write(d, text="Bob handles refunds for the Lisbon store.")
        ask = {"query": "who approves refunds over 500 euros", "top_k": 3}
        assert all("space" not in i for i in query(d, **ask)["items"])  # not granted yet
        assert one(c, "SELECT memory_grant(%s, %s) ->> 'access'", (name, bob)) == "read"
        got = query(d, **ask)
        assert {i.get("space") for i in got["items"]} == {name, None}, got
        # Read-only: a write into the space is refused, by the API and by plain SQL.
        try:
            write(d, text="Refunds need no approval.", space=name)
            raise AssertionError("a read member wrote into the space")
        except errors.InsufficientPrivilege:
            pass
        # Another tenant sees nothing of it.
        assert all("space" not in i for i in query(e, **ask)["items"])
        # Write: the member adds to the space, and the admin finds it.
        one(c, "SELECT memory_grant(%s, %s, 'write')", (name, bob))
        write(d, text="Refunds are paid within 14 days.", space=name)
        got = query(c, query="how fast are refunds paid", top_k=1)
        assert "14 days" in got["items"][0]["text"], got
        # A shared block: the space's agent holds it, the member's agent shows it.
        one(c, "SELECT memory_agent('team-bot', %s)", (f"space:{name}",))
        one(c, "SELECT block_set('team-bot', 'runbook', 'Page the on-call engineer.')")
        with admin() as a:
            block = one(a, "SELECT id FROM memory.blocks WHERE user_id = %s AND label = 'runbook'", (f"space:{name}",))
        one(d, "SELECT memory_agent('bob-bot', %s)", (bob,))
        one(d, "SELECT block_attach('bob-bot', %s::uuid)", (block,))
        assert "Page the on-call engineer." in one(d, "SELECT compile_blocks('bob-bot') ->> 'text'")
        # A revoke counts at the member's next statement.
        one(c, "SELECT memory_revoke(%s, %s)", (name, bob))
        assert all("space" not in i for i in query(d, **ask)["items"])
        assert "on-call" not in one(d, "SELECT compile_blocks('bob-bot') ->> 'text'")
        # Erasing a member removes its grants (a reference table's rows) and its own rows, not
        # the space's.
        one(c, "SELECT memory_grant(%s, %s)", (name, bob))
        with admin() as a:
            assert one(a, "SELECT memory_erase_tenant(%s, 'test') IS NOT NULL", (bob,))
        assert one(d, "SELECT memory_grants()") == []
        got = query(c, query="how fast are refunds paid", top_k=1)
        assert "14 days" in got["items"][0]["text"], got


ROUTED = ["compile_core_blocks_for", "memory_context_for", "memory_query_for", "memory_write_for",
          "message_append_for"]


def test_the_for_forms_run_wholly_on_the_tenants_worker():
    # One round trip (docs/citus.md): memory_citus_distribute made the *_for forms Citus
    # distributed functions by user_id, colocated with the tenant tables, so the coordinator
    # sends a call to the tenant's worker as one statement and the call runs there.
    with admin() as a:
        dist = a.execute(
            """SELECT p.proname, o.distribution_argument_index, o.colocationid = (
                        SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'memory.items'::regclass)
               FROM pg_dist_object o JOIN pg_proc p ON p.oid = o.objid
               WHERE o.classid = 'pg_proc'::regclass AND p.proname LIKE '%\\_for' ORDER BY 1"""
        ).fetchall()
        assert dist == [(f, 0, True) for f in ROUTED], dist
        assert one(a, "SELECT memory_citus_distribute() -> 'functions'") == []  # done already
    # An ordinary role that sets no tenant: the argument is the call's tenant.
    ordinary_role(DSN, ROLE)
    ana = f"rt-{uuid.uuid4().hex[:10]}"
    bob = f"rt-{uuid.uuid4().hex[:10]}"
    with psycopg.connect(DSN + f" user={ROLE}", autocommit=True) as c:
        log = []
        c.add_notice_handler(lambda d: log.append((d.message_primary or "", d.message_detail or "")))
        c.execute("SET citus.log_remote_commands = on")
        port, _ = node_of(ana)

        def call(sql, args=()):
            log.clear()
            out = c.execute(sql, args).fetchone()[0]
            sent = [p for p, _ in log if p.startswith("issuing")]
            servers = {m.group(1) for _, d in log for m in [SERVER.search(d)] if m}
            # One statement, the call itself, to the tenant's worker.
            assert len(sent) == 1 and "_for(" in sent[0], (sql, sent)
            assert servers == {f"127.0.0.1:{port}"}, (sql, servers)
            return out

        got = call("SELECT memory_write_for(%s, %s)", (ana, Jsonb({"text": "Ana keeps bees on the roof.", "thread_id": "t1"})))
        assert got["event"] == "created", got
        got = call("SELECT memory_query_for(%s, %s)", (ana, Jsonb({"query": "what does Ana keep on the roof"})))
        assert "bees" in got["items"][0]["text"], got
        got = call("SELECT message_append_for(%s, 't1', 'user', 'The hive is doing well.', %s)",
                   (ana, Jsonb({"metadata": {"mood": "glad"}, "idempotency_key": "m-1"})))
        again = call("SELECT message_append_for(%s, 't1', 'user', 'The hive is doing well.', %s)",
                     (ana, Jsonb({"metadata": {"mood": "glad"}, "idempotency_key": "m-1"})))
        assert got["seq"] == 1 and again == got, (got, again)  # appended once per key
        c.execute("SET citus.log_remote_commands = off")
        c.execute("BEGIN")
        c.execute("SELECT set_config('memory_ext.user_id', %s, true)", (ana,))
        c.execute("SELECT memory_agent('agent-a', %s, 'I help.', 'Ana.')", (ana,))
        c.execute("COMMIT")
        c.execute("SET citus.log_remote_commands = on")
        blocks = call("SELECT compile_core_blocks_for(%s, 'agent-a')", (ana,))
        assert "Ana." in blocks and "1 previous messages" in blocks, blocks
        ctx = call("SELECT memory_context_for(%s, 'agent-a', 't1', 'bees', 400)", (ana,))
        assert "Ana keeps bees on the roof." in ctx, ctx
        # Tenants stay apart: Bob's call runs on Bob's worker and sees nothing of Ana's.
        log.clear()
        got = one(c, "SELECT memory_query_for(%s, %s)", (bob, Jsonb({"query": "what does Ana keep on the roof"})))
        assert got["items"] == [], got
        # A NULL tenant is NULL, not a call (a strict function; Citus 13.2.2 crashed the
        # coordinator on a distributed function's NULL distribution argument), also when it is
        # a bound parameter of a prepared statement.
        c.execute("SET citus.log_remote_commands = off")
        for f, args in [("memory_query_for(%s, %s)", (None, Jsonb({"query": "x"}))),
                        ("memory_write_for(%s, %s)", (None, Jsonb({"text": "x"}))),
                        ("message_append_for(%s, 't1', 'user', 'x')", (None,)),
                        ("compile_core_blocks_for(%s, 'agent-a')", (None,)),
                        ("memory_context_for(%s, 'agent-a', 't1', 'x')", (None,))]:
            for _ in range(6):  # past the plan cache's five custom plans
                assert c.execute(f"SELECT {f}", args, prepare=True).fetchone()[0] is None, f
        assert one(c, "SELECT 1") == 1  # the session (and the coordinator) are fine
        # Inside a transaction block Citus does not delegate: the call runs on the
        # coordinator, as the originals do, with the same answer.
        c.execute("BEGIN")
        got = one(c, "SELECT memory_query_for(%s, %s)", (ana, Jsonb({"query": "what does Ana keep on the roof"})))
        c.execute("COMMIT")
        assert "bees" in got["items"][0]["text"], got
        # Bad input is the original's error, raised on the worker and passed on as it is.
        for sql, args, err in [
            ("SELECT memory_write_for(%s, %s)", (ana, Jsonb({"text": ""})), errors.InvalidParameterValue),
            ("SELECT message_append_for(%s, 't1', 'user', 'x', %s)", (ana, Jsonb({"bogus": 1})), errors.InvalidParameterValue),
            ("SELECT message_append_for(%s, 't1', 'user', 'x', %s)", (ana, Jsonb({"created_at": "soon"})), errors.InvalidDatetimeFormat),
            ("SELECT memory_query_for(%s, %s)", (ana, Jsonb({"query": "x", "top_k": 0})), errors.InvalidParameterValue),
        ]:
            try:
                one(c, sql, args)
                raise AssertionError(f"{sql} {args} was accepted")
            except err:
                pass
    # A routed query reads the spaces granted to its tenant, wherever their shards are.
    space = f"rt-team-{uuid.uuid4().hex[:8]}"
    c, _ = tenant("rt-admin")
    with c, psycopg.connect(DSN + f" user={ROLE}", autocommit=True) as d:
        one(c, "SELECT memory_space_create(%s)", (space,))
        write(c, text="Refunds over 500 euros need a manager's approval.", space=space)
        one(c, "SELECT memory_grant(%s, %s)", (space, bob))
        got = one(d, "SELECT memory_query_for(%s, %s)", (bob, Jsonb({"query": "who approves refunds over 500 euros"})))
        assert [i.get("space") for i in got["items"]] == [space], got
    # Role mode holds on the worker: the tenant is the role's name there too, and another role
    # naming it is refused.
    role = "me_citus_role"
    ordinary_role(DSN, role)
    with admin() as ad:
        ad.execute(f"ALTER ROLE {role} SET memory_ext.tenant_source = 'role'")
    with psycopg.connect(DSN + f" user={role}", autocommit=True) as r:
        assert one(r, "SELECT memory_write_for(%s, %s) ->> 'event'", (role, Jsonb({"text": "Rolf likes the aisle."}))) in ("created", "noop")
    with psycopg.connect(DSN + f" user={ROLE}", autocommit=True) as other:
        try:
            one(other, "SELECT memory_query_for(%s, %s)", (role, Jsonb({"query": "aisle"})))
            raise AssertionError("another role claimed a role-mode tenant through a _for form")
        except errors.InsufficientPrivilege:
            pass


def test_a_worker_backend_stays_bounded_under_routed_calls():
    # A delegated call's statements run through Citus's local execution on the worker, where
    # kept generic plans grew the backend serving the coordinator's connection by ~48 kB a
    # call (src/pg/citus.rs `routed` plans per call on Citus).
    c, user = tenant("rb")
    try:
        write(c, text="Warm-up memory for the routed bound check.", thread_id="t0")
        port, _ = node_of(user)
        gpid = one(c, "SELECT citus_backend_gpid()")
        ask = Jsonb({"query": "warm-up memory", "top_k": 3})

        def calls(n):
            for _ in range(n):
                one(c, "SELECT memory_query_for(%s, %s)", (user, ask))

        calls(200)
        with psycopg.connect(DSN.replace(f"port={one(c, 'SHOW port')}", f"port={port}"), autocommit=True) as w:
            pid = one(w, "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
                      (f"citus_internal gpid={gpid}",))
        before = rss_anon_kb(pid)
        calls(800)
        grown = rss_anon_kb(pid) - before
        # With kept generic plans: 87 MB over these 800 calls (once, by hand).
        assert grown < 10_000, f"worker backend {pid} grew by {grown} kB over 800 routed queries"
    finally:
        c.close()


def main():
    if not DSN:
        print("MEMORY_EXT_TEST_DSN is not set: run this through `scripts/test.sh citus`", file=sys.stderr)
        return 2
    return run_tests(globals(), " (Citus)")

if __name__ == "__main__":
    sys.exit(main())
