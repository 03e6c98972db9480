/** The `session_steps` table: each step a run sends, recorded with its user row in one transaction. */
import type { StepOps, StepRecord } from "../store.ts";
import { appendedMessage, toStep } from "../_records.ts";
import { type PgDb, pgText, type Q } from "./_db.ts";
import { insertMessages } from "./messages.ts";

export function stepOps(db: PgDb): StepOps {
  const { sql } = db;
  return {
    startStep(sessionId, { step, input }) {
      const now = db.clock.now();
      // In a transaction: a COMMIT cut off by a restart is resolved (_db.ts), so an attempt counts once.
      return db.tx(async (q) => {
        const [row] = await q`
          INSERT INTO session_steps (session_id, step, input, attempt, status, started_at, updated_at)
          VALUES (${sessionId}, ${step}, ${input}, 1, 'started', ${now}, ${now})
          ON CONFLICT (session_id, step) DO UPDATE SET attempt = session_steps.attempt + 1,
            updated_at = excluded.updated_at
          WHERE session_steps.status <> 'done'
          RETURNING *`;
        // A step already done is left as it is (no row returned): read it.
        return row ? toStep(row) : (await readStep(q, sessionId, step))!;
      });
    },
    sendStep: (sessionId, step, message) =>
      db.tx(async (q) => {
        const [row] = await q`
          SELECT message_seq FROM session_steps WHERE session_id = ${sessionId} AND step = ${step} FOR UPDATE`;
        if (!row) throw new Error(`Cannot send step ${step} of session ${sessionId}: it was never started`);
        if (row.message_seq !== null) return null;
        const now = db.clock.now();
        const [{ id, seq }] = await insertMessages(q, sessionId, [message], now) as [
          { id: number; seq: number },
        ];
        await q`
          UPDATE session_steps SET message_seq = ${seq}, updated_at = ${db.clock.now()}
          WHERE session_id = ${sessionId} AND step = ${step}`;
        // The row as stored, without reading it back (as appendMessages returns its rows).
        return {
          ...appendedMessage(message, { session_id: sessionId, id, seq, now }),
          content: pgText(message.content),
        };
      }),
    async finishStep(sessionId, step) {
      await sql`
        UPDATE session_steps SET status = 'done', updated_at = ${db.clock.now()}
        WHERE session_id = ${sessionId} AND step = ${step}`;
    },
    async sessionSteps(sessionId) {
      const rows = await sql`SELECT * FROM session_steps WHERE session_id = ${sessionId} ORDER BY step`;
      return rows.map(toStep);
    },
  };
}

async function readStep(q: Q, sessionId: string, step: number): Promise<StepRecord | undefined> {
  const [row] = await q`SELECT * FROM session_steps WHERE session_id = ${sessionId} AND step = ${step}`;
  return row ? toStep(row) : undefined;
}
