/**
 * Which SQLite failures are worth waiting out: another process holding the write lock past `busy_timeout`
 * (SQLITE_BUSY) or a locked table (SQLITE_LOCKED). Nothing else is: a SQLite operation runs synchronously and
 * rolls back what failed, so a busy one left nothing behind and can simply run again.
 */
const BUSY = 5;
const LOCKED = 6;

export function isTransientSqliteError(error: unknown): boolean {
  const { code, errcode, message } = error as { code?: string; errcode?: number; message?: string };
  if (code !== "ERR_SQLITE_ERROR") return false;
  if (typeof errcode === "number" && [BUSY, LOCKED].includes(errcode & 0xff)) return true;
  return /database is locked|database table is locked/.test(message ?? "");
}
