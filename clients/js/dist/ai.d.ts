export { memoryTools, memoryPrompt, appendMessage, type MemoryToolsOptions } from "./tools.js";
