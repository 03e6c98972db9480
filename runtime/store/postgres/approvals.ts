/**
 * The `approvals` table: tool calls parked for a decision over the API. A decision is one UPDATE qualified by
 * `status = 'pending'`, so the first of any number of deciders on any server wins; it `NOTIFY
 * hermes_approvals`, which wakes the run waiting for it wherever it runs.
 */
import type { ApprovalOps } from "../store.ts";
import { toApproval } from "../_run_queue.ts";
import type { PgDb } from "./_db.ts";

export const APPROVALS_CHANNEL = "hermes_approvals";

export function approvalOps(db: PgDb): ApprovalOps {
  const { sql } = db;
  return {
    async createApproval(a) {
      const [row] = await sql`
        INSERT INTO approvals (id, run_id, session_id, job, tool, tool_call_id, server, arguments, subject, reason,
          rule, created_at, expires_at)
        VALUES (${a.id}, ${a.run_id}, ${a.session_id}, ${a.job}, ${a.tool}, ${a.tool_call_id}, ${a.server},
          ${
        JSON.stringify(a.arguments)
      }, ${a.subject}, ${a.reason}, ${a.rule}, ${a.created_at}, ${a.expires_at})
        RETURNING *`;
      return toApproval(row!);
    },
    async getApproval(id) {
      const [row] = await sql`SELECT * FROM approvals WHERE id = ${id}`;
      return row && toApproval(row);
    },
    async listApprovals(options = {}) {
      const rows = await sql`
        SELECT * FROM approvals WHERE true
          ${options.status ? sql`AND status = ${options.status}` : sql``}
          ${
        options.status === "pending" && options.now !== undefined
          ? sql`AND expires_at > ${options.now}`
          : sql``
      }
          ${options.run_id ? sql`AND run_id = ${options.run_id}` : sql``}
        ORDER BY created_at, id
        ${options.limit !== undefined ? sql`LIMIT ${options.limit}` : sql``}`;
      return rows.map(toApproval);
    },
    decideApproval: (d) =>
      db.tx(async (q) => {
        const changed = await q`
          UPDATE approvals SET status = ${d.status}, decision_reason = ${d.reason}, decided_by = ${d.by},
            decided_at = ${d.now}
          WHERE id = ${d.id} AND status = 'pending' RETURNING id`;
        if (changed.length === 1) await q`SELECT pg_notify(${APPROVALS_CHANNEL}, ${d.id})`;
        const [row] = await q`SELECT * FROM approvals WHERE id = ${d.id}`;
        return row && { approval: toApproval(row), decided: changed.length === 1 };
      }, async (q) => {
        const [row] = await q`SELECT status, decided_at FROM approvals WHERE id = ${d.id}`;
        return row?.status === d.status && Number(row?.decided_at) === d.now;
      }),
    async watchApprovals(wake) {
      const { unlisten } = await sql.listen(APPROVALS_CHANNEL, (payload) => wake(payload));
      return async () => {
        await unlisten();
      };
    },
  };
}
