/** Runs by status (`/metrics`): one grouped read of the runs table. */
import type { RunCountOps } from "../store.ts";
import type { PgDb } from "./_db.ts";

export function runCountOps(db: PgDb): RunCountOps {
  return {
    async runCounts() {
      const rows = await db.sql`SELECT status, COUNT(*)::int AS n FROM runs GROUP BY status`;
      return Object.fromEntries(rows.map((row) => [String(row.status), Number(row.n)]));
    },
  };
}
