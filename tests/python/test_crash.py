"""kill -9 during concurrent writes: nothing acknowledged is lost, no bookkeeping is torn.

Run by `scripts/test.sh backup` (it owns the throwaway server and restarts it):
    MEMORY_EXT_TEST_DSN=... MEMORY_EXT_TEST_PGDATA=... MEMORY_EXT_TEST_PORT=... python3 tests/python/test_crash.py

Eight writers append messages and write memories to four shared threads (as ordinary roles,
each for its own tenant, and two per tenant so that threads are contended). Twice a client
backend is killed with SIGKILL (the postmaster then resets every backend), and once the
postmaster itself (the server is started again). About a third of the writes are messages with an
idempotency key, sent again after a failure until answered. After each crash, every write a writer
got an answer for must be there, each keyed message exactly once, and for every thread:
  * revisions are gapless: threads.revision = the number of change-log rows = their highest rev,
    and the change log holds exactly revs 1..revision;
  * message numbers are gapless: seq 1..threads.last_seq, one message each;
  * every memory has its ADD history row and every history row's memory exists or was deleted;
  * the BM25 statistics equal a recount from the stored memories.
"""

import os
import random
import signal
import subprocess
import threading
import time
import uuid

import psycopg
from pgtest import connect_as, ordinary_role, run_checks

DSN = os.environ["MEMORY_EXT_TEST_DSN"]
PGDATA = os.environ["MEMORY_EXT_TEST_PGDATA"]
PORT = os.environ["MEMORY_EXT_TEST_PORT"]
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ROLE = "me_crash"
RUN = uuid.uuid4().hex[:6]
TENANTS = [f"crash-{RUN}-{i}" for i in range(4)]


def admin():
    return psycopg.connect(DSN, autocommit=True)


def wait_up(secs=60):
    end = time.time() + secs
    while time.time() < end:
        try:
            with admin() as c:
                c.execute("SELECT 1")
                return
        except psycopg.Error:
            time.sleep(0.5)
    raise AssertionError("the server did not come back")


class Writer(threading.Thread):
    def __init__(self, n, stop):
        super().__init__(daemon=True)
        self.n, self.stop = n, stop
        self.user = TENANTS[n % len(TENANTS)]
        self.acked_messages, self.acked_memories = [], []
        # Keyed messages (docs/api.md "Idempotency"): a call that died with its connection is
        # sent again, same key and body, until it is answered; each must be stored once.
        self.acked_keyed, self.pending = [], None
        self.r = random.Random(n)

    def connect(self):
        c = connect_as(DSN, ROLE, self.user)
        c.execute("SET memory_ext.embed_on_write = off")  # the crash, not the model, is under test
        return c

    def run(self):
        c, i = None, 0
        while not self.stop.is_set():
            try:
                if c is None:
                    c = self.connect()
                thread = f"t-{self.user}"
                if self.pending is not None:
                    key, text = self.pending
                    c.execute("SELECT message_append(%s, 'user', %s, idempotency_key => %s)", (thread, text, key))
                    self.acked_keyed.append(text)
                    self.pending = None
                    continue
                i += 1
                if self.r.random() < 0.3:
                    self.pending = (f"k-{self.n}-{i}", f"writer {self.n} keyed message {i}")
                    continue
                if self.r.random() < 0.5:
                    text = f"writer {self.n} message {i}"
                    c.execute("SELECT message_append(%s, 'user', %s)", (thread, text))
                    self.acked_messages.append(text)
                else:
                    text = f"Writer {self.n} learned fact number {i} about {self.r.choice(['tea', 'trains', 'tides'])}."
                    c.execute("SELECT memory_write(%s::jsonb)", (f'{{"text": "{text}", "thread_id": "{thread}"}}',))
                    self.acked_memories.append(text)
            except psycopg.Error:
                c = None
                time.sleep(0.2)


