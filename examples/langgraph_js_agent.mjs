// A LangGraph.js graph whose memory lives in memory_ext: MemoryExtSaver keeps each thread's
// state, MemoryExtStore (embedding with the extension's own model) keeps what the user said
// across threads. The node answers from what it finds; a chat model would go where it says so.
//
//   npm install --install-links ./clients/js @langchain/langgraph @langchain/core pg
//   MEMORY_EXT_DSN=postgres://postgres@127.0.0.1:55432/postgres node examples/langgraph_js_agent.mjs
import pg from "pg";
import { MessagesAnnotation, StateGraph, START } from "@langchain/langgraph";
import { AIMessage } from "@langchain/core/messages";
import { MemoryExtSaver, MemoryExtStore, SERVER_EMBEDDINGS } from "memory-ext/langgraph";

const pool = new pg.Pool({ connectionString: process.env.MEMORY_EXT_DSN ?? "postgres://postgres@127.0.0.1/postgres" });
const user = "example-eli";
const store = new MemoryExtStore(pool, { userId: user, index: { embeddings: SERVER_EMBEDDINGS, fields: ["text"] } });
const checkpointer = new MemoryExtSaver(pool, { userId: user });

async function agent(state, config) {
  const said = String(state.messages.at(-1).content);
  const ns = ["memories", user];
  if (said.toLowerCase().startsWith("remember")) await config.store.put(ns, "fact-1", { text: said.replace(/^remember( that)? /i, "") });
  const found = await config.store.search(ns, { query: said, limit: 3 });
  console.log(`  memories found: ${found.map((m) => `${m.value.text} (score ${m.score.toFixed(2)})`).join("; ") || "(none)"}`);
  // A chat model would answer here, given `found`; the example answers from it directly.
  return { messages: [new AIMessage(found.length ? `From memory: ${found[0].value.text}` : "Noted.")] };
}

const app = new StateGraph(MessagesAnnotation).addNode("agent", agent).addEdge(START, "agent").compile({ checkpointer, store });
for (const [thread, said] of [["monday", "Remember that I keep bees on the roof."], ["friday", "What is on my roof?"]]) {
  console.log(`thread ${thread}: ${said}`);
  const out = await app.invoke({ messages: [{ role: "user", content: said }] }, { configurable: { thread_id: thread } });
  console.log(`  assistant: ${out.messages.at(-1).content}`);
}
const state = await app.getState({ configurable: { thread_id: "monday" } });
console.log(`thread monday keeps ${state.values.messages.length} messages in its checkpoint`);
await store.delete(["memories", user], "fact-1");
await pool.end();
