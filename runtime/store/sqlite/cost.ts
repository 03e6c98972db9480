/** `hermes cost`: the `model_calls` rows of a time range (by the index on `at`), grouped as asked. */
import type { SQLInputValue } from "node:sqlite";
import type { CostOps, CostQuery } from "../store.ts";
import { settle, type SqliteDb } from "./_db.ts";
import { labelKey, sortCostGroups, toCostGroup } from "../_records.ts";

export function costOps(db: SqliteDb): CostOps {
  return { costReport: (query) => settle(() => costReport(db, query)) };
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
