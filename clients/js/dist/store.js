import { BaseStore, getTextAtPath, } from "@langchain/langgraph-checkpoint";
import { call } from "./db.js";
/** `index: { embeddings: SERVER_EMBEDDINGS }`: vectors from the extension's own model. */
export const SERVER_EMBEDDINGS = "memory_ext";
const isPut = (op) => "value" in op;
const isSearch = (op) => "namespacePrefix" in op;
const isList = (op) => "limit" in op && !("namespacePrefix" in op) && !("key" in op);
const isGet = (op) => "key" in op && !("value" in op);
const toItem = (a) => ({
    namespace: a.namespace,
    key: a.key,
    value: a.value,
    createdAt: new Date(a.created_at),
    updatedAt: new Date(a.updated_at),
});
export class MemoryExtStore extends BaseStore {
    db;
    userId;
    index;
    fields;
    /** `db`: a `pg` Pool or Client; `userId`: the tenant every call acts for. */
    constructor(db, opts) {
        super();
        if (!opts.userId)
            throw new Error("userId is required: the tenant every call of this store acts for");
        this.db = db;
        this.userId = opts.userId;
        this.index = opts.index;
        this.fields = opts.index?.fields ?? ["$"];
    }
    get clientEmbeddings() {
        const e = this.index?.embeddings;
        return e && e !== SERVER_EMBEDDINGS ? e : undefined;
    }
    /** The paths a put indexes, or undefined for no vectors. */
    paths(op) {
        if (!this.index || op.index === false)
            return undefined;
        return op.index && op.index.length ? op.index : this.fields;
    }
    /** (field, text) as the extension names them (memory_core::store::to_embed). */
    texts(op, paths) {
        const out = [];
        for (const path of paths) {
            const found = path === "$" ? [JSON.stringify(op.value)] : getTextAtPath(op.value, path);
            found.forEach((t, i) => {
                if (t.trim())
                    out.push([i === 0 ? path : `${path}#${i}`, t]);
            });
        }
        return out;
    }
    async batch(operations) {
        if (!operations.length)
            return [];
        const vectors = new Map();
        const emb = this.clientEmbeddings;
        if (emb) {
            const docs = [];
            operations.forEach((op, i) => {
                if (isPut(op) && op.value !== null) {
                    for (const [field, t] of this.texts(op, this.paths(op) ?? []))
                        docs.push([i, field, t]);
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
                if (isSearch(op) && op.query)
                    vectors.set(i, await emb.embedQuery(op.query));
            }
        }
        const payload = operations.map((op, i) => this.json(op, vectors.get(i)));
        const answers = await call(this.db, this.userId, "SELECT store_batch($1, tenant.t) FROM {tenant}", [
            JSON.stringify(payload),
        ]);
        return operations.map((op, i) => {
            const a = answers[i];
            if (isPut(op))
                return undefined;
            if (isSearch(op))
                return (a ?? []).map((x) => ({ ...toItem(x), score: x.score ?? undefined }));
            if (isList(op))
                return a ?? [];
            return a ? toItem(a) : null;
        });
    }
    json(op, vector) {
        if (isPut(op)) {
            if (op.value === null)
                return { op: "delete", namespace: op.namespace, key: op.key };
            const paths = this.paths(op);
            const out = { op: "put", namespace: op.namespace, key: op.key, value: op.value, index: paths ?? false };
            if (vector)
                out.embeddings = vector;
            return out;
        }
        if (isSearch(op)) {
            const out = {
                op: "search",
                namespace_prefix: op.namespacePrefix,
                filter: op.filter ?? null,
                limit: op.limit ?? 10,
                offset: op.offset ?? 0,
            };
            if (op.query && this.index) {
                if (vector)
                    out.query_embedding = vector;
                else
                    out.query = op.query;
            }
            return out;
        }
        if (isList(op)) {
            const prefix = [];
            const suffix = [];
            for (const m of op.matchConditions ?? [])
                (m.matchType === "prefix" ? prefix : suffix).push(...m.path);
            return { op: "list_namespaces", prefix, suffix, max_depth: op.maxDepth ?? null, limit: op.limit, offset: op.offset };
        }
        if (isGet(op))
            return { op: "get", namespace: op.namespace, key: op.key };
        throw new Error(`unknown store operation: ${JSON.stringify(op)}`);
    }
}
