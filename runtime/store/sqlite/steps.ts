/** The `session_steps` table: each step a run sends, recorded with its user row in one transaction. */
import type { StepOps, StepRecord } from "../store.ts";
import { toStep } from "../_records.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";
import { insertMessages } from "./messages.ts";
import { toMessage } from "./_rows.ts";

export function stepOps(db: SqliteDb): StepOps {
  return {
    startStep: (sessionId, { step, input }) =>
      settle(() =>
        db.immediate(() => {
          const now = db.clock.now();
          db.stmt(
            `INSERT INTO session_steps (session_id, step, input, attempt, status, started_at, updated_at)
             VALUES (?, ?, ?, 1, 'started', ?, ?)
             ON CONFLICT (session_id, step) DO UPDATE SET attempt = attempt + 1, updated_at = excluded.updated_at
             WHERE status <> 'done'`,
          ).run(sessionId, step, input, now, now);
          return readStep(db, sessionId, step)!;
        })
      ),
    sendStep: (sessionId, step, message) =>
      settle(() =>
        db.immediate(() => {
          const record = readStep(db, sessionId, step);
          if (!record) {
            throw new Error(`Cannot send step ${step} of session ${sessionId}: it was never started`);
          }
          if (record.message_seq !== null) return null;
          const [{ id, seq }] = insertMessages(db, sessionId, [message], db.clock.now()) as [
            { id: number; seq: number },
          ];
          db.stmt(
            "UPDATE session_steps SET message_seq = ?, updated_at = ? WHERE session_id = ? AND step = ?",
          )
            .run(seq, db.clock.now(), sessionId, step);
          return toMessage(db.stmt("SELECT * FROM messages WHERE id = ?").get(id) as Row);
        })
      ),
    finishStep: (sessionId, step) =>
      settle(() => {
        db.immediate(() =>
          db.stmt(
            "UPDATE session_steps SET status = 'done', updated_at = ? WHERE session_id = ? AND step = ?",
          )
            .run(db.clock.now(), sessionId, step)
        );
      }),
    sessionSteps: (sessionId) =>
      settle(() =>
        (db.stmt("SELECT * FROM session_steps WHERE session_id = ? ORDER BY step").all(sessionId) as Row[])
          .map(toStep)
      ),
  };
}

function readStep(db: SqliteDb, sessionId: string, step: number): StepRecord | undefined {
  const row = db.stmt("SELECT * FROM session_steps WHERE session_id = ? AND step = ?").get(sessionId, step) as
    | Row
    | undefined;
  return row ? toStep(row) : undefined;
}
