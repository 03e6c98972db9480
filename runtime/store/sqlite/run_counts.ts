/** Runs by status (`/metrics`): one grouped read of the runs table. */
import type { RunCountOps } from "../store.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";

export function runCountOps(db: SqliteDb): RunCountOps {
  return {
    runCounts: () =>
      settle(() =>
        Object.fromEntries(
          (db.stmt("SELECT status, COUNT(*) AS n FROM runs GROUP BY status").all() as Row[]).map((row) => [
            String(row.status),
            Number(row.n),
          ]),
        )
      ),
  };
}
