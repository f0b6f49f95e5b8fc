// The agent tools for the Vercel AI SDK (docs/integrations.md): the definitions memory_tools()
// gives, each with an execute that runs memory_tool_call, for one agent of one tenant.
import { jsonSchema, tool } from "ai";
import { call } from "./db.js";
/** The agent, created with its default blocks when the tenant has none of that id. */
async function ensureAgent(db, opts) {
    await call(db, opts.tenant, "SELECT memory_agent($1, tenant.t) FROM {tenant}", [opts.agentId]);
}
/**
 * Tools for `generateText` / `streamText`: one per memory tool, each executing
 * `memory_tool_call` as a statement of its own for the tenant. A call the model gets wrong
 * comes back as the tool's error text, which the model can act on; nothing is written by it.
 */
export async function memoryTools(db, opts) {
    await ensureAgent(db, opts);
    const defs = await call(db, opts.tenant, "SELECT memory_tools($1, 'openai', $2) FROM {tenant}", [
        opts.agentId,
        opts.tools ?? null,
    ]);
    const out = {};
    for (const d of defs) {
        const fn = d.function;
        out[fn.name] = tool({
            description: fn.description,
            inputSchema: jsonSchema(fn.parameters),
            execute: async (input) => {
                const answer = await call(db, opts.tenant, "SELECT memory_tool_call($1, $2, $3, $4) FROM {tenant}", [opts.agentId, opts.threadId ?? null, fn.name, JSON.stringify(input ?? {})]);
                return answer.content;
            },
        });
    }
    return out;
}
/** The memory instructions for the system prompt, naming exactly the tools offered, and the
 * agent's core memory blocks as they are now. */
export async function memoryPrompt(db, opts) {
    await ensureAgent(db, opts);
    const prompt = await call(db, opts.tenant, "SELECT memory_prompt($1, NULL, $2) FROM {tenant}", [
        opts.agentId,
        opts.tools ?? null,
    ]);
    const blocks = await call(db, opts.tenant, "SELECT compile_core_blocks($1) FROM {tenant}", [opts.agentId]);
    return `${prompt}\n\n${blocks}`;
}
/** Keeps a message of the conversation in the thread's recall memory (message_append), where
 * conversation_search finds it later; the thread starts with its first message. */
export async function appendMessage(db, opts, role, content) {
    return call(db, opts.tenant, "SELECT message_append($1, $2, $3, tenant.t) FROM {tenant}", [opts.threadId, role, content]);
}
