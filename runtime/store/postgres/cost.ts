/**
 * The `model_calls` table: `hermes cost` (the rows of a time range, by the index on `at`, grouped as asked)
 * and its rows out and in verbatim for `hermes store migrate`.
 */
import type { CostOps, CostQuery, ModelCallRow } from "../store.ts";
import { json, type PgDb, type Q } from "./_db.ts";
import { identicalCalls, labelKey, sortCostGroups, toCostGroup, toModelCall } from "../_records.ts";

export function costOps(db: PgDb): CostOps {
  const { sql } = db;
  return {
    costReport: (query) => costReport(db, query),
    async modelCallSessions() {
      const rows = await sql`SELECT DISTINCT session_id FROM model_calls ORDER BY session_id`;
      return rows.map((r) => String(r.session_id));
    },
    async exportModelCalls(sessionId) {
      const rows = await sql`SELECT * FROM model_calls WHERE session_id = ${sessionId} ORDER BY id`;
      return rows.map(toModelCall);
    },
    importModelCalls: (rows) =>
      rows.length === 0 ? Promise.resolve(0) : db.tx((q) => importModelCalls(q, rows)),
  };
}

async function importModelCalls(q: Q, rows: readonly ModelCallRow[]): Promise<number> {
  let stored = 0;
  for (const { row: r, count } of identicalCalls(rows)) {
    // The same call: its session, caller, time, model and counts (its job and labels came with the session).
    const [present] = await q`
      SELECT count(*) AS n FROM model_calls WHERE at = ${r.at} AND caller_id = ${r.caller_id}
        AND session_id = ${r.session_id} AND model IS NOT DISTINCT FROM ${r.model}::text
        AND prompt_tokens = ${r.prompt_tokens} AND cached_tokens = ${r.cached_tokens}
        AND cache_write_tokens = ${r.cache_write_tokens} AND completion_tokens = ${r.completion_tokens}
        AND reasoning_tokens = ${r.reasoning_tokens}
        AND cost_usd IS NOT DISTINCT FROM ${r.cost_usd}::double precision`;
    for (let i = Number(present!.n); i < count; i++) {
      await q`
        INSERT INTO model_calls (session_id, caller_id, job, labels, at, provider, model, prompt_tokens,
          cached_tokens, cache_write_tokens, completion_tokens, reasoning_tokens, cost_usd)
        VALUES (${r.session_id}, ${r.caller_id}, ${r.job}, ${json(q, r.labels)}, ${r.at},
          ${r.provider}, ${r.model}, ${r.prompt_tokens}, ${r.cached_tokens}, ${r.cache_write_tokens},
          ${r.completion_tokens}, ${r.reasoning_tokens}, ${r.cost_usd}::double precision)`;
      stored++;
    }
  }
  return stored;
}

async function costReport(db: PgDb, query: CostQuery) {
  const keys: string[] = [];
  const params: (string | number)[] = [];
  const param = (value: string | number) => `$${params.push(value)}`;
  query.by.forEach((dimension, i) => {
    if (dimension === "job" || dimension === "model") keys.push(`${dimension} AS k${i}`);
    // A day number: integer arithmetic, formatted as a date once per group rather than once per row.
    else if (dimension === "day") keys.push(`at / 86400000 AS k${i}`);
    else keys.push(`labels ->> ${param(labelKey(dimension))}::text AS k${i}`);
  });
  const where: string[] = [];
  if (query.since !== undefined) where.push(`at >= ${param(query.since)}::bigint`);
  if (query.until !== undefined) where.push(`at < ${param(query.until)}::bigint`);
  const rows = await db.sql.unsafe(
    `SELECT ${keys.map((k) => `${k}, `).join("")}count(*) AS calls, count(DISTINCT session_id) AS sessions,
       sum(prompt_tokens) AS input_tokens, sum(cached_tokens) AS cached_tokens,
       sum(cache_write_tokens) AS cache_write_tokens, sum(completion_tokens) AS output_tokens,
       sum(reasoning_tokens) AS reasoning_tokens, coalesce(sum(cost_usd), 0) AS cost_usd,
       count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_calls
     FROM model_calls
     ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
     ${keys.length ? `GROUP BY ${keys.map((_, i) => i + 1).join(", ")}` : ""}`,
    params,
  );
  return sortCostGroups(rows.map((row) => toCostGroup(row, query.by)));
}
