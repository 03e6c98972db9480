/**
 * The `model_calls` table: `hermes cost` (the rows of a time range, by the index on `at`, grouped as asked)
 * and its rows out and in verbatim for `hermes store migrate`.
 */
import type { SQLInputValue } from "node:sqlite";
import type { CostOps, CostQuery, ModelCallRow } from "../store.ts";
import { settle, type SqliteDb } from "./_db.ts";
import { identicalCalls, labelKey, sortCostGroups, toCostGroup, toModelCall } from "../_records.ts";

export function costOps(db: SqliteDb): CostOps {
  return {
    costReport: (query) => settle(() => costReport(db, query)),
    modelCallSessions: () =>
      settle(() =>
        db.stmt("SELECT DISTINCT session_id FROM model_calls ORDER BY session_id").all().map((r) =>
          String(r.session_id)
        )
      ),
    exportModelCalls: (sessionId) =>
      settle(() =>
        db.stmt("SELECT * FROM model_calls WHERE session_id = ? ORDER BY id").all(sessionId).map(toModelCall)
      ),
    importModelCalls: (rows) => settle(() => db.immediate(() => importModelCalls(db, rows))),
  };
}

function importModelCalls(db: SqliteDb, rows: readonly ModelCallRow[]): number {
  // The same call: its session, caller, time, model and counts (its job and labels came with the session).
  const present = db.stmt(
    `SELECT count(*) AS n FROM model_calls WHERE at = ? AND caller_id = ? AND session_id = ? AND model IS ?
       AND prompt_tokens = ? AND cached_tokens = ? AND cache_write_tokens = ? AND completion_tokens = ?
       AND reasoning_tokens = ? AND cost_usd IS ?`,
  );
  const insert = db.stmt(
    `INSERT INTO model_calls (session_id, caller_id, job, labels, at, provider, model, prompt_tokens,
       cached_tokens, cache_write_tokens, completion_tokens, reasoning_tokens, cost_usd)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  let stored = 0;
  for (const { row: r, count } of identicalCalls(rows)) {
    const counts = [
      r.prompt_tokens,
      r.cached_tokens,
      r.cache_write_tokens,
      r.completion_tokens,
      r.reasoning_tokens,
    ];
    const have = Number(
      (present.get(r.at, r.caller_id, r.session_id, r.model, ...counts, r.cost_usd) as { n: number }).n,
    );
    for (let i = have; i < count; i++) {
      insert.run(
        r.session_id,
        r.caller_id,
        r.job,
        JSON.stringify(r.labels),
        r.at,
        r.provider,
        r.model,
        ...counts,
        r.cost_usd,
      );
      stored++;
    }
  }
  return stored;
}

function costReport(db: SqliteDb, query: CostQuery) {
  const keys: string[] = [];
  const params: SQLInputValue[] = [];
  query.by.forEach((dimension, i) => {
    if (dimension === "job" || dimension === "model") keys.push(`${dimension} AS k${i}`);
    // A day number: integer arithmetic, formatted as a date once per group rather than once per row.
    else if (dimension === "day") keys.push(`at / 86400000 AS k${i}`);
    else (keys.push(`json_extract(labels, ?) AS k${i}`), params.push(`$."${labelKey(dimension)}"`));
  });
  const where: string[] = [];
  if (query.since !== undefined) (where.push("at >= ?"), params.push(query.since));
  if (query.until !== undefined) (where.push("at < ?"), params.push(query.until));
  const rows = db.stmt(
    `SELECT ${keys.map((k) => `${k}, `).join("")}count(*) AS calls, count(DISTINCT session_id) AS sessions,
       sum(prompt_tokens) AS input_tokens, sum(cached_tokens) AS cached_tokens,
       sum(cache_write_tokens) AS cache_write_tokens, sum(completion_tokens) AS output_tokens,
       sum(reasoning_tokens) AS reasoning_tokens, total(cost_usd) AS cost_usd,
       sum(cost_usd IS NULL) AS unpriced_calls
     FROM model_calls
     ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
     ${keys.length ? `GROUP BY ${keys.map((_, i) => i + 1).join(", ")}` : ""}`,
  ).all(...params);
  return sortCostGroups(rows.map((row) => toCostGroup(row, query.by)));
}
