// MemoryExtStore under the cases LangGraph's Python store tests put to PostgresStore (the same
// cases the Python package runs as published: clients/python/tests/run.sh), ported: batch
// order, basic operations, filters with every operator, namespaces by prefix, suffix, wildcard
// and depth, vector search with the caller's embeddings and with the extension's, per-put
// index fields; then hostile text, parallel puts of one key, tenants apart.
import { Embeddings } from "@langchain/core/embeddings";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryExtStore, SERVER_EMBEDDINGS } from "../src/store.js";
import { HOSTILE, newPool, tenant } from "./helpers.js";

const pool = newPool();
afterAll(() => pool.end());

/** Deterministic vectors: one dimension per known word, so cosine scores are predictable. */
class WordEmbeddings extends Embeddings {
  calls: string[][] = [];
  static words = ["apple", "banana", "car", "engine", "fruit", "hello", "world"];
  constructor() {
    super({});
  }
  vec(t: string) {
    const v = WordEmbeddings.words.map((w) => (t.toLowerCase().includes(w) ? 1 : 0));
    v.push(0.01);
    return v;
  }
  async embedDocuments(texts: string[]) {
    this.calls.push(texts);
    return texts.map((t) => this.vec(t));
  }
  async embedQuery(t: string) {
    return this.vec(t);
  }
}

