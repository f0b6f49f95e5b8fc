// Connections, tenancy and the extension's version, shared by the adapters (the Python
// package's clients/python/src/memory_ext/_db.py does the same).
import pg from "pg";
/** The memory_ext release this package is written for (its version is the package's). */
export const REQUIRED_VERSION = "0.12.0";
export class VersionError extends Error {
}
const parse = (v) => v.split(".").map((x) => Number.parseInt(x, 10) || 0);
const older = (a, b) => {
    for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
        if ((a[i] ?? 0) !== (b[i] ?? 0))
            return (a[i] ?? 0) < (b[i] ?? 0);
    }
    return false;
};
/** Throws a VersionError saying what is needed when `found` is missing or too old. */
export function checkVersion(found) {
    if (!found) {
        throw new VersionError(`memory_ext is not installed in this database: CREATE EXTENSION memory_ext CASCADE (this package needs ${REQUIRED_VERSION} or later)`);
    }
    if (older(parse(found), parse(REQUIRED_VERSION))) {
        throw new VersionError(`memory_ext ${found} is installed; this package needs ${REQUIRED_VERSION} or later: install the newer extension and run ALTER EXTENSION memory_ext UPDATE`);
    }
}
// One client serves one transaction at a time: calls on it wait for the one before.
const turns = new WeakMap();
const checked = new WeakSet();
/**
 * Runs `fn` in a transaction of its own that acts for `userId`
 * (`set_config('memory_ext.user_id', ..., true)`: gone when the transaction ends, so a pooled
 * connection carries nothing to its next user). The first call on a pool or client checks the
 * extension's version.
 */
export async function withTenant(db, userId, fn) {
    if (!userId)
        throw new Error("userId is required: the tenant the call acts for");
    const run = async (c) => {
        if (!checked.has(db)) {
            const r = await c.query("SELECT extversion FROM pg_extension WHERE extname = 'memory_ext'");
            checkVersion(r.rows[0]?.extversion);
            checked.add(db);
        }
        await c.query("BEGIN");
        try {
            await c.query("SELECT set_config('memory_ext.user_id', $1, true)", [userId]);
            const out = await fn(c);
            await c.query("COMMIT");
            return out;
        }
        catch (e) {
            await c.query("ROLLBACK").catch(() => undefined);
            throw e;
        }
    };
    if (db instanceof pg.Pool) {
        const c = await db.connect();
        try {
            return await run(c);
        }
        finally {
            c.release();
        }
    }
    const before = turns.get(db) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => run(db));
    turns.set(db, mine);
    return mine;
}
/** The first column of the one row `sql` answers, for `userId`. */
export async function call(db, userId, sql, args) {
    return withTenant(db, userId, async (c) => {
        const r = await c.query(sql, args);
        const row = r.rows[0];
        return (row ? Object.values(row)[0] : null);
    });
}
