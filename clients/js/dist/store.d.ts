import type { Embeddings } from "@langchain/core/embeddings";
import { BaseStore, type Operation, type OperationResults } from "@langchain/langgraph-checkpoint";
import { type Db } from "./db.js";
/** `index: { embeddings: SERVER_EMBEDDINGS }`: vectors from the extension's own model. */
export declare const SERVER_EMBEDDINGS: "memory_ext";
export interface MemoryExtIndexConfig {
    embeddings: Embeddings | typeof SERVER_EMBEDDINGS;
    dims?: number;
    fields?: string[];
}
export declare class MemoryExtStore extends BaseStore {
    readonly db: Db;
    readonly userId: string;
    readonly index?: MemoryExtIndexConfig;
    private readonly fields;
    /** `db`: a `pg` Pool or Client; `userId`: the tenant every call acts for. */
    constructor(db: Db, opts: {
        userId: string;
        index?: MemoryExtIndexConfig;
    });
    private get clientEmbeddings();
    /** The paths a put indexes, or undefined for no vectors. */
    private paths;
    /** (field, text) as the extension names them (memory_core::store::to_embed). */
    private texts;
    batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>>;
    private json;
}
