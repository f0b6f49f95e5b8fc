// memory-ext/ai: the Vercel AI SDK's tools over memory_ext's agent tools.
export { memoryTools, memoryPrompt, appendMessage, type MemoryToolsOptions } from "./tools.js";
