"""The agent tools through psycopg, as an agent backend uses them: memory_tools' definitions
checked with a real JSON Schema validator (the `jsonschema` package), each format's documented
shape, the default set's size in tokens, and a scripted transcript of Anthropic's memory tool
compared with the outputs that tool documents.

Run by `scripts/test.sh client`:
    MEMORY_EXT_TEST_DSN="host=127.0.0.1 port=61433 user=postgres dbname=..." python3 tests/python/test_tools.py
"""

import importlib.metadata
import json
import os
import subprocess
import sys
import uuid

import jsonschema
import psycopg
from pgtest import connect_as, run_tests
from psycopg.types.json import Jsonb

DSN = os.environ.get("MEMORY_EXT_TEST_DSN")
ROLE = "me_py_tools"
ALL = [
    "memory_replace", "memory_append", "archival_insert", "archival_search",
    "conversation_search", "memory_ref_get", "memory_insert", "memory_query",
    "conversation_search_date", "core_memory_append", "core_memory_replace",
    "archival_memory_insert", "archival_memory_search", "memory",
]


def agent():
    user = "pyt-" + uuid.uuid4().hex[:12]
    c = connect_as(DSN, ROLE, user)
    c.execute("SELECT memory_agent('agent-' || %s, %s, 'I help.', 'Name: Ada')", (user, user))
    return c, "agent-" + user


def tools(c, a, fmt, names=None):
    return c.execute("SELECT memory_tools(%s, %s, %s)", (a, fmt, names)).fetchone()[0]


def call(c, a, name, args, thread=None):
    return c.execute("SELECT memory_tool_call(%s, %s, %s, %s)", (a, thread, name, Jsonb(args))).fetchone()[0]


def test_every_definition_is_valid_json_schema_in_every_format():
    c, a = agent()
    check = jsonschema.Draft202012Validator.check_schema
    for d in tools(c, a, "openai", ALL):
        assert d["type"] == "function" and set(d["function"]) == {"name", "description", "parameters"}, d
        check(d["function"]["parameters"])
    for d in tools(c, a, "mcp", ALL):
        assert set(d) == {"name", "description", "inputSchema"}, d
        assert d["inputSchema"]["type"] == "object"
        check(d["inputSchema"])
    for d in tools(c, a, "anthropic", ALL):
        if d["name"] == "memory":
            assert d == {"type": "memory_20250818", "name": "memory"}, d
        else:
            assert set(d) == {"name", "description", "input_schema"}, d
            check(d["input_schema"])


def test_arguments_the_schema_accepts_are_the_ones_the_call_accepts():
    c, a = agent()
    schema = {d["name"]: d["inputSchema"] for d in tools(c, a, "mcp", ALL)}
    good = {"query": "tea", "page": 1}
    jsonschema.validate(good, schema["archival_search"])
    assert call(c, a, "archival_search", good)["is_error"] is False
    for bad in ({"page": 1}, {"query": "tea", "page": -1}, {"query": "tea", "k": 2}):
        try:
            jsonschema.validate(bad, schema["archival_search"])
            raise AssertionError(f"schema accepted {bad}")
        except jsonschema.ValidationError:
            pass
        assert call(c, a, "archival_search", bad)["is_error"] is True, bad
    # The block enum is the agent's writable blocks.
    assert schema["memory_append"]["properties"]["block"]["enum"] == ["human", "persona"]


def test_the_default_set_is_small():
    c, a = agent()
    for fmt in ("openai", "anthropic", "mcp"):
        defs = tools(c, a, fmt)
        n = c.execute("SELECT count_tokens(memory_tools(%s, %s)::text)", (a, fmt)).fetchone()[0]
        print(f"     default set, {fmt}: {len(defs)} tools, {n} tokens (cl100k_base)")
        assert len(defs) <= 6 and n <= 2000, (fmt, len(defs), n)


