import { type ToolSet } from "ai";
import { type Db } from "./db.js";
export interface MemoryToolsOptions {
    /** The agent whose memory the tools edit and search (created with its default blocks). */
    agentId: string;
    /** The tenant every call acts for. */
    tenant: string;
    /** The conversation the calls belong to (a thread starts with its first message: appendMessage). */
    threadId?: string | null;
    /** The tools to offer (memory_tools' names); the agent's default set when absent. */
    tools?: string[];
}
/**
 * Tools for `generateText` / `streamText`: one per memory tool, each executing
 * `memory_tool_call` as a statement of its own for the tenant. A call the model gets wrong
 * comes back as the tool's error text, which the model can act on; nothing is written by it.
 */
export declare function memoryTools(db: Db, opts: MemoryToolsOptions): Promise<ToolSet>;
/** The memory instructions for the system prompt, naming exactly the tools offered, and the
 * agent's core memory blocks as they are now. */
export declare function memoryPrompt(db: Db, opts: MemoryToolsOptions): Promise<string>;
/** Keeps a message of the conversation in the thread's recall memory (message_append), where
 * conversation_search finds it later; the thread starts with its first message. */
export declare function appendMessage(db: Db, opts: {
    tenant: string;
    threadId: string;
}, role: "system" | "user" | "assistant" | "tool", content: string): Promise<{
    id: string;
    seq: number;
    tokens: number;
}>;
