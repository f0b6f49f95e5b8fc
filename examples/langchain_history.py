"""A LangChain chain with its chat history in memory_ext (MemoryExtChatMessageHistory, one
thread of recall memory per session), and what a later session finds of an earlier one through
memory_ext's conversation search. A scripted chat model stands in for a real one.

    MEMORY_EXT_DSN="host=127.0.0.1 port=55432 dbname=postgres user=postgres" python3 examples/langchain_history.py

Needs: pip install ./clients/python langchain-core
"""

import os

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from memory_ext import MemoryExtChatMessageHistory, memory_tools

DSN = os.environ.get("MEMORY_EXT_DSN", "dbname=postgres")
USER = "example-cy"
model = GenericFakeChatModel(messages=iter(["Got it: Lisbon in May.", "You are going to Lisbon in May."]))
prompt = ChatPromptTemplate.from_messages([("system", "{memory}"), MessagesPlaceholder("history"), ("human", "{input}")])
chain = RunnableWithMessageHistory(prompt | model,
                                   lambda session_id: MemoryExtChatMessageHistory(session_id, user_id=USER, dsn=DSN),
                                   input_messages_key="input", history_messages_key="history")
tools = memory_tools(dsn=DSN, user_id=USER, agent_id="assistant")
for session, text in [("trip-planning", "I'm going to Lisbon in May."), ("later", "Where am I travelling?")]:
    found = tools.call("conversation_search", {"query": "travel trip going to"})["content"]
    reply = chain.invoke({"input": text, "memory": f"Earlier conversations:\n{found}"},
                         {"configurable": {"session_id": session}})
    print(f"{session}: {text}\n  found in recall: {found[:160]!r}\n  assistant: {reply.content}")
print("trip-planning holds", len(MemoryExtChatMessageHistory("trip-planning", user_id=USER, dsn=DSN).messages), "messages")
