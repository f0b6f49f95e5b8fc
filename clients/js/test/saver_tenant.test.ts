// Which tenant each MemoryExtSaver call acts for (0.13.0): the same rule for every method.
// A saver of one tenant refuses a config naming another; a saver of many refuses a call that
// names none, deleteThread included (it deleted nothing, silently, in the saver's own tenant).
import { emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryExtSaver } from "../src/saver.js";
import { newPool, tenant } from "./helpers.js";

const pool = newPool();
afterAll(() => pool.end());

const put = (saver: MemoryExtSaver, threadId: string, userId?: string) =>
  saver.put(
    { configurable: { thread_id: threadId, checkpoint_ns: "", ...(userId ? { user_id: userId } : {}) } },
    { ...emptyCheckpoint(), id: "1" },
    { source: "input", step: -1, parents: {} },
    {}
  );

describe("MemoryExtSaver's tenant", () => {
  it("a saver of many tenants needs each call to name one, deleteThread too", async () => {
    const many = new MemoryExtSaver(pool);
    const user = tenant("js-many");
    await put(many, "t-del", user);
    const cfg = { configurable: { thread_id: "t-del", checkpoint_ns: "", user_id: user } };
    expect(await many.getTuple(cfg)).toBeDefined();
    await expect(many.getTuple({ configurable: { thread_id: "t-del" } })).rejects.toThrow(/names no tenant/);
    await expect(many.deleteThread("t-del")).rejects.toThrow(/names no tenant/);
    await many.deleteThread("t-del", tenant("js-other"));
    expect(await many.getTuple(cfg)).toBeDefined();
    await many.deleteThread("t-del", user);
    expect(await many.getTuple(cfg)).toBeUndefined();
  });

  it("a saver of one tenant refuses a call naming another", async () => {
    const user = tenant("js-one");
    const own = new MemoryExtSaver(pool, { userId: user });
    await put(own, "t-own");
    await expect(put(own, "t-own", tenant("js-else"))).rejects.toThrow(/acts for user_id/);
    await expect(own.deleteThread("t-own", tenant("js-else"))).rejects.toThrow(/acts for user_id/);
    await own.deleteThread("t-own");
    expect(await own.getTuple({ configurable: { thread_id: "t-own", checkpoint_ns: "" } })).toBeUndefined();
  });
});
