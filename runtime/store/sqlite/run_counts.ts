/** Runs by status (`/metrics`; a running run with a pending approval counts as waiting_approval). */
import type { RunCountOps } from "../store.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";

export function runCountOps(db: SqliteDb): RunCountOps {
  return {
    runCounts: () =>
      settle(() =>
        Object.fromEntries(
          (db.stmt(
            `SELECT CASE WHEN status = 'running' AND EXISTS (SELECT 1 FROM approvals a
                 WHERE a.run_id = runs.id AND a.status = 'pending') THEN 'waiting_approval' ELSE status END AS status,
               COUNT(*) AS n FROM runs GROUP BY 1`,
          ).all() as Row[]).map((row) => [
            String(row.status),
            Number(row.n),
          ]),
        )
      ),
  };
}
