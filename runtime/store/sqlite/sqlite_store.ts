/**
 * The SQLite store: one file (WAL, `synchronous=NORMAL`, `busy_timeout`, mode 0600) shared by every Hermes
 * process on a machine, schema versioned by runtime/store/_migrations.ts. Operations run synchronously
 * inside (each write a short `BEGIN IMMEDIATE` transaction, nothing awaited in one) and hand back promises.
 */
import { eager, lazy } from "./_parts.ts";
import { composeOps } from "../_compose.ts";
import { resolve } from "../../core/path.ts";
import { existsSync } from "../../core/fs.ts";
import { DatabaseSync } from "node:sqlite";
import { type Clock, systemClock } from "../../core/clock.ts";
import type { Store } from "../store.ts";
import { migrations } from "../_migrations.ts";
import { settle, SqliteDb } from "./_db.ts";
import { SQLITE_HANDLE } from "./_handle.ts";

export interface SqliteStoreOptions {
  /** Stamps rows (created_at, updated_at, archived_at) and paces prunes. Default: the system clock. */
  clock?: Clock;
  /** Milliseconds a writer waits for another process's transaction. Default 10 000. */
  busyTimeoutMs?: number;
  /**
   * The name of this host in holders and owners, whose dead processes the store may take leases, claims and
   * sessions over from (the CLI's HERMES_HOST_ID, else the hostname). Default: the hostname.
   */
  host?: string;
}

/** Opens (creating if needed, mode 0600) and migrates the store at `path` (or `:memory:`). */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  const connection = path === ":memory:" || createPrivate(path)
    ? openWritable(path, options)
    : openReadOnly(path);
  const db = new SqliteDb(connection, {
    clock: options.clock ?? systemClock,
    host: options.host ?? Deno.hostname(),
  });
  try {
    migrate(db);
  } catch (error) {
    db.close(); // a busy or foreign file: the caller may try again, and must not inherit this connection
    throw error;
  }
  const store: Store = {
    ...composeOps(db, eager, lazy),
    // A waiter looks at the file often: SQLite cannot wake another process.
    notifies: false,
    files: path === ":memory:" ? [] : ["", "-wal", "-shm"].map((suffix) => resolve(path) + suffix),
    close: () => settle(() => db.close()),
  };
  Object.defineProperty(store, SQLITE_HANDLE, { value: db });
  return store;
}

function openWritable(path: string, options: SqliteStoreOptions): DatabaseSync {
  const connection = new DatabaseSync(path);
  connection.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
  connection.exec("PRAGMA journal_mode = WAL");
  connection.exec("PRAGMA synchronous = NORMAL");
  connection.exec("PRAGMA foreign_keys = ON");
  return connection;
}

/**
 * A store on a read-only file system or without write permission: reads work (`sessions list|show|search`),
 * writes fail with SQLITE_READONLY. `immutable` because SQLite cannot create the WAL index (-shm) there.
 */
function openReadOnly(path: string): DatabaseSync {
  const connection = new DatabaseSync(new URL(`file://${encodeURI(resolve(path))}?immutable=1`), {
    readOnly: true,
  });
  connection.exec("PRAGMA foreign_keys = ON");
  return connection;
}

/**
 * A new store file — or an empty one someone created — is readable by its owner only; SQLite gives its -wal
 * and -shm files that mode too. False when the file exists but cannot be written (open it read-only).
 */
function createPrivate(path: string): boolean {
  // A stat tells an existing store (every run but the first) without a failed createNew: a thrown error
  // costs a process about half a millisecond.
  if (!existsSync(path, { follow: true })) {
    try {
      Deno.openSync(path, { createNew: true, write: true, mode: 0o600 }).close();
      return true;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
  }
  try {
    Deno.openSync(path, { write: true }).close();
  } catch (error) {
    if (error instanceof Deno.errors.PermissionDenied || isReadOnlyFs(error)) return false;
    throw error;
  }
  if (Deno.statSync(path).size === 0) Deno.chmodSync(path, 0o600);
  return true;
}

function isReadOnlyFs(error: unknown): boolean {
  return error instanceof Error && /\(os error 30\)/.test(error.message); // EROFS
}

function migrate(db: SqliteDb): void {
  const version = () =>
    Number((db.db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
  if (version() >= migrations.length) return;
  db.immediate(() => {
    // Re-read inside the lock: another process may have migrated meanwhile.
    for (let v = version(); v < migrations.length; v++) {
      db.db.exec(migrations[v]!);
      db.db.exec(`PRAGMA user_version = ${v + 1}`);
    }
  });
}
