"""An OpenAI Agents SDK agent on memory_ext: MemoryExtSession keeps each conversation, and two
function tools over memory_tools' dispatcher keep facts across conversations. The SDK's own
ScriptedModel stands in for a real model (drop `model=` to use OpenAI), so this runs offline.

    MEMORY_EXT_DSN="host=127.0.0.1 port=55432 dbname=postgres user=postgres" python3 examples/agents_sdk.py

Needs: pip install ./clients/python openai-agents
"""

import os

from agents import Agent, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from memory_ext import MemoryExtSession, memory_tools

DSN = os.environ.get("MEMORY_EXT_DSN", "dbname=postgres")
USER = "example-bob"
memory = memory_tools(dsn=DSN, user_id=USER, agent_id="assistant")


@function_tool
def remember(fact: str) -> str:
    """Keeps a fact about the user for later conversations."""
    return memory.call("archival_insert", {"content": fact})["content"]


@function_tool
def recall(query: str) -> str:
    """Looks up what is known about the user."""
    return memory.call("archival_search", {"query": query})["content"]


model = ScriptedModel([
    [function_call("remember", {"fact": "Bob's daughter is called Mia."}, call_id="c1")],
    [assistant_message("I'll remember that.")],
    [function_call("recall", {"query": "daughter name"}, call_id="c2")],
    [assistant_message("Your daughter is Mia.")],
])
agent = Agent(name="assistant", instructions="Remember what matters.", model=model, tools=[remember, recall])
for conversation, text in [("conv-1", "My daughter is called Mia."), ("conv-2", "What's my daughter's name?")]:
    session = MemoryExtSession(conversation, dsn=DSN, user_id=USER)
    result = Runner.run_sync(agent, text, session=session)
    print(f"{conversation}: {text}\n  assistant: {result.final_output}")
    for item in result.new_items:
        if item.type == "tool_call_output_item":
            print(f"  tool said: {item.output[:200]}")
    session.close()
memory.close()
