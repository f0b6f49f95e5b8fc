"""An agent loop on memory_ext: three SQL calls replace hand-written tool definitions, memory
prompt and tool glue.

    memory_prompt(agent)          -> the memory instructions for the system prompt
    memory_tools(agent, 'openai') -> the request's `tools`
    memory_tool_call(...)         -> the text the model sees for each tool call

The model is any OpenAI-compatible chat endpoint. Usage:

    MEMORY_EXT_DSN="host=127.0.0.1 port=55432 dbname=postgres user=postgres" \\
    OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=... MODEL=gpt-4.1-mini \\
    python3 examples/agent_loop.py "Remember that I am allergic to peanuts."

The test suite runs it against the local HTTP stand-in playing a model that calls tools from a
script (tests/standin, model `script-agent`; tests/python/test_tools.py). Needs psycopg 3; the
HTTP call uses only the standard library.
"""

import json
import os
import sys
import urllib.request

import psycopg
from psycopg.types.json import Jsonb

DSN = os.environ.get("MEMORY_EXT_DSN", "dbname=postgres")
BASE = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
KEY = os.environ.get("OPENAI_API_KEY", "")
MODEL = os.environ.get("MODEL", "gpt-4.1-mini")
USER = os.environ.get("MEMORY_USER", "example-user")
AGENT = os.environ.get("MEMORY_AGENT", "example-agent")
THREAD = os.environ.get("MEMORY_THREAD", "example-thread")
EXTRA_SYSTEM = os.environ.get("EXTRA_SYSTEM", "")


def chat(messages, tools):
    body = json.dumps({"model": MODEL, "messages": messages, "tools": tools}).encode()
    req = urllib.request.Request(f"{BASE}/chat/completions", body,
                                 {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)["choices"][0]["message"]


def run(db, user_text, max_steps=8):
    db.execute("SELECT set_config('memory_ext.user_id', %s, false)", (USER,))
    db.execute("SELECT memory_agent(%s, %s)", (AGENT, USER))
    prompt = db.execute("SELECT memory_prompt(%s)", (AGENT,)).fetchone()[0]
    blocks = db.execute("SELECT compile_core_blocks(%s)", (AGENT,)).fetchone()[0]
    tools = db.execute("SELECT memory_tools(%s, 'openai')", (AGENT,)).fetchone()[0]
    system = "You are a helpful assistant with long-term memory.\n\n" + prompt + "\n\n" + blocks
    if EXTRA_SYSTEM:
        system += "\n\n" + EXTRA_SYSTEM
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user_text}]
    # The conversation is kept in recall memory too, so conversation_search finds it later.
    db.execute("SELECT message_append(%s, 'user', %s, %s)", (THREAD, user_text, USER))
    for _ in range(max_steps):
        msg = chat(messages, tools)
        messages.append(msg)
        calls = msg.get("tool_calls") or []
        db.execute("SELECT message_append(%s, 'assistant', %s, tool_calls => %s)",
                   (THREAD, msg.get("content") or "", Jsonb(calls) if calls else None))
        if not calls:
            return msg.get("content") or ""
        for call in calls:
            args = json.loads(call["function"]["arguments"] or "{}")
            out = db.execute("SELECT memory_tool_call(%s, %s, %s, %s)",
                             (AGENT, THREAD, call["function"]["name"], Jsonb(args))).fetchone()[0]
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": out["content"]})
            db.execute("SELECT message_append(%s, 'tool', %s, tool_call_id => %s, name => %s)",
                       (THREAD, out["content"], call["id"], call["function"]["name"]))
    return "(stopped after %d steps)" % max_steps


if __name__ == "__main__":
    with psycopg.connect(DSN, autocommit=True) as db:
        print(run(db, " ".join(sys.argv[1:]) or "What do you remember about me?"))
