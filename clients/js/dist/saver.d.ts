import type { RunnableConfig } from "@langchain/core/runnables";
import { BaseCheckpointSaver, type ChannelVersions, type Checkpoint, type CheckpointListOptions, type CheckpointMetadata, type CheckpointTuple, type PendingWrite, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { type Db } from "./db.js";
export declare class MemoryExtSaver extends BaseCheckpointSaver<string> {
    readonly db: Db;
    readonly userId: string | undefined;
    /** `db`: a `pg` Pool or Client; `userId`: the tenant it acts for, or none to serve many. */
    constructor(db: Db, opts?: {
        userId?: string;
        serde?: SerializerProtocol;
    });
    /** The tenant of a call: named by its config (or `userId`), else the saver's. */
    private tenant;
    private rows;
    private toTuple;
    getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
    list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple>;
    put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig>;
    putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void>;
    deleteThread(threadId: string, userId?: string): Promise<void>;
    /** PostgresSaver's versions: a zero-padded counter (so they sort), then a random part. */
    getNextVersion(current: string | undefined): string;
}
