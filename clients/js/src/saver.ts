// LangGraph.js's checkpointer over memory_ext's graph checkpoints (docs/api.md "Graph
// checkpoints"): one SQL statement per LangGraph call, naming its tenant for its own transaction.
// As LangGraph.js's PostgresSaver: the channel values a put's newVersions name are serialized
// by the saver's serde into blobs, stored once per channel version (the Python saver also keeps
// JSON scalars in the checkpoint document; either reads both). The tenant, the same way for
// every method: a saver made with `userId` acts for that tenant only (a config whose
// `configurable.user_id` names another is refused); a saver made without one serves many, and
// each call names its own (`configurable.user_id`, or deleteThread's `userId` argument). A call
// that names no tenant on a saver that has none is refused: a deletion that silently deletes
// nothing, in some other tenant, is a privacy defect.
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  maxChannelVersion,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { tenantRows, type Db } from "./db.js";

const COLUMNS =
  "c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata, c.channel_values, c.pending_writes";

const text = (b: Buffer | Uint8Array) => Buffer.from(b).toString("utf8");

export class MemoryExtSaver extends BaseCheckpointSaver<string> {
  readonly db: Db;
  readonly userId: string | undefined;

  /** `db`: a `pg` Pool or Client; `userId`: the tenant it acts for, or none to serve many. */
  constructor(db: Db, opts: { userId?: string; serde?: SerializerProtocol } = {}) {
    super(opts.serde);
    if (opts.userId !== undefined && !opts.userId) throw new Error("userId must not be empty: the tenant this saver acts for, or none for many");
    this.db = db;
    this.userId = opts.userId;
  }

  /** The tenant of a call: named by its config (or `userId`), else the saver's. */
  private tenant(config?: RunnableConfig, userId?: string): string {
    const uid = config?.configurable?.user_id ?? userId;
    const named = uid ? String(uid) : undefined;
    if (this.userId !== undefined) {
      if (named !== undefined && named !== this.userId) {
        throw new Error(`this saver acts for user_id "${this.userId}", and the call names "${named}": make a saver without userId to serve many tenants`);
      }
      return this.userId;
    }
    if (named === undefined) {
      throw new Error("this saver has no userId, and the call names no tenant: put user_id in config.configurable (or pass userId to deleteThread)");
    }
    return named;
  }

  private async rows(config: RunnableConfig | undefined, sql: string, args: unknown[], userId?: string): Promise<any[]> {
    return tenantRows(this.db, this.tenant(config, userId), sql, args);
  }

