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
const checked = new WeakSet();
// One statement that names its tenant first: the FROM item sets memory_ext.user_id for the
// statement's own transaction (set_config(..., true)), and the call takes the tenant from it
// (`tenant.t`), so the setting is made before the call runs and is gone when it ends: one round
// trip, and nothing left on a pooled connection for its next user. OFFSET 0 keeps the planner
// from folding the FROM item into the call's query. SQL passed to tenantRows names the place of
// this FROM item with {tenant}; the tenant is the last parameter.
const tenantFrom = (n) => `(SELECT set_config('memory_ext.user_id', $${n}, true) AS t OFFSET 0) tenant`;
/** The rows of `sql` (with its {tenant} FROM item) run for `userId`, as one statement. The
 * first call on a pool or client checks the extension's version. */
export async function tenantRows(db, userId, sql, args) {
    if (!userId)
        throw new Error("userId is required: the tenant the call acts for");
    if (!checked.has(db)) {
        const r = await db.query("SELECT extversion FROM pg_extension WHERE extname = 'memory_ext'");
        checkVersion(r.rows[0]?.extversion);
        checked.add(db);
    }
    const r = await db.query(sql.replace("{tenant}", tenantFrom(args.length + 1)), [...args, userId]);
    return r.rows;
}
/** The first column of the one row a tenant statement answers. */
export async function call(db, userId, sql, args) {
    const rows = await tenantRows(db, userId, sql, args);
    return (rows[0] ? Object.values(rows[0])[0] : null);
}
