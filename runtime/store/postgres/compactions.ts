/**
 * The commit of a compaction and the `compaction_log` table. The commit is one transaction that locks the
 * session row (appends and other passes of the session wait, so the rows it sees are the rows it commits
 * against and running totals follow each other), locks and re-checks the lease (a takeover waits for it
 * too), archives the replaced rows (active = false, tagged with the log id), inserts the replacements at the
 * positions of the rows they stand for, and logs the pass. Rows appended since the compaction started are
 * not touched: their positions already place them after the compacted set. Passes that changed nothing are
 * logged too (`recordCompactionPass`), each row with the totals of the session's previous row plus its own.
 */
import type { CommitRequest, CommitResult, CompactionLogRow, CompactionOps } from "../store.ts";
import { leaseLostReason, NO_TOTALS } from "../rules.ts";
import { json, type PgDb, type Q } from "./_db.ts";
import { commitLog, logColumns, type LogInsert, passLog, toLogRow, toTotals } from "../_records.ts";
import { getState, setState } from "./kv.ts";
import { readLease } from "./leases.ts";
import { insertMessages, transcriptRows } from "./messages.ts";

class TranscriptChanged extends Error {}

export function compactionOps(db: PgDb): CompactionOps {
  const { sql } = db;
  return {
    async commitCompaction(request) {
      try {
        return await db.tx((q) => commit(db, q, request));
      } catch (error) {
        if (error instanceof TranscriptChanged) return { committed: false, reason: error.message };
        throw error;
      }
    },
    recordCompactionPass: (record) =>
      db.tx(async (q) => {
        await lockSession(q, record.sessionId);
        return await writeLog(q, passLog(record));
      }),
    async compactionLog(sessionId) {
      const rows = await sql`SELECT * FROM compaction_log WHERE session_id = ${sessionId} ORDER BY id`;
      return rows.map(toLogRow);
    },
  };
}

async function commit(db: PgDb, q: Q, request: CommitRequest): Promise<CommitResult> {
  const { sessionId, now } = request;
  await lockSession(q, sessionId);
  const lease = await readLease(q, sessionId, { lock: true });
  const lost = leaseLostReason(lease, { sessionId, nonce: request.nonce, now });
  if (lost) return { committed: false, reason: lost };
  const [placeholder] = await q`
    INSERT INTO compaction_log (session_id, kind, reason, outcome, before_tokens, after_tokens, messages_removed,
      created_at, total_passes, total_committed, total_hard, total_saved_tokens)
    VALUES (${sessionId}, ${request.kind}, ${request.reason}, 'committed', 0, 0, 0, ${now}, 0, 0, 0, 0)
    RETURNING id`;
  const compactionId = Number(placeholder!.id);
  const archived = await q`
    UPDATE messages SET active = false, compaction_id = ${compactionId}
    WHERE session_id = ${sessionId} AND active
      AND id IN (SELECT value::bigint FROM jsonb_array_elements_text(${json(q, request.archive)}))`;
  if (archived.count !== request.archive.length) {
    throw new TranscriptChanged("the rows to replace changed while the compaction ran");
  }
  await insertMessages(q, sessionId, request.insert, now);
  const afterTokens = request.estimate(await transcriptRows(q, sessionId));
  const log = await writeLog(q, commitLog(request, afterTokens), compactionId);
  if (request.state) {
    const { key, update } = request.state;
    const next = update(await getState(q, sessionId, key), afterTokens);
    if (next !== undefined) await setState(db, q, { sessionId, key, value: next });
  }
  return { committed: true, compactionId, afterTokens, log };
}

/** Holds the session row until the transaction ends: appends and the session's other passes wait. */
async function lockSession(q: Q, sessionId: string): Promise<void> {
  await q`SELECT 1 FROM sessions WHERE id = ${sessionId} FOR NO KEY UPDATE`;
}

/**
 * Logs one pass with the session's running totals (the caller holds the session row, so no other pass of the
 * session is logged meanwhile); returns its row. `into`: the id of the placeholder row a commit inserted first
 * (to tag the rows it archived), filled in instead of inserting a new one.
 */
async function writeLog(q: Q, row: LogInsert, into?: number): Promise<CompactionLogRow> {
  const [previous] = await q`
    SELECT total_passes, total_committed, total_hard, total_saved_tokens FROM compaction_log
    WHERE session_id = ${row.sessionId} ${into === undefined ? q`` : q`AND id < ${into}`}
    ORDER BY id DESC LIMIT 1`;
  const values = logColumns(row, previous ? toTotals(previous) : NO_TOTALS);
  const [written] = into === undefined
    ? await q`INSERT INTO compaction_log ${q(values)} RETURNING *`
    : await q`UPDATE compaction_log SET ${q(values)} WHERE id = ${into} RETURNING *`;
  return toLogRow(written!);
}
