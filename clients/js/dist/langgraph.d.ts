export { MemoryExtSaver } from "./saver.js";
export { MemoryExtStore, SERVER_EMBEDDINGS, type MemoryExtIndexConfig } from "./store.js";
