// memory-ext/langgraph: LangGraph.js's store and checkpointer over memory_ext.
export { MemoryExtSaver } from "./saver.js";
export { MemoryExtStore, SERVER_EMBEDDINGS, type MemoryExtIndexConfig } from "./store.js";
