import { BaseCheckpointSaver, TASKS, WRITES_IDX_MAP, maxChannelVersion, } from "@langchain/langgraph-checkpoint";
import { tenantRows } from "./db.js";
const COLUMNS = "c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata, c.channel_values, c.pending_writes";
const text = (b) => Buffer.from(b).toString("utf8");
export class MemoryExtSaver extends BaseCheckpointSaver {
    db;
    userId;
    /** `db`: a `pg` Pool or Client; `userId`: the tenant it acts for, or none to serve many. */
    constructor(db, opts = {}) {
        super(opts.serde);
        if (opts.userId !== undefined && !opts.userId)
            throw new Error("userId must not be empty: the tenant this saver acts for, or none for many");
        this.db = db;
        this.userId = opts.userId;
    }
    /** The tenant of a call: named by its config (or `userId`), else the saver's. */
    tenant(config, userId) {
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
    async rows(config, sql, args, userId) {
        return tenantRows(this.db, this.tenant(config, userId), sql, args);
    }
    async toTuple(row, config) {
        const values = { ...(row.checkpoint.channel_values ?? {}) };
        for (const [channel, type, blob] of (row.channel_values ?? [])) {
            const t = text(type);
            if (t !== "empty")
                values[text(channel)] = await this.serde.loadsTyped(t, blob ?? new Uint8Array());
        }
        const pendingWrites = [];
        for (const [task, channel, type, blob] of (row.pending_writes ?? [])) {
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
            const sends = [];
            for (const [, channel, type, blob] of (parent[0]?.pending_writes ?? [])) {
                if (text(channel) === TASKS)
                    sends.push(await this.serde.loadsTyped(text(type), blob));
            }
            if (sends.length) {
                values[TASKS] = sends;
                const known = Object.values(versions);
                versions[TASKS] = known.length ? maxChannelVersion(...known) : this.getNextVersion(undefined);
            }
        }
        const extra = config?.configurable?.user_id ? { user_id: config.configurable.user_id } : {};
        const at = (id) => ({
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
    async getTuple(config) {
        const c = config.configurable ?? {};
        const rows = await this.rows(config, `SELECT ${COLUMNS} FROM {tenant}, LATERAL checkpoint_get($1, $2, $3, tenant.t) c`, [
            String(c.thread_id),
            c.checkpoint_ns ?? "",
            c.checkpoint_id ?? null,
        ]);
        return rows[0] ? this.toTuple(rows[0], config) : undefined;
    }
    async *list(config, options) {
        const c = config?.configurable ?? {};
        const rows = await this.rows(config, `SELECT ${COLUMNS} FROM {tenant}, LATERAL checkpoint_list($1, $2, $3, $4, $5, $6, tenant.t) c`, [
            c.thread_id !== undefined ? String(c.thread_id) : null,
            c.checkpoint_ns ?? null,
            c.checkpoint_id ?? null,
            options?.filter && Object.keys(options.filter).length ? JSON.stringify(options.filter) : null,
            options?.before?.configurable?.checkpoint_id ?? null,
            options?.limit ?? null,
        ]);
        for (const row of rows)
            yield await this.toTuple(row, config);
    }
    async put(config, checkpoint, metadata, newVersions) {
        const c = config.configurable;
        if (c?.thread_id === undefined || c?.thread_id === null) {
            throw new Error('Missing "thread_id" field in passed "config.configurable".');
        }
        const threadId = String(c.thread_id);
        const ns = c.checkpoint_ns ?? "";
        const blobs = checkpoint.channel_values ?? {};
        const channels = [];
        const versions = [];
        const types = [];
        const data = [];
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
        const next = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
        if (c.user_id)
            next.configurable.user_id = c.user_id;
        return next;
    }
    async putWrites(config, writes, taskId, taskPath = "") {
        const c = config.configurable;
        if (c?.thread_id === undefined || c?.thread_id === null) {
            throw new Error('Missing "thread_id" field in passed "config.configurable".');
        }
        if (c.checkpoint_id === undefined) {
            throw new Error('Missing "checkpoint_id" field in passed "config.configurable".');
        }
        if (!writes.length)
            return;
        const idx = [];
        const channels = [];
        const types = [];
        const data = [];
        for (const [i, [channel, value]] of writes.entries()) {
            const [type, bytes] = await this.serde.dumpsTyped(value);
            idx.push(WRITES_IDX_MAP[channel] ?? i);
            channels.push(channel);
            types.push(type);
            data.push(Buffer.from(bytes));
        }
        // LangGraph's special writes (errors, interrupts, resumes) replace an earlier one.
        const replace = writes.every(([channel]) => channel in WRITES_IDX_MAP);
        await this.rows(config, "SELECT checkpoint_put_writes($1, $2, $3, $4, $5, $6::int[], $7, $8, $9::bytea[], $10, tenant.t) FROM {tenant}", [String(c.thread_id), c.checkpoint_ns ?? "", c.checkpoint_id, taskId, taskPath, idx, channels, types, data, replace]);
    }
    async deleteThread(threadId, userId) {
        await this.rows(undefined, "SELECT checkpoint_delete_thread($1, tenant.t) FROM {tenant}", [String(threadId)], userId);
    }
    /** PostgresSaver's versions: a zero-padded counter (so they sort), then a random part. */
    getNextVersion(current) {
        const n = current === undefined ? 0 : Number.parseInt(String(current).split(".")[0], 10) || 0;
        return `${String(n + 1).padStart(32, "0")}.${Math.random().toFixed(16)}`;
    }
}