def check(label, writers):
    with admin() as c:
        for w in writers:
            # What was acknowledged before this check began (writers may still be running).
            messages, memories = list(w.acked_messages), list(w.acked_memories)
            if messages:
                n = c.execute("SELECT count(*) FROM memory.messages WHERE user_id = %s AND content = ANY(%s)",
                              (w.user, messages)).fetchone()[0]
                assert n == len(set(messages)), f"{label}: writer {w.n} lost messages ({n} of {len(messages)})"
            keyed = list(w.acked_keyed)
            if keyed:
                n, distinct = c.execute("SELECT count(*), count(DISTINCT content) FROM memory.messages WHERE user_id = %s AND content = ANY(%s)",
                                        (w.user, keyed)).fetchone()
                assert (n, distinct) == (len(keyed), len(keyed)), \
                    f"{label}: writer {w.n}'s {len(keyed)} keyed messages, retried across the crash, are stored as {n} rows"
            if memories:
                n = c.execute("SELECT count(*) FROM memory.items WHERE user_id = %s AND text = ANY(%s)",
                              (w.user, memories)).fetchone()[0]
                assert n == len(set(memories)), f"{label}: writer {w.n} lost memories ({n} of {len(memories)})"
        bad = c.execute("""
            SELECT t.user_id, t.thread_id, t.revision, count(l.rev), coalesce(max(l.rev), 0), coalesce(min(l.rev), 1)
            FROM memory.threads t LEFT JOIN memory.change_log l USING (user_id, thread_id)
            WHERE t.user_id = ANY(%s) GROUP BY 1, 2, 3
            HAVING t.revision <> count(l.rev) OR t.revision <> coalesce(max(l.rev), 0) OR coalesce(min(l.rev), 1) <> 1""",
                        (TENANTS,)).fetchall()
        assert not bad, f"{label}: revisions with gaps: {bad}"
        bad = c.execute("""
            SELECT t.user_id, t.thread_id, t.last_seq, count(m.seq), coalesce(max(m.seq), 0)
            FROM memory.threads t LEFT JOIN memory.messages m USING (user_id, thread_id)
            WHERE t.user_id = ANY(%s) GROUP BY 1, 2, 3
            HAVING t.last_seq <> count(m.seq) OR t.last_seq <> coalesce(max(m.seq), 0)""", (TENANTS,)).fetchall()
        assert not bad, f"{label}: message numbers with gaps: {bad}"
        missing = c.execute("""
            SELECT count(*) FROM memory.items i WHERE i.user_id = ANY(%s)
              AND NOT EXISTS (SELECT 1 FROM memory.history h WHERE h.user_id = i.user_id AND h.memory_id = i.id::text AND h.event = 'ADD')""",
                            (TENANTS,)).fetchone()[0]
        assert missing == 0, f"{label}: {missing} memories without their ADD history row"
        orphans = c.execute("""
            SELECT count(*) FROM memory.history h WHERE h.user_id = ANY(%s) AND h.entity = 'item'
              AND NOT EXISTS (SELECT 1 FROM memory.items i WHERE i.user_id = h.user_id AND i.id::text = h.memory_id)""",
                            (TENANTS,)).fetchone()[0]
        assert orphans == 0, f"{label}: {orphans} history rows of memories that do not exist"
        stats = c.execute("""
            WITH docs AS (SELECT user_id, count(*) AS n, coalesce(sum(length(tsv) - 1), 0) AS len
                          FROM memory.items WHERE user_id = ANY(%s) GROUP BY user_id),
                 terms AS (SELECT i.user_id, u.lexeme, count(*) AS df FROM memory.items i, unnest(i.tsv) u
                           WHERE i.user_id = ANY(%s) AND u.lexeme <> memory.tenant_lexeme(i.user_id) GROUP BY 1, 2)
            SELECT (SELECT count(*) FROM docs d FULL JOIN memory.corpus c USING (user_id)
                     WHERE (d.user_id IS NOT NULL OR c.user_id = ANY(%s)) AND (d.n IS DISTINCT FROM c.docs OR d.len IS DISTINCT FROM c.total_len)),
                   (SELECT count(*) FROM terms t FULL JOIN (SELECT * FROM memory.lexicon WHERE user_id = ANY(%s) AND df > 0) l USING (user_id, lexeme)
                     WHERE t.df IS DISTINCT FROM l.df)""", (TENANTS, TENANTS, TENANTS, TENANTS)).fetchone()
        assert stats == (0, 0), f"{label}: BM25 statistics differ from a recount: {stats}"
        totals = c.execute("""SELECT (SELECT count(*) FROM memory.messages WHERE user_id = ANY(%s)),
                                     (SELECT count(*) FROM memory.items WHERE user_id = ANY(%s))""", (TENANTS, TENANTS)).fetchone()
    keyed = sum(len(w.acked_keyed) for w in writers)
    print(f"{label}: {totals[0]} messages ({keyed} keyed, each once), {totals[1]} memories; nothing acknowledged lost, bookkeeping whole")


def backend_pids():
    with admin() as c:
        return [r[0] for r in c.execute(
            "SELECT pid FROM pg_stat_activity WHERE usename = %s AND state IS NOT NULL", (ROLE,))]


def main():
    ordinary_role(DSN, ROLE)
    stop = threading.Event()
    writers = [Writer(n, stop) for n in range(8)]
    for w in writers:
        w.start()
    for round_ in range(2):
        time.sleep(4)
        pids = backend_pids()
        assert pids, "no writer backend to kill"
        victim = random.Random(round_).choice(pids)
        os.kill(victim, signal.SIGKILL)
        time.sleep(1)
        wait_up()
        time.sleep(3)
        check(f"client backend {victim} killed", writers)
    time.sleep(4)
    postmaster = int(open(os.path.join(PGDATA, "postmaster.pid")).readline())
    os.kill(postmaster, signal.SIGKILL)
    time.sleep(3)
    subprocess.run([os.path.join(ROOT, "scripts", "cluster.sh"), "start", PGDATA, PORT], check=True)
    wait_up()
    time.sleep(3)
    stop.set()
    for w in writers:
        w.join(timeout=30)
    check("postmaster killed", writers)


if __name__ == "__main__":
    run_checks(main, "crash", 3)
