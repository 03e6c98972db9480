/** `hermes cost`: the `model_calls` rows of a time range (by the index on `at`), grouped as asked. */
import type { CostOps, CostQuery } from "../store.ts";
import type { PgDb } from "./_db.ts";
import { labelKey, sortCostGroups, toCostGroup } from "../_records.ts";

export function costOps(db: PgDb): CostOps {
  return { costReport: (query) => costReport(db, query) };
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
