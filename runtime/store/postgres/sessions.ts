/** The `sessions` table: create, read, resolve references, update, usage totals and ownership. */
import { NotFoundError } from "../../core/errors.ts";
import type { ResolveOptions, SessionOps, SessionPatch } from "../store.ts";
import { newSessionId } from "../ids.ts";
import type { PgDb, Q } from "./_db.ts";
import { readIdentity, toSession } from "./_rows.ts";
import { claimable, type RefLookup, resolvedSessionId, resolvedSessionIds } from "../rules.ts";

export function sessionOps(db: PgDb): SessionOps {
  const { sql } = db;
  return {
    // Writes that must not happen twice run in a transaction (see _db.ts: a lost COMMIT is resolved).
    createSession: (input) =>
      db.tx(async (sql) => {
        const now = db.clock.now();
        const [row] = await sql`
        INSERT INTO sessions (id, job, job_path, status, parent_id, created_at, updated_at, config_json, model,
          owner_host, owner_pid, owner_started, labels)
        VALUES (${input.id ?? newSessionId(now)}, ${input.job}, ${input.job_path ?? null},
          ${input.status ?? "running"}, ${input.parent_id ?? null}, ${now}, ${now}, ${
          input.config_json ?? "{}"
        },
          ${input.model ?? null}, ${input.owner?.host ?? null}, ${input.owner?.pid ?? null},
          ${input.owner?.started ?? null}, ${JSON.stringify(input.labels ?? {})})
        RETURNING *`;
        return toSession(row!);
      }),
    getSession: (id) => getSession(sql, id),
    resolveSessionId: (ref) => resolveSessionId(sql, ref),
    resolveSessionIds: (refs, options) => resolveSessionIds(sql, refs, options),
    async updateSession(id, patch) {
      const keys = (Object.keys(patch) as (keyof SessionPatch)[]).filter((k) => patch[k] !== undefined);
      const now = db.clock.now();
      if (keys.length === 0) {
        await sql`UPDATE sessions SET updated_at = ${now} WHERE id = ${id}`;
        return;
      }
      await sql`UPDATE sessions SET ${sql(patch, keys)}, updated_at = ${now} WHERE id = ${id}`;
    },
    async addUsage(id, usage) {
      const now = db.clock.now();
      const cost = usage.cost_usd ?? 0;
      // One statement (its parts see the rows as they were before it: the counters' update changes nothing
      // the call's row reads), in a transaction so that a COMMIT cut off by a restart counts once.
      await db.tx((sql) =>
        sql`
        WITH RECURSIVE counted AS (
          UPDATE sessions SET turns = turns + ${usage.turns}, prompt_tokens = prompt_tokens + ${usage.prompt_tokens},
            completion_tokens = completion_tokens + ${usage.completion_tokens},
            cached_tokens = cached_tokens + ${usage.cached_tokens ?? 0},
            cache_write_tokens = cache_write_tokens + ${usage.cache_write_tokens ?? 0},
            reasoning_tokens = reasoning_tokens + ${usage.reasoning_tokens ?? 0},
            cost_usd = cost_usd + ${cost}::double precision,
            unpriced_calls = unpriced_calls + ${
          usage.cost_usd === null ? usage.turns : 0
        }, updated_at = ${now}
          WHERE id = ${id}
          RETURNING id),
        up (id, parent_id, depth) AS (
          SELECT id, parent_id, 0 FROM sessions WHERE id = ${id}
          UNION ALL SELECT s.id, s.parent_id, up.depth + 1 FROM sessions s JOIN up ON s.id = up.parent_id
          WHERE up.depth < 100)
        INSERT INTO model_calls (session_id, caller_id, job, labels, at, provider, model, prompt_tokens,
          cached_tokens, cache_write_tokens, completion_tokens, reasoning_tokens, cost_usd)
        SELECT id, ${id}, job, labels::jsonb, ${now}, ${usage.provider ?? null}::text,
          coalesce(${usage.model ?? null}::text, (SELECT model FROM sessions WHERE id = ${id})),
          ${usage.prompt_tokens}, ${usage.cached_tokens ?? 0}, ${usage.cache_write_tokens ?? 0},
          ${usage.completion_tokens}, ${usage.reasoning_tokens ?? 0},
          ${usage.cost_usd === null ? null : cost}::double precision
        FROM sessions WHERE id = (SELECT id FROM up ORDER BY depth DESC LIMIT 1)
          AND EXISTS (SELECT 1 FROM counted)`
      );
    },
    async jobSpend(job, since) {
      const [row] = await sql`
        SELECT coalesce(sum(cost_usd), 0) AS usd FROM model_calls WHERE job = ${job} AND at >= ${since}`;
      return Number(row!.usd);
    },
    async adoptSession(id, { expected, holder }) {
      const result = await db.tx((sql) =>
        sql`
        UPDATE sessions SET owner_host = ${holder.host}, owner_pid = ${holder.pid}, owner_started = ${holder.started},
          owner_expires_at = NULL
        WHERE id = ${id} AND owner_host IS NOT DISTINCT FROM ${expected.owner_host}::text
          AND owner_pid IS NOT DISTINCT FROM ${expected.owner_pid}::integer
          AND owner_started IS NOT DISTINCT FROM ${expected.owner_started}::text`
      );
      return result.count === 1;
    },
    // Not in a transaction: setting an expiry is idempotent, so a renewal whose COMMIT was cut off needs no
    // commit check (its error is a missed renewal, and the next one sets the expiry again).
    async renewOwner(id, holder, expiresAt) {
      const result = await sql`
        UPDATE sessions SET owner_expires_at = ${expiresAt}
        WHERE id = ${id} AND owner_host = ${holder.host} AND owner_pid = ${holder.pid}
          AND owner_started = ${holder.started}`;
      return result.count === 1;
    },
    claimSession: (id, holder) =>
      db.tx(async (q) => {
        const [row] = await q`
          SELECT owner_host, owner_pid, owner_started, owner_expires_at FROM sessions WHERE id = ${id} FOR UPDATE`;
        if (!row) throw new NotFoundError(`Cannot claim session ${id}: no such session`);
        const owner = row.owner_pid === null ? null : readIdentity(row, "owner");
        const expires = row.owner_expires_at === null ? null : Number(row.owner_expires_at);
        const who = { holder, host: db.host, owner_expires_at: expires, now: db.clock.now() };
        if (!claimable(owner, who)) return { claimed: false as const, owner: owner! };
        // A compare-and-set on the owner read (the row is locked, so it holds; the condition says why).
        const [changed] = await q`
          UPDATE sessions SET owner_host = ${holder.host}, owner_pid = ${holder.pid},
            owner_started = ${holder.started}, owner_expires_at = NULL, updated_at = ${db.clock.now()}
          WHERE id = ${id} AND owner_host IS NOT DISTINCT FROM ${row.owner_host}::text
            AND owner_pid IS NOT DISTINCT FROM ${row.owner_pid}::integer
            AND owner_started IS NOT DISTINCT FROM ${row.owner_started}::text
          RETURNING owner_pid`;
        if (changed) return { claimed: true as const };
        const [now] = await q`SELECT owner_host, owner_pid, owner_started FROM sessions WHERE id = ${id}`;
        return { claimed: false as const, owner: readIdentity(now!, "owner") };
      }),
  };
}

