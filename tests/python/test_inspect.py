"""The memory inspector (docs/inspector.md) in a real browser: Debian's Chromium, driven by
Selenium through Debian's chromedriver, against a `memory-mcp http` process and a real server,
logged in with real tokens. What a person does — log in, search and read the explain bar, edit
a block and see the compiled prompt change, forget and restore a memory, approve a proposal —
and what must be refused: a wrong token, a read-only token's changes (no buttons, POSTs
refused), another tenant's ids (404), a change without its CSRF token. Hostile text in memories,
blocks, paths and messages shows as text and runs nothing. Every page is saved as a screenshot
into docs/inspector/ (at 1280x800, and at a phone's width).

Run by `scripts/test.sh inspect`:
    MEMORY_EXT_TEST_DSN=... MEMORY_MCP_BIN=$CARGO_TARGET_DIR/debug/memory-mcp python3 tests/python/test_inspect.py
"""

import http.cookiejar
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import psycopg
from pgtest import ordinary_role, run_tests
from selenium import webdriver
from selenium.common.exceptions import (
    NoAlertPresentException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

DSN = os.environ["MEMORY_EXT_TEST_DSN"]
BIN = os.path.abspath(os.environ.get("MEMORY_MCP_BIN", "target/debug/memory-mcp"))
SHOTS = os.environ.get("INSPECT_SCREENSHOTS", os.path.join(os.path.dirname(__file__), "..", "..", "docs", "inspector"))
ROLE = "memory_inspect_gateway"
RUN = uuid.uuid4().hex[:8]
ALICE, BOB = f"insp-alice-{RUN}", f"insp-bob-{RUN}"
AGENT, BOB_AGENT = f"helper-{RUN}", f"bob-agent-{RUN}"
THREAD, BOB_THREAD = f"chat-{RUN}", f"bob-chat-{RUN}"
TOKENS = {"ops": f"ops-{RUN}-0123456789", "viewer": f"viewer-{RUN}-0123456789",
          "agent": f"agent-{RUN}-0123456789", "bob": f"bob-{RUN}-0123456789"}
HOSTILE = '<img src=x onerror="document.title=\'pwned\'"> prefers <b>dark</b> mode'

admin = psycopg.connect(DSN, autocommit=True)


def sql(user, query, *params):
    with admin.transaction():
        admin.execute("SELECT set_config('memory_ext.user_id', %s, true)", (user,))
        return admin.execute(query, params).fetchone()


IDS = {}


def setup():
    ordinary_role(DSN, ROLE)
    sql(ALICE, "SELECT memory_agent(%s, %s, 'I am a careful assistant.', 'Name: Alice.')", AGENT, ALICE)
    sql(ALICE, "SELECT block_set(%s, 'rules', 'Never share <secrets> with anyone.', 'house rules', 200, true)", AGENT)
    sql(ALICE, "SELECT message_append(%s, 'user', 'I moved to Lisbon and I grow tomatoes.')", THREAD)
    sql(ALICE, """SELECT message_append(%s, 'assistant', '', tool_calls =>
                   '[{"id": "call_1", "type": "function", "function": {"name": "archival_search", "arguments": "{\\"query\\": \\"tomatoes\\"}"}}]')""", THREAD)
    sql(ALICE, "SELECT message_append(%s, 'tool', 'nothing found <script>document.title=1</script>', tool_call_id => 'call_1')", THREAD)
    sql(ALICE, "SELECT message_append(%s, 'assistant', 'Noted: Lisbon, tomatoes.')", THREAD)
    sql(ALICE, "SELECT message_append(%s, 'user', 'What do I grow?')", THREAD)
    sql(ALICE, "SELECT compact_thread(%s, 2)", THREAD)
    # A webhook's dead letter (src/webhook.rs of the gateway writes them), its error hostile.
    sql(ALICE, """INSERT INTO memory.webhook_dead (user_id, hook, delivery_id, body, attempts, last_error)
                  VALUES (%s, '0123456789abcdef', 'delivery-1', '{"type": "memory.insert"}', 4, %s) RETURNING 1""",
        ALICE, "HTTP 500 <b>boom</b>")
    IDS["tomatoes"] = sql(ALICE, """SELECT memory_write('{"text": "Alice grows tomatoes on her balcony", "category": "hobbies", "tags": ["garden"]}') ->> 'id'""")[0]
    IDS["hostile"] = sql(ALICE, "SELECT memory_write(jsonb_build_object('text', %s::text, 'category', 'preferences', 'tags', jsonb_build_array('<i>x</i>'))) ->> 'id'", HOSTILE)[0]
    IDS["forget"] = sql(ALICE, """SELECT memory_write('{"text": "Alice has a dentist appointment on Friday", "category": "plans"}') ->> 'id'""")[0]
    IDS["old_city"] = sql(ALICE, """SELECT memory_write('{"text": "Alice lives in Porto", "category": "city", "thread_id": "%s"}') ->> 'id'""" % THREAD)[0]
    proposal = sql(ALICE, """SELECT memory_write('{"text": "Alice lives in Lisbon", "category": "city", "source": "inferred", "supersedes": "%s"}')""" % IDS["old_city"])[0]
    assert proposal["event"] == "proposed", proposal
    IDS["proposal"] = proposal["proposal_id"]
    sql(ALICE, "SELECT memory_file_write('notes/<b>garden</b>.md', E'# Garden\\nTomatoes: water daily.\\nBasil: shade.', 'Garden notes')")
    sql(ALICE, "SELECT memory_file_write('notes/garden.md', E'Tomatoes: water daily.', 'Garden')")
    sql(ALICE, "SELECT memory_file_edit('notes/garden.md', 'daily', 'every morning')")
    # A summary of Alice's hobbies, its question hostile, written from her memories (no model
    # here: memory_summary_refresh writes the answer from the memories themselves).
    sql(ALICE, "SELECT memory_summary_define('garden', %s, '{\"categories\": [\"hobbies\"]}')", "What does she grow? " + HOSTILE)
    sql(ALICE, "SELECT memory_summary_refresh('garden')")
    sql(BOB, "SELECT memory_agent(%s, %s, 'I help Bob.', 'Name: Bob.')", BOB_AGENT, BOB)
    sql(BOB, "SELECT message_append(%s, 'user', 'Bob secret thread')", BOB_THREAD)
    IDS["bob"] = sql(BOB, """SELECT memory_write('{"text": "Bob keeps his savings under the mattress"}') ->> 'id'""")[0]


class Gateway:
    def __enter__(self):
        with __import__("socket").socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = {"dsn": DSN + f" user={ROLE}", "tenants": [
            {"token": TOKENS["ops"], "user_id": ALICE, "agent_id": AGENT, "name": "ops", "inspect": "read-write"},
            {"token": TOKENS["viewer"], "user_id": ALICE, "agent_id": AGENT, "name": "viewer", "inspect": "read"},
            {"token": TOKENS["agent"], "user_id": ALICE, "agent_id": AGENT},
            {"token": TOKENS["bob"], "user_id": BOB, "agent_id": BOB_AGENT, "name": "bob", "inspect": "read-write"},
        ]}
        self.file = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(config, self.file)
        self.file.close()
        self.proc = subprocess.Popen([BIN, "http", "--config", self.file.name, "--listen", f"127.0.0.1:{self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=2).read()
                return self
            except (urllib.error.URLError, ConnectionError):
                if self.proc.poll() is not None or time.time() > deadline:
                    raise AssertionError(f"memory-mcp http did not start: {self.proc.stderr.read()}")
                time.sleep(0.1)

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        os.unlink(self.file.name)


G = None
BROWSER = None


def browser():
    o = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,800", "--lang=en-US"):
        o.add_argument(a)
    o.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=o)


def shot(name, full=True):
    """Saves the page as docs/inspector/<name>.png: the whole page's height at the window's width."""
    d = BROWSER
    w = d.execute_script("return window.innerWidth")
    if full:
        h = d.execute_script("return Math.min(document.documentElement.scrollHeight, 2400)")
        d.set_window_size(d.get_window_size()["width"], max(h + 140, 400))
    d.save_screenshot(os.path.join(SHOTS, f"{name}.png"))
    d.set_window_size(1280 if w > 700 else 390, 800 if w > 700 else 844)


def no_script_ran():
    """Nothing a stored text held has run: no alert, the title is the page's own."""
    try:
        BROWSER.switch_to.alert
        raise AssertionError("an alert is open")
    except NoAlertPresentException:
        pass
    assert "pwned" not in BROWSER.title and BROWSER.title != "1", BROWSER.title


def submit(button, alert=False):
    """Clicks a form's button (accepting its confirmation when asked) and waits for the page
    the server answers with: until then the old page, and its notice, is still there."""
    old = BROWSER.find_element(By.TAG_NAME, "html")
    button.click()
    if alert:
        WebDriverWait(BROWSER, 10).until(expected_conditions.alert_is_present()).accept()
    WebDriverWait(BROWSER, 20).until(lambda _: gone(old))
    no_script_ran()


def gone(element):
    """Whether the old page's element has left the document. While the new page replaces
    it, chromedriver may answer "does not belong to the document" rather than a stale
    reference (a CI run failed on that): both mean it is gone."""
    try:
        element.is_enabled()
        return False
    except StaleElementReferenceException:
        return True
    except WebDriverException as e:
        if "does not belong to the document" in str(e):
            return True
        raise


def login(token):
    d = BROWSER
    d.delete_all_cookies()
    d.get(G.base + "/inspect/login")
    d.find_element(By.ID, "token").send_keys(token)
    submit(d.find_element(By.CSS_SELECTOR, "form.login button"))


def visit(path):
    BROWSER.get(G.base + path)
    no_script_ran()
    return BROWSER


def h1():
    return BROWSER.find_element(By.TAG_NAME, "h1").text


class Session:
    """A plain HTTP client logged in with a token: what a script (or an attacker with a
    cookie) sends, without a browser's help."""

    def __init__(self, token):
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)
        status, _, _ = self.request("POST", "/inspect/login", {"token": token})
        assert status == 303, status

    def request(self, method, path, form=None, headers=None):
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        req = urllib.request.Request(G.base + path, data=data, method=method, headers=headers or {})
        try:
            with self.opener.open(req, timeout=30) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def csrf(self, path=None):
        path = path or f"/inspect/memories/{IDS['forget']}"
        _, _, body = self.request("GET", path)
        m = re.search(r'name="csrf" value="([0-9a-f]{64})"', body)
        return m.group(1) if m else None


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def state(user, id):
    return sql(user, "SELECT state FROM memory.items WHERE id = %s", id)[0]


def test_login_refuses_a_wrong_token_and_a_token_without_inspect():
    for token in ("not-a-token-of-anyone-0000", TOKENS["agent"]):
        login(token)
        assert h1() == "Log in", h1()
        assert "not known" in BROWSER.find_element(By.CSS_SELECTOR, ".error").text
    # A page asked for without a session sends the browser to the login page, and back after.
    visit("/inspect/threads")
    assert "/inspect/login?next=/inspect/threads" in BROWSER.current_url, BROWSER.current_url
    shot("login", full=False)
    BROWSER.find_element(By.ID, "token").send_keys(TOKENS["ops"])
    submit(BROWSER.find_element(By.CSS_SELECTOR, "form.login button"))
    assert h1() == "Threads" and BROWSER.current_url.endswith("/inspect/threads"), BROWSER.current_url
    # The session is an HttpOnly, SameSite=Strict cookie; the token is nowhere in the browser.
    c = BROWSER.get_cookie("memory_inspect")
    assert c and c["httpOnly"] and c["sameSite"] == "Strict", c
    assert BROWSER.execute_script("return document.cookie") == ""
    assert TOKENS["ops"] not in BROWSER.page_source


def test_overview_and_every_page_render_with_hostile_text_as_text():
    login(TOKENS["ops"])
    d = visit("/inspect/")
    assert h1() == "Overview"
    cards = d.find_element(By.CSS_SELECTOR, ".cards").text
    assert "Pending proposals\n1" in cards, cards
    assert len(d.find_elements(By.CSS_SELECTOR, ".chart rect.bar")) == 30
    shot("overview")
    for name, path, want in [
        ("memories", "/inspect/memories", "Alice grows tomatoes on her balcony"),
        ("threads", "/inspect/threads", THREAD),
        ("thread", f"/inspect/threads/{THREAD}", "folded"),
        ("agents", "/inspect/blocks", AGENT),
        ("files", "/inspect/files?grep=Tomatoes", "notes/<b>garden</b>.md"),
        ("file", "/inspect/files/view?path=notes/garden.md", "every morning"),
        ("summaries", "/inspect/summaries", "garden"),
        ("summary", "/inspect/summaries/garden", "Alice grows tomatoes on her balcony"),
        ("webhooks", "/inspect/webhooks", "HTTP 500 <b>boom</b>"),
        ("export", "/inspect/export", "Download the export"),
    ]:
        d = visit(path)
        assert want in d.find_element(By.TAG_NAME, "main").text, (path, want)
        shot(name)
    # Hostile text is shown, never parsed: no element the texts hold exists.
    d = visit("/inspect/memories")
    assert HOSTILE in d.find_element(By.TAG_NAME, "main").text
    assert not d.find_elements(By.CSS_SELECTOR, "main img, main b, main i, main script")
    d = visit(f"/inspect/threads/{THREAD}")
    assert "<script>document.title=1</script>" in d.find_element(By.TAG_NAME, "main").text
    assert "tool call archival_search" in d.find_element(By.TAG_NAME, "main").text
    d = visit(f"/inspect/memories/{IDS['hostile']}")
    assert not d.find_elements(By.CSS_SELECTOR, "main img, main b")
    # A summary: its question as text, its version, and a link to each memory it rests on.
    d = visit("/inspect/summaries/garden")
    main = d.find_element(By.TAG_NAME, "main").text
    assert HOSTILE in main and "current, version 1" in main, main
    assert not d.find_elements(By.CSS_SELECTOR, "main img, main b")
    links = [a.get_attribute("href") for a in d.find_elements(By.CSS_SELECTOR, "main li a")]
    assert any(h.endswith(f"/inspect/memories/{IDS['tomatoes']}") for h in links), links
    no_script_ran()


def test_search_shows_the_explain_bar_per_signal():
    login(TOKENS["ops"])
    d = visit("/inspect/memories")
    box = d.find_element(By.NAME, "q")
    box.send_keys("what does Alice grow on the balcony")
    submit(d.find_element(By.CSS_SELECTOR, "form.filters button"))
    first = d.find_element(By.CSS_SELECTOR, "ol.results > li")
    assert "Alice grows tomatoes on her balcony" in first.text, first.text
    segments = first.find_elements(By.CSS_SELECTOR, "svg.stack rect")
    names = {s.get_attribute("data-signal") for s in segments}
    assert {"vector", "bm25"} <= names, names
    legend = first.find_element(By.CSS_SELECTOR, ".legend").text
    assert re.search(r"score \d\.\d{3}", legend) and "vector +" in legend and "bm25 +" in legend, legend
    # The bar's widths are each signal's share of the positive score.
    widths = [float(s.get_attribute("width")) for s in segments]
    assert abs(sum(widths) - 100) < 0.1, widths
    shot("search")


def test_edit_a_block_and_the_compiled_prompt_changes():
    login(TOKENS["ops"])
    d = visit(f"/inspect/blocks/{AGENT}")
    before = d.find_element(By.ID, "compiled").text
    assert "Name: Alice." in before and "Likes kites" not in before
    # The read-only block is shown as such, without a form.
    rules = [s for s in d.find_elements(By.CSS_SELECTOR, "section.block") if s.find_element(By.TAG_NAME, "h2").text.startswith("rules")][0]
    assert "read-only" in rules.text and not rules.find_elements(By.TAG_NAME, "textarea")
    human = [s for s in d.find_elements(By.CSS_SELECTOR, "section.block") if s.find_element(By.TAG_NAME, "h2").text == "human"][0]
    area = human.find_element(By.TAG_NAME, "textarea")
    area.clear()
    area.send_keys("Name: Alice.\nLikes kites.")
    submit(human.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    assert "Saved block human" in d.find_element(By.CSS_SELECTOR, ".notice").text
    after = d.find_element(By.ID, "compiled").text
    assert "Likes kites." in after and after != before
    assert sql(ALICE, "SELECT compile_core_blocks(%s)", AGENT)[0].count("Likes kites.") == 1
    value = sql(ALICE, "SELECT value FROM memory.blocks WHERE agent_id = %s AND label = 'human'", AGENT)[0]
    assert value == "Name: Alice.\nLikes kites.", repr(value)
    # History names the gateway's role and the token: the inspector acted for "ops".
    actor = sql(ALICE, "SELECT actor FROM memory.history WHERE entity = 'block' ORDER BY ts DESC LIMIT 1")[0]
    assert actor == f"{ROLE} (inspector: ops)", actor
    shot("blocks")
    d = visit(f"/inspect/blocks/{AGENT}/human")
    assert "+ Likes kites." in d.find_element(By.CSS_SELECTOR, "pre.diff").text
    shot("block-history")


def test_forget_and_restore_a_memory():
    login(TOKENS["ops"])
    d = visit(f"/inspect/memories/{IDS['forget']}")
    submit(d.find_element(By.XPATH, "//button[text()='Forget']"), alert=True)
    assert "Forgotten" in d.find_element(By.CSS_SELECTOR, ".notice").text
    assert state(ALICE, IDS["forget"]) == "soft_deleted"
    submit(d.find_element(By.XPATH, "//button[text()='Restore']"))
    assert "Restored" in d.find_element(By.CSS_SELECTOR, ".notice").text
    assert state(ALICE, IDS["forget"]) == "active"
    events = [e for (e,) in admin.execute("SELECT event FROM memory_history(%s) ORDER BY ts", (IDS["forget"],)).fetchall()]
    assert events[-1] == "RESTORE", events
    shot("memory")


def test_edit_and_supersede_a_memory():
    login(TOKENS["ops"])
    d = visit(f"/inspect/memories/{IDS['tomatoes']}")
    form = d.find_element(By.CSS_SELECTOR, f"form[action$='/edit']")
    area = form.find_element(By.NAME, "text")
    area.clear()
    area.send_keys("Alice grows cherry tomatoes on her balcony")
    submit(form.find_element(By.CSS_SELECTOR, "button"))
    assert d.find_elements(By.CSS_SELECTOR, ".notice"), d.find_element(By.TAG_NAME, "main").text
    assert "Saved" in d.find_element(By.CSS_SELECTOR, ".notice").text
    assert sql(ALICE, "SELECT text FROM memory.items WHERE id = %s", IDS["tomatoes"])[0] == "Alice grows cherry tomatoes on her balcony"
    form = d.find_element(By.CSS_SELECTOR, f"form[action$='/supersede']")
    form.find_element(By.NAME, "text").send_keys("Alice grows peppers on her balcony now")
    submit(form.find_element(By.CSS_SELECTOR, "button"))
    assert "Superseded" in d.find_element(By.CSS_SELECTOR, ".notice").text
    chain = d.find_element(By.XPATH, "//h2[text()='Supersede chain']/..").text
    assert "cherry tomatoes" in chain, chain
    assert state(ALICE, IDS["tomatoes"]) == "superseded"
    # The write's event names who made it, as history does.
    new_id = BROWSER.current_url.split("/inspect/memories/")[1].split("?")[0]
    actors = {a for (a,) in admin.execute("SELECT actor FROM memory.events WHERE user_id = %s AND memory_id = %s",
                                          (ALICE, new_id)).fetchall()}
    assert actors == {f"{ROLE} (inspector: ops)"}, actors
    shot("memory-superseded")


def test_approve_a_proposal_and_the_memory_appears():
    login(TOKENS["ops"])
    d = visit("/inspect/proposals")
    shot("proposals")
    submit(d.find_element(By.XPATH, "//button[text()='Approve']"))
    notice = d.find_element(By.CSS_SELECTOR, ".notice").text
    m = re.search(r"memory ([0-9a-f-]{36}) written", notice)
    assert m, notice
    text_, st, by = sql(ALICE, """SELECT i.text, i.state, p.decided_by FROM memory.items i, memory.proposals p
                                  WHERE i.id = %s AND p.id = %s""", m.group(1), IDS["proposal"])
    assert (text_, st) == ("Alice lives in Lisbon", "active"), (text_, st)
    assert by == f"{ROLE} (inspector: ops)", by
    # It superseded the memory it was proposed against.
    assert state(ALICE, IDS["old_city"]) == "superseded"
    d = visit(f"/inspect/memories/{m.group(1)}")
    assert "Alice lives in Porto" in d.find_element(By.XPATH, "//h2[text()='Supersede chain']/..").text


def test_a_read_only_token_can_look_but_not_change():
    login(TOKENS["viewer"])
    d = visit(f"/inspect/memories/{IDS['forget']}")
    assert "read-only" in d.find_element(By.CSS_SELECTOR, ".who").text
    assert not d.find_elements(By.CSS_SELECTOR, "main form"), "a read-only page has forms"
    d = visit(f"/inspect/blocks/{AGENT}")
    assert not d.find_elements(By.TAG_NAME, "textarea")
    d = visit("/inspect/proposals")
    assert not d.find_elements(By.XPATH, "//button[text()='Approve']")
    # Its POSTs are refused, with or without a CSRF token, and nothing changes.
    s = Session(TOKENS["viewer"])
    for path, form in [(f"/inspect/memories/{IDS['forget']}/forget", {}),
                       (f"/inspect/blocks/{AGENT}/human", {"value": "hacked", "version": "2"})]:
        status, _, body = s.request("POST", path, {**form, "csrf": "0" * 64})
        assert status == 403 and "may look, not change" in body, (status, path)
    assert state(ALICE, IDS["forget"]) == "active"
    assert "hacked" not in sql(ALICE, "SELECT value FROM memory.blocks WHERE agent_id = %s AND label = 'human'", AGENT)[0]


def test_two_people_saving_one_block_at_once():
    """Two sessions post the same version of a block at the same moment: one edit lands, the
    other is told the block changed meanwhile (409), and nothing is half-written."""
    import threading
    a, b = Session(TOKENS["ops"]), Session(TOKENS["ops"])
    version = str(sql(ALICE, "SELECT version FROM memory.blocks WHERE agent_id = %s AND label = 'persona'", AGENT)[0])
    results = {}

    def save(name, s):
        results[name] = s.request("POST", f"/inspect/blocks/{AGENT}/persona",
                                  {"csrf": s.csrf(f"/inspect/blocks/{AGENT}"), "version": version,
                                   "value": f"I am the assistant {name} wrote."})[0]
    threads = [threading.Thread(target=save, args=(n, s)) for n, s in (("A", a), ("B", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [303, 409], results
    value, v = sql(ALICE, "SELECT value, version FROM memory.blocks WHERE agent_id = %s AND label = 'persona'", AGENT)
    winner = [n for n, st in results.items() if st == 303][0]
    assert value == f"I am the assistant {winner} wrote." and v == int(version) + 1, (value, v)


def test_another_tenants_ids_are_not_found():
    s = Session(TOKENS["ops"])
    for path in (f"/inspect/memories/{IDS['bob']}", f"/inspect/threads/{BOB_THREAD}",
                 f"/inspect/blocks/{BOB_AGENT}", f"/inspect/blocks/{BOB_AGENT}/human",
                 "/inspect/memories/not-a-uuid", "/inspect/files/view?path=notes/nothing.md",
                 "/inspect/summaries/nothing"):
        status, _, body = s.request("GET", path)
        assert status == 404, (path, status)
        assert "Bob" not in body and "mattress" not in body, path
    token = s.csrf()
    for action in ("forget", "edit", "supersede"):
        status, _, _ = s.request("POST", f"/inspect/memories/{IDS['bob']}/{action}", {"csrf": token, "text": "x"})
        assert status == 404, (action, status)
    status, _, _ = s.request("POST", f"/inspect/blocks/{BOB_AGENT}/human", {"csrf": token, "value": "x", "version": "1"})
    assert status in (404, 409), status
    assert state(BOB, IDS["bob"]) == "active"
    assert sql(BOB, "SELECT value FROM memory.blocks WHERE agent_id = %s AND label = 'human'", BOB_AGENT)[0] == "Name: Bob."
    # Bob's own session sees his memory and not Alice's.
    b = Session(TOKENS["bob"])
    assert b.request("GET", f"/inspect/memories/{IDS['bob']}")[0] == 200
    assert b.request("GET", f"/inspect/memories/{IDS['forget']}")[0] == 404
    status, _, body = b.request("GET", "/inspect/summaries/garden")
    assert status == 404 and "tomatoes" not in body, status
    status, headers, body = b.request("GET", "/inspect/export/download")
    assert status == 200 and "attachment" in headers["Content-Disposition"], status
    assert "mattress" in body and "tomatoes" not in body


def test_a_change_without_its_csrf_token_is_refused():
    s = Session(TOKENS["ops"])
    good = s.csrf()
    assert good
    for form in ({}, {"csrf": ""}, {"csrf": "f" * 64}):
        status, _, body = s.request("POST", f"/inspect/memories/{IDS['forget']}/forget", form)
        assert status == 403 and "CSRF" in body, (form, status)
    # Another session's token is no good either.
    other = Session(TOKENS["ops"]).csrf()
    assert other != good
    status, _, _ = s.request("POST", f"/inspect/memories/{IDS['forget']}/forget", {"csrf": other})
    assert status == 403
    # A POST from another site's page is refused even with the right token.
    status, _, _ = s.request("POST", f"/inspect/memories/{IDS['forget']}/forget", {"csrf": good},
                             headers={"Origin": "https://evil.example"})
    assert status == 403
    assert state(ALICE, IDS["forget"]) == "active"
    # Without a session at all: 401, nothing done.
    req = urllib.request.Request(G.base + f"/inspect/memories/{IDS['forget']}/forget", method="POST",
                                 data=urllib.parse.urlencode({"csrf": good}).encode())
    try:
        urllib.request.urlopen(req, timeout=30)
        raise AssertionError("a POST without a session was served")
    except urllib.error.HTTPError as e:
        assert e.code == 401, e.code
    assert state(ALICE, IDS["forget"]) == "active"
    # Logging out is a change too (0.13.0): without the CSRF token it is refused and the
    # session goes on; with it, the session ends and its cookie opens nothing afterwards.
    assert s.request("POST", "/inspect/logout", {})[0] == 403
    assert s.request("GET", "/inspect/")[0] == 200
    assert s.request("POST", "/inspect/logout", {"csrf": good})[0] == 303
    status, headers, _ = s.request("GET", "/inspect/")
    assert status == 303 and "/inspect/login" in headers["Location"], status


def test_usable_by_keyboard_and_on_a_phone():
    login(TOKENS["ops"])
    d = visit("/inspect/")
    # The first Tab reaches the skip link, the next the first page of the navigation.
    d.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    assert d.switch_to.active_element.text == "Skip to content"
    d.switch_to.active_element.send_keys(Keys.TAB)
    assert d.switch_to.active_element.text == "Overview"
    # Every page is served with its time on the server; the pages of a small tenant take
    # milliseconds (the 100k-memory figures are in bench/results/inspect.md).
    d.set_window_size(390, 844)
    for name, path in [("phone-overview", "/inspect/"), ("phone-memory", f"/inspect/memories/{IDS['forget']}"),
                       ("phone-thread", f"/inspect/threads/{THREAD}")]:
        d = visit(path)
        # Nothing wider than the screen: no sideways scrolling of the page itself.
        over = d.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert over <= 0, (path, over)
        shot(name)
    d.set_window_size(1280, 800)


def main():
    global G, BROWSER
    os.makedirs(SHOTS, exist_ok=True)
    setup()
    with Gateway() as g:
        G = g
        BROWSER = browser()
        try:
            return run_tests(globals(), " (memory inspector in Chromium)")
        finally:
            BROWSER.quit()


if __name__ == "__main__":
    sys.exit(main())
