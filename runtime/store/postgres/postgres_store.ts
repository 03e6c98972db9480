/**
 * The PostgreSQL store (docs/store.md): one database shared by every Hermes process on every host, through a
 * small pool of `npm:postgres` connections. Schema versioned by ./_migrations.ts in a `schema_version`
 * table, migrated under an advisory lock so that processes opening a new store at once migrate it once.
 * Operations are single statements or short READ COMMITTED transactions that await nothing but the database.
 */
import { eager, lazy } from "./_parts.ts";
import { composeOps } from "../_compose.ts";
import postgres from "postgres";
import type { Clock } from "../../core/clock.ts";
import { errorMessage, ValidationError } from "../../core/errors.ts";
import type { Store } from "../store.ts";
import { ServerClock } from "./_clock.ts";
import { type CommitCheck, PgDb, type Sql, TYPES } from "./_db.ts";
import { systemClock } from "../../core/clock.ts";
import { DEFAULT_RETRY_MS } from "../retry.ts";
import { migrations } from "./_migrations.ts";
import { isTransientPgError } from "./faults.ts";
import { clientOptions, parsePostgresUrl, redactUrl } from "./_url.ts";
import { guardClosedSocketWrites } from "./_closed_socket_guard.ts";

export interface PostgresStoreOptions {
  /**
   * Stamps rows (created_at, updated_at, archived_at) and paces prunes. Default: the database's clock
   * (this host's clock corrected by its measured offset from the server), which is also `store.clock`.
   */
  clock?: Clock;
  /** The schema holding the store's tables, created if missing (default: the connection's search_path). */
  schema?: string;
  /** Connections in the pool. Default 4. */
  maxConnections?: number;
  /** Milliseconds a statement waits for a row or advisory lock another process holds. Default 10 000. */
  busyTimeoutMs?: number;
  /**
   * The name of this host in holders and owners, whose dead processes the store may take leases, claims and
   * sessions over from (the CLI's HERMES_HOST_ID, else the hostname). Default: the hostname.
   */
  host?: string;
  /**
   * How long to wait for the server, after a connection broke during a COMMIT, to tell whether it
   * committed (default: store.retry's default on the system clock).
   */
  commitCheck?: Omit<CommitCheck, "where">;
}

/** A Store on PostgreSQL, with the clock its leases and claims should be judged by. */
export interface PostgresStore extends Store {
  /** `options.clock`, or the database's clock: pass it as `now` to leases and claims from every host. */
  readonly clock: Clock;
  /** The store's URL with its password redacted, for messages. */
  readonly url: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** websearch_to_tsquery and hashtextextended. */
const MIN_SERVER_VERSION = 110000;

/**
 * Connects to the store at `url` (libpq URI form) and migrates it. Rejects with a ValidationError (exit 2)
 * when the server cannot be reached or refuses the login, or when its schema is newer than this binary.
 */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<PostgresStore> {
  const display = redactUrl(url);
  const target = parsePostgresUrl(url);
  const { schema } = options;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new ValidationError(
      `Cannot open the store at ${display} in schema "${schema}": a schema name is lower-case letters, digits and _`,
    );
  }
  const guard = guardClosedSocketWrites();
  const sql: Sql = postgres({
    ...clientOptions(target),
    max: options.maxConnections ?? 4,
    connect_timeout: target.connect_timeout ?? 10,
    fetch_types: false,
    onnotice: () => {},
    // Reconnect at once: waiting between attempts is retry.ts's (the client's own backoff grows to 20 s,
    // which would overrun store.retry and hide the attempts from it).
    backoff: () => 0,
    types: TYPES,
    connection: {
      application_name: target.application_name ?? "hermes",
      lock_timeout: options.busyTimeoutMs ?? 10_000,
      ...(schema === undefined ? {} : { search_path: schema }),
    },
  });
  const serverClock = new ServerClock(sql);
  try {
    try {
      await serverClock.sync();
    } catch (error) {
      // A server restarting or not up yet is waited out by the caller (retry.ts); anything else is final.
      if (isTransientPgError(error)) throw error;
      throw new ValidationError(`Cannot connect to the store at ${display}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    await migrate(sql, { display, schema });
  } catch (error) {
    await sql.end({ timeout: 1 });
    guard[Symbol.dispose]();
    throw error;
  }
  const clock = options.clock ?? serverClock;
  const db = new PgDb(sql, {
    clock,
    host: options.host ?? Deno.hostname(),
    commitCheck: {
      policy: { budgetMs: DEFAULT_RETRY_MS, clock: systemClock },
      ...options.commitCheck,
      where: display,
    },
  });
  return {
    ...composeOps(db, eager, lazy),
    // LISTEN/NOTIFY: watchers are woken by every process's writes.
    notifies: true,
    clock,
    url: display,
    files: [],
    async close() {
      await serverClock.settle();
      await sql.end({ timeout: 5 });
      guard[Symbol.dispose]();
    },
  };
}

/** Applies the migrations this binary has and the database lacks, in one transaction under a lock. */
async function migrate(sql: Sql, where: { display: string; schema: string | undefined }): Promise<void> {
  const [server] = await sql`SELECT current_setting('server_version_num')::integer AS v, version() AS name`;
  if (Number(server!.v) < MIN_SERVER_VERSION) {
    throw new ValidationError(
      `Cannot use the store at ${where.display}: ${
        server!.name
      } is too old; Hermes needs PostgreSQL 11 or newer`,
    );
  }
  await sql.begin(async (q) => {
    // Keyed by schema: stores in other schemas of the database migrate independently.
    await q`SELECT pg_advisory_xact_lock(hashtextextended(${`hermes:migrate:${
      where.schema ?? ""
    }`}::text, 0))`;
    if (where.schema !== undefined) await q`CREATE SCHEMA IF NOT EXISTS ${q(where.schema)}`;
    await q`CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, applied_at bigint NOT NULL)`;
    const [row] = await q`SELECT coalesce(max(version), 0) AS v FROM schema_version`;
    const current = Number(row!.v);
    if (current > migrations.length) {
      throw new ValidationError(
        `Cannot open the store at ${where.display}: its schema version is ${current}, newer than this Hermes ` +
          `supports (${migrations.length}); upgrade Hermes`,
      );
    }
    for (let version = current + 1; version <= migrations.length; version++) {
      await q.unsafe(migrations[version - 1]!);
      await q`INSERT INTO schema_version (version, applied_at) VALUES (${version}, ${Date.now()})`;
    }
  });
}
