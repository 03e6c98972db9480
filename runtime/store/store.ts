/**
 * The session store: one SQLite file (WAL) shared by every Hermes process on a machine.
 * Every write is a short `BEGIN IMMEDIATE` transaction; nothing here awaits.
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { migrations } from "./_migrations.ts";
import type { Clock } from "../core/clock.ts";
import { systemClock } from "../core/clock.ts";
import { NotFoundError } from "../core/errors.ts";
import type { Message, MessageKind, SessionRow, SessionStatus, StoredMessage } from "../core/types.ts";
import { exists, newSessionId, type Row, stripUndefined, toMessage, toSession } from "./_store_rows.ts";

export { newSessionId, toMessage };

export interface StoreOptions {
  clock?: Clock;
  /** Milliseconds a writer waits for another process's transaction. */
  busyTimeoutMs?: number;
}

export interface NewSession {
  job: string;
  job_path?: string | null;
  config_json?: string;
  model?: string | null;
  parent_id?: string | null;
  status?: SessionStatus;
  id?: string;
}

export interface AppendMessage extends Message {
  kind?: MessageKind;
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
}

export interface ListSessionsOptions {
  job?: string;
  status?: string;
  /** Only sessions created at or after this time (epoch ms). */
  since?: number;
  /** true: only archived; false/undefined: only unarchived. */
  archived?: boolean;
  limit?: number;
}

export class Store {
  readonly db: DatabaseSync;
  readonly path: string;
  readonly clock: Clock;
  #statements = new Map<string, StatementSync>();
  #inTransaction = false;

  private constructor(db: DatabaseSync, path: string, clock: Clock) {
    this.db = db;
    this.path = path;
    this.clock = clock;
  }

  /** Opens (creating if needed, mode 0600) and migrates the store at `path`. */
  static open(path: string, options: StoreOptions = {}): Store {
    const isNew = path !== ":memory:" && !exists(path);
    const db = new DatabaseSync(path);
    if (isNew) Deno.chmodSync(path, 0o600);
    db.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    const store = new Store(db, path, options.clock ?? systemClock);
    store.#migrate();
    return store;
  }

  close(): void {
    this.#statements.clear();
    if (this.db.isOpen) this.db.close();
  }

  /** A cached prepared statement. */
  stmt(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `fn` inside `BEGIN IMMEDIATE … COMMIT`; rolls back if it throws. `fn` must not await. */
  immediate<T>(fn: () => T): T {
    if (this.#inTransaction) return fn();
    this.db.exec("BEGIN IMMEDIATE");
    this.#inTransaction = true;
    try {
      const result = fn();
      this.db.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.db.isTransaction) this.db.exec("ROLLBACK");
      throw error;
    } finally {
      this.#inTransaction = false;
    }
  }

  #migrate(): void {
    const version = () => Number((this.db.prepare("PRAGMA user_version").get() as Row).user_version);
    if (version() >= migrations.length) return;
    this.immediate(() => {
      // Re-read inside the lock: another process may have migrated meanwhile.
      for (let v = version(); v < migrations.length; v++) {
        this.db.exec(migrations[v]!);
        this.db.exec(`PRAGMA user_version = ${v + 1}`);
      }
    });
  }

  // ---- sessions ----

