// A Vercel AI SDK agent whose memory lives in memory_ext: memoryTools gives generateText the
// agent's memory tools; a fact saved in Monday's conversation is found in Friday's. The AI
// SDK's own mock model (ai/test) plays a scripted model, so this runs offline; pass a real
// model (openai("gpt-4.1-mini")) instead.
//
//   npm install --install-links ./clients/js ai pg
//   MEMORY_EXT_DSN=postgres://postgres@127.0.0.1:55432/postgres node examples/ai_sdk_agent.mjs
import pg from "pg";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { appendMessage, memoryPrompt, memoryTools } from "memory-ext/ai";

const pool = new pg.Pool({ connectionString: process.env.MEMORY_EXT_DSN ?? "postgres://postgres@127.0.0.1/postgres" });
const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
const step = (content, unified) => ({ content, finishReason: { unified, raw: unified }, usage, warnings: [] });
const toolCall = (id, toolName, input) => step([{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }], "tool-calls");
const text = (t) => step([{ type: "text", text: t }], "stop");
const script = {
  monday: [toolCall("c1", "archival_insert", { content: "Dana is training for the Berlin marathon in September." }), text("Good luck with the training!")],
  friday: [toolCall("c2", "archival_search", { query: "marathon race" }), text("Your Berlin marathon is in September.")],
};

for (const [threadId, said] of [["monday", "I'm training for the Berlin marathon in September."], ["friday", "When is my race?"]]) {
  const opts = { agentId: "assistant", tenant: "example-dana", threadId };
  await appendMessage(pool, opts, "user", said);
  const result = await generateText({
    model: new MockLanguageModelV3({ doGenerate: script[threadId] }),
    system: await memoryPrompt(pool, opts),
    tools: await memoryTools(pool, opts),
    prompt: said,
    stopWhen: stepCountIs(4),
  });
  console.log(`${threadId}: ${said}`);
  for (const r of result.steps.flatMap((s) => s.toolResults)) console.log(`  ${r.toolName} said: ${String(r.output).slice(0, 160)}`);
  console.log(`  assistant: ${result.text}`);
}
await pool.end();
