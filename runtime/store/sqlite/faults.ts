/** SQLite failures: which are worth waiting out, and which a user can act on (one line naming the file). */
import { errorMessage, RunError, ValidationError } from "../../core/errors.ts";

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

// SQLite failures a user can act on, by primary result code and by their standard message (node:sqlite
// does not always set errcode).
const SQLITE_PROBLEMS: [code: number, message: string, problem: string][] = [
  [
    8,
    "attempt to write a readonly database",
    "it is read-only (reading works; this command writes: use a writable --home or --db)",
  ],
  [10, "disk I/O error", "a disk I/O error (is the disk full or the file too large?)"],
  [
    11,
    "database disk image is malformed",
    "the file is damaged (database disk image is malformed); move it aside to start a new store",
  ],
  [13, "database or disk is full", "the disk is full"],
  [14, "unable to open database file", "the file or its directory cannot be opened"],
  [
    26,
    "file is not a database",
    "it is not a SQLite database (truncated or another program's file); move it aside to start a new store",
  ],
];

/**
 * A SQLite failure as one line naming the store file, or null for any other error. A file that is not a
 * SQLite store is bad input (exit 2): the --db or --home given names the wrong file.
 */
export function sqliteFailure(error: unknown, dbPath: string): RunError | ValidationError | null {
  const { code, errcode } = error as { code?: string; errcode?: number };
  if (code !== "ERR_SQLITE_ERROR") return null;
  const message = errorMessage(error);
  const known = SQLITE_PROBLEMS.find(([n, text]) =>
    (typeof errcode === "number" && (errcode & 0xff) === n) || message.includes(text)
  );
  const problem = known?.[2] ?? message;
  if (known?.[0] === 26) {
    return new ValidationError(`Cannot use the store ${dbPath}: ${problem}`, { cause: error });
  }
  return new RunError(`Cannot use the store ${dbPath}: ${problem}`, { reason: "store_error", cause: error });
}
