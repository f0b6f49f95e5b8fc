import pg from "pg";
/** The memory_ext release this package is written for (its version is the package's). */
export declare const REQUIRED_VERSION = "0.12.0";
/** A `pg` pool (each call takes a connection of its own) or one client (calls take turns). */
export type Db = pg.Pool | pg.Client;
export declare class VersionError extends Error {
}
/** Throws a VersionError saying what is needed when `found` is missing or too old. */
export declare function checkVersion(found: string | null | undefined): void;
/** The rows of `sql` (with its {tenant} FROM item) run for `userId`, as one statement. The
 * first call on a pool or client checks the extension's version. */
export declare function tenantRows(db: Db, userId: string, sql: string, args: unknown[]): Promise<any[]>;
/** The first column of the one row a tenant statement answers. */
export declare function call<T = any>(db: Db, userId: string, sql: string, args: unknown[]): Promise<T>;
