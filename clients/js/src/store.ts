// LangGraph.js's BaseStore over memory_ext's store (docs/api.md "Store"): every batch of
// operations is one store_batch statement, its own transaction, for the tenant the store was made
// for. Semantic search, as LangGraph configures it with `index`:
//   - no index (the default): no vectors;
//   - { embeddings: SERVER_EMBEDDINGS, fields }: the extension embeds with its own model;
//   - { dims, embeddings, fields }: your LangChain Embeddings embed here, and the vectors are
//     stored with the item (LangGraph's PostgresStore way).
import type { Embeddings } from "@langchain/core/embeddings";
import {
  BaseStore,
  getTextAtPath,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { call, type Db } from "./db.js";

/** `index: { embeddings: SERVER_EMBEDDINGS }`: vectors from the extension's own model. */
export const SERVER_EMBEDDINGS = "memory_ext" as const;

export interface MemoryExtIndexConfig {
  embeddings: Embeddings | typeof SERVER_EMBEDDINGS;
  dims?: number;
  fields?: string[];
}

const isPut = (op: Operation): op is PutOperation => "value" in op;
const isSearch = (op: Operation): op is SearchOperation => "namespacePrefix" in op;
const isList = (op: Operation): op is ListNamespacesOperation => "limit" in op && !("namespacePrefix" in op) && !("key" in op);
const isGet = (op: Operation): op is GetOperation => "key" in op && !("value" in op);

const toItem = (a: any): Item => ({
  namespace: a.namespace,
  key: a.key,
  value: a.value,
  createdAt: new Date(a.created_at),
  updatedAt: new Date(a.updated_at),
});

export class MemoryExtStore extends BaseStore {
  readonly db: Db;
  readonly userId: string;
  readonly index?: MemoryExtIndexConfig;
  private readonly fields: string[];

  /** `db`: a `pg` Pool or Client; `userId`: the tenant every call acts for. */
  constructor(db: Db, opts: { userId: string; index?: MemoryExtIndexConfig }) {
    super();
    if (!opts.userId) throw new Error("userId is required: the tenant every call of this store acts for");
    this.db = db;
    this.userId = opts.userId;
    this.index = opts.index;
    this.fields = opts.index?.fields ?? ["$"];
  }

  private get clientEmbeddings(): Embeddings | undefined {
    const e = this.index?.embeddings;
    return e && e !== SERVER_EMBEDDINGS ? e : undefined;
  }

  /** The paths a put indexes, or undefined for no vectors. */
  private paths(op: PutOperation): string[] | undefined {
    if (!this.index || op.index === false) return undefined;
    return op.index && op.index.length ? op.index : this.fields;
  }

  /** (field, text) as the extension names them (memory_core::store::to_embed). */
  private texts(op: PutOperation, paths: string[]): [string, string][] {
    const out: [string, string][] = [];
    for (const path of paths) {
      const found = path === "$" ? [JSON.stringify(op.value)] : getTextAtPath(op.value, path);
      found.forEach((t, i) => {
        if (t.trim()) out.push([i === 0 ? path : `${path}#${i}`, t]);
      });
    }
    return out;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    if (!operations.length) return [] as OperationResults<Op>;
    const vectors = new Map<number, any>();
    const emb = this.clientEmbeddings;
    if (emb) {
      const docs: [number, string, string][] = [];
      operations.forEach((op, i) => {
        if (isPut(op) && op.value !== null) {
          for (const [field, t] of this.texts(op, this.paths(op) ?? [])) docs.push([i, field, t]);
        }
      });
      if (docs.length) {
        const vecs = await emb.embedDocuments(docs.map((d) => d[2]));
        docs.forEach(([i, field], j) => {
          const v = vectors.get(i) ?? {};
          v[field] = vecs[j];
          vectors.set(i, v);
        });
      }
      for (const [i, op] of operations.entries()) {
        if (isSearch(op) && op.query) vectors.set(i, await emb.embedQuery(op.query));
      }
    }
    const payload = operations.map((op, i) => this.json(op, vectors.get(i)));
    const answers: any[] = await call(this.db, this.userId, "SELECT store_batch($1, tenant.t) FROM {tenant}", [
      JSON.stringify(payload),
    ]);
    return operations.map((op, i) => {
      const a = answers[i];
      if (isPut(op)) return undefined;
      if (isSearch(op)) return (a ?? []).map((x: any): SearchItem => ({ ...toItem(x), score: x.score ?? undefined }));
      if (isList(op)) return a ?? [];
      return a ? toItem(a) : null;
    }) as OperationResults<Op>;
  }

  private json(op: Operation, vector: any): Record<string, unknown> {
    if (isPut(op)) {
      if (op.value === null) return { op: "delete", namespace: op.namespace, key: op.key };
      const paths = this.paths(op);
      const out: Record<string, unknown> = { op: "put", namespace: op.namespace, key: op.key, value: op.value, index: paths ?? false };
      if (vector) out.embeddings = vector;
      return out;
    }
    if (isSearch(op)) {
      const out: Record<string, unknown> = {
        op: "search",
        namespace_prefix: op.namespacePrefix,
        filter: op.filter ?? null,
        limit: op.limit ?? 10,
        offset: op.offset ?? 0,
      };
      if (op.query && this.index) {
        if (vector) out.query_embedding = vector;
        else out.query = op.query;
      }
      return out;
    }
    if (isList(op)) {
      const prefix: string[] = [];
      const suffix: string[] = [];
      for (const m of op.matchConditions ?? []) (m.matchType === "prefix" ? prefix : suffix).push(...m.path);
      return { op: "list_namespaces", prefix, suffix, max_depth: op.maxDepth ?? null, limit: op.limit, offset: op.offset };
    }
    if (isGet(op)) return { op: "get", namespace: op.namespace, key: op.key };
    throw new Error(`unknown store operation: ${JSON.stringify(op)}`);
  }
}