describe("MemoryExtStore", () => {
  it("answers a batch in the order of its operations", async () => {
    const store = new MemoryExtStore(pool, { userId: tenant("store") });
    await store.put(["test", "foo"], "key1", { data: "value1" });
    await store.put(["test", "bar"], "key2", { data: "value2" });
    const results = await store.batch([
      { namespace: ["test", "foo"], key: "key1" },
      { namespace: ["test", "baz"], key: "key3", value: { data: "value3" } },
      { namespacePrefix: ["test"], limit: 10, offset: 0 },
      { limit: 10, offset: 0 },
      { namespace: ["test", "bar"], key: "key2" },
    ]);
    expect((results[0] as any).value).toEqual({ data: "value1" });
    expect(results[1]).toBeUndefined();
    expect((results[2] as any[]).map((i) => i.key).sort()).toEqual(["key1", "key2", "key3"]);
    expect((results[3] as string[][]).map((n) => n.join("/")).sort()).toEqual(["test/bar", "test/baz", "test/foo"]);
    expect((results[4] as any).value).toEqual({ data: "value2" });
  });

  it("puts, gets, updates and deletes", async () => {
    const store = new MemoryExtStore(pool, { userId: tenant("store") });
    const ns = ["test", "documents"];
    expect(await store.get(ns, "nope")).toBeNull();
    await store.put(ns, "doc", { title: "Test Document", nested: { a: [1, null, "x"] } });
    const first = await store.get(ns, "doc");
    expect(first?.value).toEqual({ title: "Test Document", nested: { a: [1, null, "x"] } });
    expect(first?.namespace).toEqual(ns);
    expect(first?.createdAt).toBeInstanceOf(Date);
    await new Promise((r) => setTimeout(r, 10));
    await store.put(ns, "doc", { title: "Updated" });
    const second = await store.get(ns, "doc");
    expect(second?.value).toEqual({ title: "Updated" });
    expect(second!.updatedAt.getTime()).toBeGreaterThan(first!.updatedAt.getTime());
    expect(second!.createdAt.getTime()).toBe(first!.createdAt.getTime());
    await store.delete(ns, "doc");
    expect(await store.get(ns, "doc")).toBeNull();
  });

  it("filters by value with every operator", async () => {
    const store = new MemoryExtStore(pool, { userId: tenant("store") });
    const docs = [
      { key: "a", value: { color: "red", score: 4.5, tags: { kind: "x" } } },
      { key: "b", value: { color: "blue", score: 3.0, tags: { kind: "y" } } },
      { key: "c", value: { color: "red", score: 2.5, tags: { kind: "y" } } },
    ];
    for (const d of docs) await store.put(["f"], d.key, d.value);
    const keys = async (filter: Record<string, any>) =>
      (await store.search(["f"], { filter })).map((i) => i.key).sort();
    expect(await keys({ color: "red" })).toEqual(["a", "c"]);
    expect(await keys({ color: { $eq: "blue" } })).toEqual(["b"]);
    expect(await keys({ color: { $ne: "red" } })).toEqual(["b"]);
    expect(await keys({ score: { $gt: 3.0 } })).toEqual(["a"]);
    expect(await keys({ score: { $gte: 3.0 } })).toEqual(["a", "b"]);
    expect(await keys({ score: { $lt: 3.0 } })).toEqual(["c"]);
    expect(await keys({ score: { $lte: 3.0 } })).toEqual(["b", "c"]);
    expect(await keys({ color: "red", score: { $gt: 3.0 } })).toEqual(["a"]);
    expect(await keys({ tags: { kind: "y" } })).toEqual(["b", "c"]);
    expect((await store.search(["f"], { limit: 2 })).length).toBe(2);
    expect((await store.search(["f"], { limit: 2, offset: 2 })).length).toBe(1);
  });

  it("lists namespaces by prefix, suffix, wildcard and depth", async () => {
    const store = new MemoryExtStore(pool, { userId: tenant("store") });
    const namespaces = [
      ["a", "b", "c"],
      ["a", "b", "d", "e"],
      ["a", "b", "d", "i"],
      ["a", "b", "f"],
      ["a", "c", "f"],
      ["b", "a", "f"],
      ["users", "123"],
      ["users", "456", "settings"],
      ["admin", "users", "789"],
    ];
    for (const [i, ns] of namespaces.entries()) await store.put(ns, `id_${i}`, { data: i });
    const names = (r: string[][]) => r.map((n) => n.join("/")).sort();
    expect(names(await store.listNamespaces({ prefix: ["a", "b"] }))).toEqual(["a/b/c", "a/b/d/e", "a/b/d/i", "a/b/f"]);
    expect(names(await store.listNamespaces({ suffix: ["f"] }))).toEqual(["a/b/f", "a/c/f", "b/a/f"]);
    expect(names(await store.listNamespaces({ prefix: ["a"], suffix: ["f"] }))).toEqual(["a/b/f", "a/c/f"]);
    expect(names(await store.listNamespaces({ prefix: ["a", "*", "f"] }))).toEqual(["a/b/f", "a/c/f"]);
    expect(names(await store.listNamespaces({ prefix: ["a", "b"], maxDepth: 3 }))).toEqual(["a/b/c", "a/b/d", "a/b/f"]);
    expect(names(await store.listNamespaces({ prefix: ["users"] }))).toEqual(["users/123", "users/456/settings"]);
    expect((await store.listNamespaces({ limit: 3 })).length).toBe(3);
    expect(names(await store.listNamespaces({ limit: 100, offset: 8 }))).toHaveLength(1);
  });

  it("searches by meaning with the caller's embeddings, on the fields asked for", async () => {
    const emb = new WordEmbeddings();
    const store = new MemoryExtStore(pool, { userId: tenant("store"), index: { dims: 8, embeddings: emb, fields: ["text"] } });
    await store.put(["docs"], "fruit", { text: "apple and banana", other: "car" });
    await store.put(["docs"], "motor", { text: "car engine", other: "apple" });
    await store.put(["docs"], "plain", { text: "hello world" }, false);
    await store.put(["docs"], "other", { text: "nothing", other: "apple banana fruit" }, ["other"]);
    expect(emb.calls.flat()).not.toContain("hello world");
    expect(emb.calls.flat()).toContain("apple banana fruit");
    const hits = await store.search(["docs"], { query: "apple banana fruit" });
    expect(hits[0].key).toBe("other");
    expect(hits[0].score).toBeGreaterThan(0.99);
    expect(hits.map((h) => h.key)).toContain("fruit");
    const fruit = hits.find((h) => h.key === "fruit")!;
    const motor = hits.find((h) => h.key === "motor");
    expect(fruit.score!).toBeGreaterThan(motor?.score ?? 0);
    // Scores are absolute: the same item scores the same in another call.
    const again = await store.search(["docs"], { query: "apple banana fruit", limit: 1 });
    expect(again[0].score).toBeCloseTo(hits[0].score!, 6);
  });

  it("searches by meaning with the extension's own model", async () => {
    const store = new MemoryExtStore(pool, {
      userId: tenant("store"),
      index: { embeddings: SERVER_EMBEDDINGS, fields: ["text"] },
    });
    await store.put(["m"], "tea", { text: "Ann drinks green tea without sugar." });
    await store.put(["m"], "car", { text: "The car needs new tyres before winter." });
    const hits = await store.search(["m"], { query: "what does Ann like to drink?" });
    expect(hits[0].key).toBe("tea");
    expect(hits[0].score!).toBeGreaterThan(hits[1].score ?? -1);
  });

  it("keeps hostile text as written, takes parallel puts of one key, and keeps tenants apart", async () => {
    const user = tenant("store");
    const store = new MemoryExtStore(pool, { userId: user });
    // (LangGraph.js's BaseStore itself refuses labels with a period, a colon or NUL.)
    const ns = ["a/b", "ünï cödé", HOSTILE.slice(0, 60).replace(/[.:]/g, "")];
    await store.put(ns, "k'\"; --", { text: HOSTILE, n: 1 });
    expect((await store.get(ns, "k'\"; --"))?.value).toEqual({ text: HOSTILE, n: 1 });
    await Promise.all(Array.from({ length: 16 }, (_, i) => store.put(["race"], "one", { i })));
    const one = await store.get(["race"], "one");
    expect(typeof one?.value.i).toBe("number");
    expect((await store.search(["race"])).length).toBe(1);
    const other = new MemoryExtStore(pool, { userId: tenant("store") });
    expect(await other.get(ns, "k'\"; --")).toBeNull();
    expect(await other.listNamespaces()).toEqual([]);
    await expect(store.put([], "k", { a: 1 })).rejects.toThrow();
  });

  it("leaves no tenant on a pooled connection, after a call that worked or one that failed", async () => {
    const one = newPool(1);
    try {
      const store = new MemoryExtStore(one, { userId: tenant("store") });
      const leftover = async () =>
        (await one.query("SELECT coalesce(current_setting('memory_ext.user_id', true), '') AS t")).rows[0].t;
      await store.put(["a"], "k", { v: 1 });
      expect(await leftover()).toBe("");
      await expect(store.batch([{ namespace: ["a"], key: "", value: { v: 1 } }])).rejects.toThrow();
      expect(await leftover()).toBe("");
    } finally {
      await one.end();
    }
  });
});
