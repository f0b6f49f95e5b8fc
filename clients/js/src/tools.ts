// The agent tools for the Vercel AI SDK (docs/integrations.md): the definitions memory_tools()
// gives, each with an execute that runs memory_tool_call, for one agent of one tenant.
import { jsonSchema, tool, type ToolSet } from "ai";
import { call, type Db } from "./db.js";

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

/** The agent, created with its default blocks when the tenant has none of that id. */
async function ensureAgent(db: Db, opts: MemoryToolsOptions): Promise<void> {
  await call(db, opts.tenant, "SELECT memory_agent($1, tenant.t) FROM {tenant}", [opts.agentId]);
}

/**
 * Tools for `generateText` / `streamText`: one per memory tool, each executing
 * `memory_tool_call` as a statement of its own for the tenant. A call the model gets wrong
 * comes back as the tool's error text, which the model can act on; nothing is written by it.
 */
export async function memoryTools(db: Db, opts: MemoryToolsOptions): Promise<ToolSet> {
  await ensureAgent(db, opts);
  const defs: any[] = await call(db, opts.tenant, "SELECT memory_tools($1, 'openai', $2) FROM {tenant}", [
    opts.agentId,
    opts.tools ?? null,
  ]);
  const out: ToolSet = {};
  for (const d of defs) {
    const fn = d.function;
    out[fn.name] = tool({
      description: fn.description,
      inputSchema: jsonSchema(fn.parameters),
      execute: async (input: unknown) => {
        const answer: { content: string; is_error: boolean } = await call(
          db,
          opts.tenant,
          "SELECT memory_tool_call($1, $2, $3, $4) FROM {tenant}",
          [opts.agentId, opts.threadId ?? null, fn.name, JSON.stringify(input ?? {})]
        );
        return answer.content;
      },
    });
  }
  return out;
}

/** The memory instructions for the system prompt, naming exactly the tools offered, and the
 * agent's core memory blocks as they are now. */
export async function memoryPrompt(db: Db, opts: MemoryToolsOptions): Promise<string> {
  await ensureAgent(db, opts);
  const prompt: string = await call(db, opts.tenant, "SELECT memory_prompt($1, NULL, $2) FROM {tenant}", [
    opts.agentId,
    opts.tools ?? null,
  ]);
  const blocks: string = await call(db, opts.tenant, "SELECT compile_core_blocks($1) FROM {tenant}", [opts.agentId]);
  return `${prompt}\n\n${blocks}`;
}

/** Keeps a message of the conversation in the thread's recall memory (message_append), where
 * conversation_search finds it later; the thread starts with its first message. */
export async function appendMessage(
  db: Db,
  opts: { tenant: string; threadId: string },
  role: "system" | "user" | "assistant" | "tool",
  content: string
): Promise<{ id: string; seq: number; tokens: number }> {
  return call(db, opts.tenant, "SELECT message_append($1, $2, $3, tenant.t) FROM {tenant}", [opts.threadId, role, content]);
}
