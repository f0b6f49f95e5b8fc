"""A LangGraph agent whose memory lives in memory_ext: MemoryExtSaver keeps each thread's state,
MemoryExtStore keeps what the user said across threads. A scripted chat model stands in for a
real one (swap in ChatOpenAI or any chat model), so this runs without a network.

    MEMORY_EXT_DSN="host=127.0.0.1 port=55432 dbname=postgres user=postgres" python3 examples/langgraph_agent.py

Needs: pip install ./clients/python langgraph
"""

import os

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore

from memory_ext import SERVER_EMBEDDINGS, MemoryExtSaver, MemoryExtStore

DSN = os.environ.get("MEMORY_EXT_DSN", "dbname=postgres")
USER = "example-ann"
model = GenericFakeChatModel(messages=iter(["Noted.", "You are allergic to peanuts."]))


def agent(state: MessagesState, *, store: BaseStore) -> dict:
    said = state["messages"][-1].content
    ns = ("memories", USER)
    if said.lower().startswith("remember"):
        store.put(ns, str(len(store.search(ns, limit=100))), {"text": said.split(" ", 2)[-1]})
    found = store.search(ns, query=said, limit=3)
    known = "\n".join(f"- {m.value['text']} (score {m.score:.2f})" for m in found)
    print(f"  memories found for {said!r}:\n{known or '  (none)'}")
    reply = model.invoke([SystemMessage(f"What you know about the user:\n{known}")] + state["messages"])
    return {"messages": [reply]}


graph = StateGraph(MessagesState).add_node(agent).add_edge(START, "agent")
with MemoryExtStore.from_conn_string(DSN, user_id=USER,
                                     index={"embed": SERVER_EMBEDDINGS, "fields": ["text"]}) as store, \
        MemoryExtSaver.from_conn_string(DSN, user_id=USER) as saver:
    app = graph.compile(checkpointer=saver, store=store)
    for thread, text in [("monday", "Remember that I am allergic to peanuts."),
                         ("friday", "Can I eat this satay sauce?")]:
        print(f"thread {thread}: {text}")
        out = app.invoke({"messages": [("user", text)]}, {"configurable": {"thread_id": thread}})
        print(f"  assistant: {out['messages'][-1].content}")
    state = app.get_state({"configurable": {"thread_id": "monday"}})
    print(f"thread monday keeps {len(state.values['messages'])} messages in its checkpoint")
    store.delete(("memories", USER), "0")
