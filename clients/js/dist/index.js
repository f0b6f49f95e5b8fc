// memory_ext for TypeScript agent frameworks: the extension's SQL functions behind the Vercel
// AI SDK's tools ("memory-ext/ai") and LangGraph.js's store and checkpointer
// ("memory-ext/langgraph"). Every call is one statement that names its tenant for its own
// transaction (set_config('memory_ext.user_id', ..., true)), so pooled connections carry nothing over. Each
// framework is an optional peer dependency, loaded only through its own entry point.
export { REQUIRED_VERSION, VersionError, checkVersion, tenantRows, call } from "./db.js";