  private async toTuple(row: any, config?: RunnableConfig): Promise<CheckpointTuple> {
    const values: Record<string, unknown> = { ...(row.checkpoint.channel_values ?? {}) };
    for (const [channel, type, blob] of (row.channel_values ?? []) as Buffer[][]) {
      const t = text(type);
      if (t !== "empty") values[text(channel)] = await this.serde.loadsTyped(t, blob ?? new Uint8Array());
    }
    const pendingWrites: CheckpointPendingWrite[] = [];
    for (const [task, channel, type, blob] of (row.pending_writes ?? []) as Buffer[][]) {
      pendingWrites.push([text(task), text(channel), await this.serde.loadsTyped(text(type), blob)]);
    }
    const versions = { ...(row.checkpoint.channel_versions ?? {}) };
    if ((row.checkpoint.v ?? 4) < 4 && row.parent_checkpoint_id) {
      // A checkpoint of LangGraph's format before 4 keeps its sends as the parent's writes to
      // TASKS: they become the channel's value, as PostgresSaver migrates them.
      const parent = await this.rows(config, "SELECT c.pending_writes FROM {tenant}, LATERAL checkpoint_get($1, $2, $3, tenant.t) c", [
        row.thread_id,
        row.checkpoint_ns,
        row.parent_checkpoint_id,
      ]);
      const sends: unknown[] = [];
      for (const [, channel, type, blob] of (parent[0]?.pending_writes ?? []) as Buffer[][]) {
        if (text(channel) === TASKS) sends.push(await this.serde.loadsTyped(text(type), blob));
      }
      if (sends.length) {
        values[TASKS] = sends;
        const known = Object.values(versions) as (string | number)[];
        versions[TASKS] = known.length ? maxChannelVersion(...known) : this.getNextVersion(undefined);
      }
    }
    const extra = config?.configurable?.user_id ? { user_id: config.configurable.user_id } : {};
    const at = (id: string) => ({
      configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: id, ...extra },
    });
    return {
      config: at(row.checkpoint_id),
      checkpoint: { ...row.checkpoint, channel_values: values, channel_versions: versions },
      metadata: row.metadata,
      parentConfig: row.parent_checkpoint_id ? at(row.parent_checkpoint_id) : undefined,
      pendingWrites,
    };
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const c = config.configurable ?? {};
    const rows = await this.rows(config, `SELECT ${COLUMNS} FROM {tenant}, LATERAL checkpoint_get($1, $2, $3, tenant.t) c`, [
      String(c.thread_id),
      c.checkpoint_ns ?? "",
      c.checkpoint_id ?? null,
    ]);
    return rows[0] ? this.toTuple(rows[0], config) : undefined;
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const c = config?.configurable ?? {};
    const rows = await this.rows(config, `SELECT ${COLUMNS} FROM {tenant}, LATERAL checkpoint_list($1, $2, $3, $4, $5, $6, tenant.t) c`, [
      c.thread_id !== undefined ? String(c.thread_id) : null,
      c.checkpoint_ns ?? null,
      c.checkpoint_id ?? null,
      options?.filter && Object.keys(options.filter).length ? JSON.stringify(options.filter) : null,
      options?.before?.configurable?.checkpoint_id ?? null,
      options?.limit ?? null,
    ]);
    for (const row of rows) yield await this.toTuple(row, config);
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions
  ): Promise<RunnableConfig> {
    const c = config.configurable;
    if (c?.thread_id === undefined || c?.thread_id === null) {
      throw new Error('Missing "thread_id" field in passed "config.configurable".');
    }
    const threadId = String(c.thread_id);
    const ns: string = c.checkpoint_ns ?? "";
    const blobs: Record<string, unknown> = checkpoint.channel_values ?? {};
    const channels: string[] = [];
    const versions: string[] = [];
    const types: string[] = [];
    const data: Buffer[] = [];
    for (const [k, ver] of Object.entries(newVersions)) {
      // A channel named with no value (emptied): LangGraph's "empty" marker, no bytes.
      const [type, bytes] = k in blobs ? await this.serde.dumpsTyped(blobs[k]) : ["empty", new Uint8Array()];
      channels.push(k);
      versions.push(String(ver));
      types.push(type);
      data.push(Buffer.from(bytes));
    }
    await this.rows(config, "SELECT checkpoint_put($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::bytea[], tenant.t) FROM {tenant}", [
      threadId,
      ns,
      checkpoint.id,
      c.checkpoint_id ?? null,
      JSON.stringify({ ...checkpoint, channel_values: {} }),
      JSON.stringify(metadata ?? {}),
      channels,
      versions,
      types,
      data,
    ]);
    const next: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
    if (c.user_id) next.configurable!.user_id = c.user_id;
    return next;
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const c = config.configurable;
    if (c?.thread_id === undefined || c?.thread_id === null) {
      throw new Error('Missing "thread_id" field in passed "config.configurable".');
    }
    if (c.checkpoint_id === undefined) {
      throw new Error('Missing "checkpoint_id" field in passed "config.configurable".');
    }
    if (!writes.length) return;
    const idx: number[] = [];
    const channels: string[] = [];
    const types: string[] = [];
    const data: Buffer[] = [];
    for (const [i, [channel, value]] of writes.entries()) {
      const [type, bytes] = await this.serde.dumpsTyped(value);
      idx.push(WRITES_IDX_MAP[channel] ?? i);
      channels.push(channel);
      types.push(type);
      data.push(Buffer.from(bytes));
    }
    // LangGraph's special writes (errors, interrupts, resumes) replace an earlier one.
    const replace = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    await this.rows(
      config,
      "SELECT checkpoint_put_writes($1, $2, $3, $4, $5, $6::int[], $7, $8, $9::bytea[], $10, tenant.t) FROM {tenant}",
      [String(c.thread_id), c.checkpoint_ns ?? "", c.checkpoint_id, taskId, taskPath, idx, channels, types, data, replace]
    );
  }

  async deleteThread(threadId: string, userId?: string): Promise<void> {
    await this.rows(undefined, "SELECT checkpoint_delete_thread($1, tenant.t) FROM {tenant}", [String(threadId)], userId);
  }

  /** PostgresSaver's versions: a zero-padded counter (so they sort), then a random part. */
  getNextVersion(current: string | undefined): string {
    const n = current === undefined ? 0 : Number.parseInt(String(current).split(".")[0], 10) || 0;
    return `${String(n + 1).padStart(32, "0")}.${Math.random().toFixed(16)}`;
  }
}
