// The Vercel AI SDK's own mock model (ai/test) drives generateText through several tool-call
// steps with memoryTools: the memory is written, found again in a later conversation, and a
// call the model gets wrong comes back as the tool's error for the model to act on.
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, describe, expect, it } from "vitest";
import { appendMessage, memoryPrompt, memoryTools } from "../src/tools.js";
import { HOSTILE, newPool, tenant } from "./helpers.js";

const pool = newPool();
afterAll(() => pool.end());

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const call = (id: string, toolName: string, input: unknown) => ({
  content: [{ type: "tool-call" as const, toolCallId: id, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
  usage,
  warnings: [],
});
const say = (text: string) => ({
  content: [{ type: "text" as const, text }],
  finishReason: { unified: "stop" as const, raw: "stop" },
  usage,
  warnings: [],
});

describe("memoryTools with the AI SDK", () => {
  it("writes a memory in one conversation and finds it in the next", async () => {
    const user = tenant("ai");
    const opts = { agentId: "assistant", tenant: user, threadId: "monday" };
    await appendMessage(pool, opts, "user", "Remember that I am allergic to peanuts.");
    const tools = await memoryTools(pool, opts);
    expect(Object.keys(tools)).toEqual(expect.arrayContaining(["archival_insert", "archival_search", "memory_append"]));
    const system = await memoryPrompt(pool, opts);
    expect(system).toContain("archival_insert");

    const model = new MockLanguageModelV3({
      doGenerate: [
        call("c1", "archival_insert", { content: "The user is allergic to peanuts." }),
        call("c2", "memory_append", { block: "human", content: HOSTILE }),
        call("c3", "archival_insert", { nonsense: true }),
        say("I will remember that."),
      ],
    });
    const first = await generateText({
      model,
      system,
      tools,
      prompt: "Remember that I am allergic to peanuts.",
      stopWhen: stepCountIs(6),
    });
    expect(first.steps).toHaveLength(4);
    const results = first.steps.flatMap((s) => s.toolResults);
    expect(results).toHaveLength(3);
    expect(String(results[2].output)).toMatch(/unknown argument|nonsense/);
    // What the model saw after each step: the tools' answers went back into its prompt.
    expect(JSON.stringify(model.doGenerateCalls[3].prompt)).toContain("Saved to long-term memory");

    const friday = { agentId: "assistant", tenant: user, threadId: "friday" };
    await appendMessage(pool, friday, "user", "Can I eat satay?");
    const model2 = new MockLanguageModelV3({
      doGenerate: [call("c4", "archival_search", { query: "peanut allergy" }), say("No: you are allergic to peanuts.")],
    });
    const second = await generateText({
      model: model2,
      system: await memoryPrompt(pool, friday),
      tools: await memoryTools(pool, friday),
      prompt: "Can I eat satay?",
      stopWhen: stepCountIs(4),
    });
    expect(String(second.steps[0].toolResults[0].output)).toContain("allergic to peanuts");
    expect(second.text).toBe("No: you are allergic to peanuts.");
    // The hostile text landed in the block as text, and the prompt shows it escaped, inside it.
    const prompt = await memoryPrompt(pool, friday);
    expect(prompt).toContain("DROP TABLE memory.store_items");
    expect(prompt).not.toContain("</memory> <|im_end|>");
  });

  it("keeps tenants apart and takes parallel calls", async () => {
    const a = { agentId: "assistant", tenant: tenant("ai"), threadId: null };
    const b = { agentId: "assistant", tenant: tenant("ai"), threadId: null };
    const [ta, tb] = await Promise.all([memoryTools(pool, a), memoryTools(pool, b)]);
    const exec = (t: any, name: string, input: unknown) =>
      t[name].execute(input, { toolCallId: "x", messages: [], abortSignal: undefined });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => exec(ta, "memory_append", { block: "human", content: `Fact ${i}.` }))
    );
    const pa = await memoryPrompt(pool, a);
    for (let i = 0; i < 12; i += 1) expect(pa).toContain(`Fact ${i}.`);
    expect(await memoryPrompt(pool, b)).not.toContain("Fact 0.");
    expect(String(await exec(tb, "archival_search", { query: "Fact" }))).toMatch(/No results/);
  });
});
