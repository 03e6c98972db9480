/**
 * The `approvals` table: tool calls parked for a decision over the API. A decision is one UPDATE qualified by
 * `status = 'pending'`, so the first of any number of deciders wins. A store file has no notifications: a
 * waiting run polls (`watchApprovals` never wakes).
 */
import type { ApprovalOps } from "../store.ts";
import { toApproval } from "../_run_queue.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";

export function approvalOps(db: SqliteDb): ApprovalOps {
  const get = (id: string) => {
    const row = db.stmt("SELECT * FROM approvals WHERE id = ?").get(id) as Row | undefined;
    return row && toApproval(row);
  };
  return {
    createApproval: (a) =>
      settle(() => {
        db.immediate(() =>
          db.stmt(
            `INSERT INTO approvals (id, run_id, session_id, job, tool, tool_call_id, server, arguments, subject,
               reason, rule, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          ).run(
            a.id,
            a.run_id,
            a.session_id,
            a.job,
            a.tool,
            a.tool_call_id,
            a.server,
            JSON.stringify(a.arguments),
            a.subject,
            a.reason,
            a.rule,
            a.created_at,
            a.expires_at,
          )
        );
        return get(a.id)!;
      }),
    getApproval: (id) => settle(() => get(id)),
    listApprovals: (options = {}) =>
      settle(() => {
        const where: string[] = [];
        const params: (string | number)[] = [];
        if (options.status) (where.push("status = ?"), params.push(options.status));
        if (options.status === "pending" && options.now !== undefined) {
          where.push("expires_at > ?"), params.push(options.now);
        }
        if (options.run_id) (where.push("run_id = ?"), params.push(options.run_id));
        const sql = `SELECT * FROM approvals ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
          ORDER BY created_at, id LIMIT ?`;
        return (db.stmt(sql).all(...params, options.limit ?? -1) as Row[]).map(toApproval);
      }),
    decideApproval: (d) =>
      settle(() =>
        db.immediate(() => {
          const changed = Number(
            db.stmt(
              `UPDATE approvals SET status = ?, decision_reason = ?, decided_by = ?, decided_at = ?
               WHERE id = ? AND status = 'pending'`,
            ).run(d.status, d.reason, d.by, d.now, d.id).changes,
          );
          const approval = get(d.id);
          return approval && { approval, decided: changed === 1 };
        })
      ),
    watchApprovals: () => Promise.resolve(() => Promise.resolve()),
  };
}