export async function getSession(q: Q, id: string) {
  const [row] = await q`SELECT * FROM sessions WHERE id = ${id}`;
  return row ? toSession(row) : undefined;
}

async function latestId(q: Q): Promise<string | undefined> {
  const [row] = await q`
    SELECT id FROM sessions WHERE archived_at IS NULL ORDER BY created_at DESC, n DESC LIMIT 1`;
  return row ? String(row.id) : undefined;
}

async function exactId(q: Q, id: string): Promise<boolean> {
  return (await q`SELECT 1 FROM sessions WHERE id = ${id}`).length > 0;
}

/** Up to `limit` ids starting with `prefix`, in id order (byte order: the column is COLLATE "C"). */
async function idsWithPrefix(q: Q, prefix: string, limit: number): Promise<string[]> {
  const rows = await q`
    SELECT id FROM sessions WHERE id >= ${prefix} AND id < ${prefix + "\uffff"} ORDER BY id LIMIT ${limit}`;
  return rows.map((row) => String(row.id));
}

async function resolveSessionId(q: Q, ref: string): Promise<string> {
  return resolvedSessionId(ref, await lookup(q, ref));
}

export async function resolveSessionIds(
  q: Q,
  refs: readonly string[],
  options: ResolveOptions,
): Promise<string[]> {
  const found: RefLookup[] = [];
  for (const ref of refs) found.push(await lookup(q, ref));
  return resolvedSessionIds(refs, found, options);
}

async function lookup(q: Q, ref: string): Promise<RefLookup> {
  if (ref === "latest") return { latest: await latestId(q) };
  return await exactId(q, ref) ? { exact: true } : { prefixed: await idsWithPrefix(q, ref, 3) };
}
