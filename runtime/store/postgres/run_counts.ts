/** Runs by status (`/metrics`; a running run with a pending approval counts as waiting_approval). */
import type { RunCountOps } from "../store.ts";
import type { PgDb } from "./_db.ts";

export function runCountOps(db: PgDb): RunCountOps {
  return {
    async runCounts() {
      const rows = await db.sql`
        SELECT CASE WHEN status = 'running' AND EXISTS (SELECT 1 FROM approvals a
            WHERE a.run_id = runs.id AND a.status = 'pending') THEN 'waiting_approval' ELSE status END AS status,
          COUNT(*)::int AS n FROM runs GROUP BY 1`;
      return Object.fromEntries(rows.map((row) => [String(row.status), Number(row.n)]));
    },
  };
}