  createSession(input: NewSession): SessionRow {
    const now = this.clock.now();
    const id = input.id ?? newSessionId(now);
    this.immediate(() =>
      this.stmt(
        `INSERT INTO sessions (id, job, job_path, status, parent_id, created_at, updated_at, config_json, model)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        id,
        input.job,
        input.job_path ?? null,
        input.status ?? "running",
        input.parent_id ?? null,
        now,
        now,
        input.config_json ?? "{}",
        input.model ?? null,
      )
    );
    return this.getSession(id)!;
  }

  getSession(id: string): SessionRow | undefined {
    const row = this.stmt("SELECT * FROM sessions WHERE id = ?").get(id) as Row | undefined;
    return row ? toSession(row) : undefined;
  }

  /** Resolves an id, a unique id prefix, or `latest`; throws NotFoundError naming the id. */
  resolveSessionId(idOrLatest: string): string {
    if (idOrLatest === "latest") {
      const row = this.stmt(
        "SELECT id FROM sessions WHERE archived_at IS NULL ORDER BY created_at DESC, rowid DESC LIMIT 1",
      ).get() as Row | undefined;
      if (!row) throw new NotFoundError(`Cannot resolve session "latest": the store has no sessions`);
      return String(row.id);
    }
    if (this.getSession(idOrLatest)) return idOrLatest;
    const rows = this.stmt("SELECT id FROM sessions WHERE id >= ? AND id < ? LIMIT 2")
      .all(idOrLatest, idOrLatest + "\uffff") as Row[];
    if (rows.length === 1) return String(rows[0]!.id);
    throw new NotFoundError(`Cannot find session "${idOrLatest}": no such session id`);
  }

  listSessions(options: ListSessionsOptions = {}): SessionRow[] {
    const where: string[] = [options.archived ? "archived_at IS NOT NULL" : "archived_at IS NULL"];
    const params: SQLInputValue[] = [];
    if (options.job !== undefined) (where.push("job = ?"), params.push(options.job));
    if (options.status !== undefined) (where.push("status = ?"), params.push(options.status));
    if (options.since !== undefined) (where.push("created_at >= ?"), params.push(options.since));
    params.push(options.limit ?? -1);
    const rows = this.db.prepare(
      `SELECT * FROM sessions WHERE ${where.join(" AND ")} ORDER BY created_at DESC, rowid DESC LIMIT ?`,
    ).all(...params) as Row[];
    return rows.map(toSession);
  }

  updateSession(id: string, patch: Partial<Omit<SessionRow, "id" | "created_at">>): void {
    const keys = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    const values = keys.map((k) => (patch as Record<string, SQLInputValue>)[k]!);
    this.immediate(() =>
      this.db.prepare(
        `UPDATE sessions SET ${keys.map((k) => `${k} = ?`).concat("updated_at = ?").join(", ")} WHERE id = ?`,
      ).run(...values, this.clock.now(), id)
    );
  }

  // ---- messages ----

  /** Appends messages in one transaction, after everything already in the session. */
  appendMessages(sessionId: string, messages: readonly AppendMessage[]): StoredMessage[] {
    const now = this.clock.now();
    return this.immediate(() => {
      const top = this.stmt("SELECT coalesce(max(seq), 0) AS s FROM messages WHERE session_id = ?")
        .get(sessionId) as Row;
      let seq = Number(top.s);
      const insert = this.stmt(
        `INSERT INTO messages (session_id, seq, pos, role, content, tool_calls, tool_call_id, name, kind,
           prompt_tokens, completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      return messages.map((m) => {
        seq++;
        const toolCalls = m.tool_calls?.length ? JSON.stringify(m.tool_calls) : null;
        const result = insert.run(
          sessionId,
          seq,
          seq,
          m.role,
          m.content,
          toolCalls,
          m.tool_call_id ?? null,
          m.name ?? null,
          m.kind ?? "message",
          m.prompt_tokens ?? null,
          m.completion_tokens ?? null,
          now,
        );
        return {
          ...stripUndefined(m),
          id: Number(result.lastInsertRowid),
          session_id: sessionId,
          seq,
          pos: seq,
          kind: m.kind ?? "message",
          active: true,
          prompt_tokens: m.prompt_tokens ?? null,
          completion_tokens: m.completion_tokens ?? null,
          created_at: now,
        } as StoredMessage;
      });
    });
  }

  /** The transcript the model sees, in prompt order. */
  activeMessages(sessionId: string): StoredMessage[] {
    return (this.stmt("SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY pos, seq")
      .all(sessionId) as Row[]).map(toMessage);
  }

  /** Every row including those replaced by compaction, in prompt order. */
  allMessages(sessionId: string): StoredMessage[] {
    return (this.stmt("SELECT * FROM messages WHERE session_id = ? ORDER BY pos, seq").all(
      sessionId,
    ) as Row[])
      .map(toMessage);
  }

  /** Brings the full-text index up to date with every message; call before searching. */
  syncSearchIndex(): number {
    return this.immediate(() => {
      const upto = Number((this.stmt("SELECT value FROM meta WHERE key = 'fts_upto'").get() as Row).value);
      const top = Number((this.stmt("SELECT coalesce(max(id), 0) AS m FROM messages").get() as Row).m);
      if (top <= upto) return 0;
      const added = this.stmt(
        "INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages WHERE id > ? ORDER BY id",
      ).run(upto).changes;
      this.stmt("UPDATE meta SET value = ? WHERE key = 'fts_upto'").run(top);
      return Number(added);
    });
  }

  /** A cheap fingerprint of the active transcript: changes whenever a row is appended, archived or added. */
  transcriptVersion(sessionId: string): string {
    const row = this.stmt(
      "SELECT count(*) AS n, coalesce(max(id), 0) AS m FROM messages WHERE session_id = ? AND active = 1",
    )
      .get(sessionId) as Row;
    return `${row.n}:${row.m}`;
  }

  // ---- per-session key/value (loop and heartbeat state, compaction guards) ----

  getState<T = unknown>(sessionId: string, key: string): T | undefined {
    const row = this.stmt("SELECT value FROM session_kv WHERE session_id = ? AND key = ?")
      .get(sessionId, key) as Row | undefined;
    return row ? JSON.parse(String(row.value)) as T : undefined;
  }

  setState(sessionId: string, key: string, value: unknown): void {
    this.immediate(() =>
      this.stmt(
        `INSERT INTO session_kv (session_id, key, value, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ).run(sessionId, key, JSON.stringify(value), this.clock.now())
    );
  }

  deleteState(sessionId: string, key: string): void {
    this.immediate(() =>
      this.stmt("DELETE FROM session_kv WHERE session_id = ? AND key = ?").run(sessionId, key)
    );
  }
}
