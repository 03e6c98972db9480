/** The `sessions` table: create, read, resolve references, update, usage totals and ownership. */
import type { SQLInputValue } from "node:sqlite";
import { NotFoundError } from "../../core/errors.ts";
import type { ResolveOptions, SessionOps } from "../store.ts";
import { newSessionId } from "../ids.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";
import { OWNER } from "./_holder.ts";
import { toSession } from "./_rows.ts";
import { claimable, type RefLookup, resolvedSessionId, resolvedSessionIds } from "../rules.ts";

export function sessionOps(db: SqliteDb): SessionOps {
  return {
    createSession: (input) =>
      settle(() => {
        const now = db.clock.now();
        const id = input.id ?? newSessionId(now);
        db.immediate(() =>
          db.stmt(
            `INSERT INTO sessions (id, job, job_path, status, parent_id, created_at, updated_at, config_json, model,
               owner_host, owner_pid, owner_started, labels) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
            input.owner?.host ?? null,
            input.owner?.pid ?? null,
            input.owner?.started ?? null,
            JSON.stringify(input.labels ?? {}),
          )
        );
        return getSession(db, id)!;
      }),
    getSession: (id) => settle(() => getSession(db, id)),
    resolveSessionId: (ref) => settle(() => resolveSessionId(db, ref)),
    resolveSessionIds: (refs, options) => settle(() => resolveSessionIds(db, refs, options)),
    updateSession: (id, patch) =>
      settle(() => {
        const keys = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
        const values = keys.map((k) => (patch as Record<string, SQLInputValue>)[k]!);
        const assign = keys.map((k) => `${k} = ?`).concat("updated_at = ?").join(", ");
        db.immediate(() =>
          db.stmt(`UPDATE sessions SET ${assign} WHERE id = ?`).run(...values, db.clock.now(), id)
        );
      }),
    addUsage: (id, usage) =>
      settle(() => {
        const now = db.clock.now();
        const cost = usage.cost_usd ?? 0;
        db.immediate(() => {
          db.stmt(
            `UPDATE sessions SET turns = turns + ?, prompt_tokens = prompt_tokens + ?,
             completion_tokens = completion_tokens + ?, cached_tokens = cached_tokens + ?,
             cache_write_tokens = cache_write_tokens + ?, reasoning_tokens = reasoning_tokens + ?,
             cost_usd = cost_usd + ?, unpriced_calls = unpriced_calls + ?, updated_at = ?
             WHERE id = ?`,
          ).run(
            usage.turns,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cached_tokens ?? 0,
            usage.cache_write_tokens ?? 0,
            usage.reasoning_tokens ?? 0,
            cost,
            usage.cost_usd === null ? usage.turns : 0,
            now,
            id,
          );
          db.stmt(
            `WITH RECURSIVE up(id, parent_id, depth) AS (
               SELECT id, parent_id, 0 FROM sessions WHERE id = ?
               UNION ALL SELECT s.id, s.parent_id, up.depth + 1 FROM sessions s JOIN up ON s.id = up.parent_id
               WHERE up.depth < 100)
             INSERT INTO model_calls (session_id, caller_id, job, labels, at, provider, model, prompt_tokens,
               cached_tokens, cache_write_tokens, completion_tokens, reasoning_tokens, cost_usd)
             SELECT id, ?, job, labels, ?, ?, coalesce(?, (SELECT model FROM sessions WHERE id = ?)), ?, ?, ?, ?, ?, ?
             FROM sessions
             WHERE id = (SELECT id FROM up ORDER BY depth DESC LIMIT 1)`,
          ).run(
            id,
            id,
            now,
            usage.provider ?? null,
            usage.model ?? null,
            id,
            usage.prompt_tokens,
            usage.cached_tokens ?? 0,
            usage.cache_write_tokens ?? 0,
            usage.completion_tokens,
            usage.reasoning_tokens ?? 0,
            usage.cost_usd === null ? null : cost,
          );
        });
      }),
    jobSpend: (job, since) =>
      settle(() =>
        Number(
          (db.stmt(`SELECT coalesce(sum(cost_usd), 0) AS usd FROM model_calls WHERE job = ? AND at >= ?`)
            .get(job, since) as { usd: number }).usd,
        )
      ),
    adoptSession: (id, { expected, holder }) =>
      settle(() =>
        db.immediate(() =>
          Number(
            db.stmt(
              `UPDATE sessions SET ${OWNER.assign}, owner_expires_at = NULL
               WHERE id = ? AND owner_host IS ? AND owner_pid IS ? AND owner_started IS ?`,
            ).run(
              ...OWNER.values(holder),
              id,
              expected.owner_host,
              expected.owner_pid,
              expected.owner_started,
            ).changes,
          ) === 1
        )
      ),
    renewOwner: (id, holder, expiresAt) =>
      settle(() =>
        db.immediate(() =>
          Number(
            db.stmt(
              `UPDATE sessions SET owner_expires_at = ?
               WHERE id = ? AND owner_host = ? AND owner_pid = ? AND owner_started = ?`,
            ).run(expiresAt, id, holder.host, holder.pid, holder.started).changes,
          ) === 1
        )
      ),
    claimSession: (id, holder) =>
      settle(() =>
        db.immediate(() => {
          const row = db.stmt(`SELECT ${OWNER.names}, owner_expires_at FROM sessions WHERE id = ?`).get(id) as
            | Row
            | undefined;
          if (!row) throw new NotFoundError(`Cannot claim session ${id}: no such session`);
          const owner = row.owner_pid === null ? null : OWNER.read(row);
          const expires = row.owner_expires_at === null ? null : Number(row.owner_expires_at);
          const who = { holder, host: db.host, owner_expires_at: expires, now: db.clock.now() };
          if (!claimable(owner, who)) return { claimed: false as const, owner: owner! };
          // A compare-and-set on the owner read: it changes the row only if nobody claimed it in between.
          const changed = db.stmt(
            `UPDATE sessions SET ${OWNER.assign}, owner_expires_at = NULL, updated_at = ?
             WHERE id = ? AND owner_host IS ? AND owner_pid IS ? AND owner_started IS ?`,
          ).run(
            ...OWNER.values(holder),
            db.clock.now(),
            id,
            row.owner_host ?? null,
            row.owner_pid ?? null,
            row.owner_started ?? null,
          ).changes;
          if (Number(changed) === 1) return { claimed: true as const };
          const now = db.stmt(`SELECT ${OWNER.names} FROM sessions WHERE id = ?`).get(id) as Row;
          return { claimed: false as const, owner: OWNER.read(now) };
        })
      ),
  };
}

export function getSession(db: SqliteDb, id: string) {
  const row = db.stmt("SELECT * FROM sessions WHERE id = ?").get(id) as Row | undefined;
  return row ? toSession(row) : undefined;
}

function latestId(db: SqliteDb): string | undefined {
  const row = db.stmt(
    "SELECT id FROM sessions WHERE archived_at IS NULL ORDER BY created_at DESC, rowid DESC LIMIT 1",
  ).get() as Row | undefined;
  return row ? String(row.id) : undefined;
}

function exactId(db: SqliteDb, id: string): boolean {
  return db.stmt("SELECT 1 FROM sessions WHERE id = ?").get(id) !== undefined;
}

/** Up to `limit` ids starting with `prefix`, in id order. */
function idsWithPrefix(db: SqliteDb, prefix: string, limit: number): string[] {
  return db.stmt("SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT ?")
    .all(prefix, prefix + "\uffff", limit).map((row) => String(row.id));
}

function resolveSessionId(db: SqliteDb, ref: string): string {
  return resolvedSessionId(ref, lookup(db, ref));
}

export function resolveSessionIds(db: SqliteDb, refs: readonly string[], options: ResolveOptions): string[] {
  return resolvedSessionIds(refs, refs.map((ref) => lookup(db, ref)), options);
}

function lookup(db: SqliteDb, ref: string): RefLookup {
  if (ref === "latest") return { latest: latestId(db) };
  return exactId(db, ref) ? { exact: true } : { prefixed: idsWithPrefix(db, ref, 3) };
}