def test_anthropic_memory_tool_transcript():
    c, a = agent()
    steps = [
        ({"command": "view", "path": "/memories"},
         "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n0B\t/memories", False),
        ({"command": "create", "path": "/memories/prefs.txt", "file_text": "Favorite color: blue\nLikes tea\n"},
         "File created successfully at: /memories/prefs.txt", False),
        ({"command": "str_replace", "path": "/memories/prefs.txt", "old_str": "Favorite color: blue", "new_str": "Favorite color: green"},
         "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
         "     1\tFavorite color: green\n     2\tLikes tea\n     3\t", False),
        ({"command": "insert", "path": "/memories/prefs.txt", "insert_line": 2, "insert_text": "Allergic to peanuts\n"},
         "The file /memories/prefs.txt has been edited.", False),
        ({"command": "view", "path": "/memories/prefs.txt", "view_range": [2, 3]},
         "Here's the content of /memories/prefs.txt with line numbers:\n     2\tLikes tea\n     3\tAllergic to peanuts", False),
        ({"command": "rename", "old_path": "/memories/prefs.txt", "new_path": "/memories/user/prefs.txt"},
         "Successfully renamed /memories/prefs.txt to /memories/user/prefs.txt", False),
        ({"command": "view", "path": "/memories"},
         "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n"
         "52B\t/memories\n52B\t/memories/user/\n52B\t/memories/user/prefs.txt", False),
        ({"command": "str_replace", "path": "/memories/user/prefs.txt", "old_str": "coffee", "new_str": "x"},
         "No replacement was performed, old_str `coffee` did not appear verbatim in /memories/user/prefs.txt.", True),
        ({"command": "view", "path": "/etc/passwd"}, "Path must start with /memories, got: /etc/passwd", True),
        ({"command": "delete", "path": "/memories/user/prefs.txt"}, "Successfully deleted /memories/user/prefs.txt", False),
        ({"command": "view", "path": "/memories/user/prefs.txt"},
         "The path /memories/user/prefs.txt does not exist. Please provide a valid path.", True),
    ]
    for args, want, is_error in steps:
        got = call(c, a, "memory", args)
        assert got == {"content": want, "is_error": is_error}, (args, got)


def test_the_example_agent_loop_against_a_scripted_model():
    """examples/agent_loop.py as a user runs it, with the stand-in playing a model that stores a
    fact and then searches for it (tests/standin, model `script-agent`)."""
    standin = os.environ.get("MEMORY_EXT_STANDIN")
    if not standin:
        raise AssertionError("MEMORY_EXT_STANDIN is not set")
    connect_as(DSN, ROLE, "unused").close()  # makes the ordinary role
    user = "pyx-" + uuid.uuid4().hex[:12]
    script = [
        {"name": "archival_insert", "arguments": {"content": "Ada is allergic to peanuts.", "tags": ["health"]}},
        {"name": "archival_search", "arguments": {"query": "peanut allergy"}},
    ]
    env = dict(os.environ, MEMORY_EXT_DSN=DSN + f" user={ROLE}", OPENAI_BASE_URL=standin + "/v1",
               MODEL="script-agent", MEMORY_USER=user, MEMORY_AGENT="agent-" + user,
               MEMORY_THREAD="thread-" + user, EXTRA_SYSTEM="SCRIPT: " + json.dumps(script))
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "..", "..", "examples", "agent_loop.py"),
                          "Remember that I am allergic to peanuts."],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Ada is allergic to peanuts." in out.stdout and "(tags: health)" in out.stdout, out.stdout
    c = connect_as(DSN, ROLE, user)
    rows = c.execute("SELECT role, tool_call_id, name FROM context_messages(%s)", ("thread-" + user,)).fetchall()
    assert [r[0] for r in rows] == ["user", "assistant", "tool", "assistant", "tool", "assistant"], rows
    assert rows[2][1:] == ("call_0", "archival_insert"), rows


def main():
    if not DSN:
        print("MEMORY_EXT_TEST_DSN is not set", file=sys.stderr)
        return 2
    return run_tests(globals(), f" (jsonschema {importlib.metadata.version('jsonschema')})")


if __name__ == "__main__":
    sys.exit(main())
