/**
 * The commit of a compaction and the `compaction_log` table. The commit is one `BEGIN IMMEDIATE` transaction
 * that re-checks the lease, archives the replaced rows (active = 0, tagged with the log id), inserts the
 * replacements at the positions of the rows they stand for, and logs the compaction. Rows appended since the
 * compaction started are not touched: their positions already place them after the compacted set.
 * Passes that changed nothing are logged too (`recordCompactionPass`), each row with the session's running
 * totals, read from its previous row (index `compaction_log_session (session_id, id)`).
 */
import type { CommitRequest, CommitResult, CompactionLogRow, CompactionOps, PassRecord } from "../store.ts";
import { leaseLostReason, nextTotals, NO_TOTALS, occupancyOf, type PassTotals } from "../rules.ts";
import { jsonList, type Row, settle, type SqliteDb } from "./_db.ts";
import { commitLog, logColumns, type LogInsert, passLog, toLogRow, toTotals } from "../_records.ts";
import { getState, setState } from "./kv.ts";
import { readLease } from "./leases.ts";
import { insertMessages, transcriptRows } from "./messages.ts";

class TranscriptChanged extends Error {}

export function compactionOps(db: SqliteDb): CompactionOps {
  return {
    commitCompaction: (request) =>
      settle(() => {
        try {
          return db.immediate(() => commit(db, request));
        } catch (error) {
          if (error instanceof TranscriptChanged) return { committed: false, reason: error.message };
          throw error;
        }
      }),
    recordCompactionPass: (record) => settle(() => db.immediate(() => recordPass(db, record))),
    compactionLog: (sessionId) =>
      settle(() =>
        (db.stmt("SELECT * FROM compaction_log WHERE session_id = ? ORDER BY id").all(sessionId) as Row[])
          .map(toLogRow)
      ),
  };
}

function commit(db: SqliteDb, request: CommitRequest): CommitResult {
  const { sessionId, now } = request;
  const lost = leaseLostReason(readLease(db, sessionId), { sessionId, nonce: request.nonce, now });
  if (lost) return { committed: false, reason: lost };
  // Inserted first to tag the rows it archives; its after_tokens and totals are set once they are known.
  const compactionId = insertLog(db, commitLog(request, 0));
  const archived = db.stmt(
    `UPDATE messages SET active = 0, compaction_id = ?
     WHERE session_id = ? AND active = 1 AND id IN (SELECT value FROM json_each(?))`,
  ).run(compactionId, sessionId, jsonList(request.archive)).changes;
  if (archived !== request.archive.length) {
    throw new TranscriptChanged("the rows to replace changed while the compaction ran");
  }
  insertMessages(db, sessionId, request.insert, now);
  const afterTokens = request.estimate(transcriptRows(db, sessionId));
  const totals = nextTotals(previousTotals(db, sessionId, compactionId), {
    kind: request.kind,
    outcome: "committed",
    before: request.beforeTokens,
    after: afterTokens,
  });
  db.stmt(
    `UPDATE compaction_log SET after_tokens = ?, occupancy = ?, total_passes = ?, total_committed = ?,
       total_hard = ?, total_saved_tokens = ? WHERE id = ?`,
  ).run(
    afterTokens,
    occupancyOf(afterTokens, request.measures?.thresholdTokens),
    totals.total_passes,
    totals.total_committed,
    totals.total_hard,
    totals.total_saved_tokens,
    compactionId,
  );
  if (request.state) {
    const next = request.state.update(getState(db, sessionId, request.state.key), afterTokens);
    if (next !== undefined) setState(db, sessionId, request.state.key, next);
  }
  return { committed: true, compactionId, afterTokens, log: readLog(db, compactionId) };
}

function recordPass(db: SqliteDb, record: PassRecord): CompactionLogRow {
  const id = insertLog(db, passLog(record));
  return readLog(db, id);
}

/** Inserts one log row with its running totals; the caller holds the write transaction. */
function insertLog(db: SqliteDb, row: LogInsert): number {
  const values = logColumns(row, previousTotals(db, row.sessionId, null));
  const columns = Object.keys(values);
  return Number(
    db.stmt(
      `INSERT INTO compaction_log (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
    ).run(...Object.values(values)).lastInsertRowid,
  );
}

/** The totals of the session's last logged pass before `before` (null: the last one), or zeros. */
function previousTotals(db: SqliteDb, sessionId: string, before: number | null): PassTotals {
  const row = db.stmt(
    `SELECT total_passes, total_committed, total_hard, total_saved_tokens FROM compaction_log
     WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT 1`,
  ).get(sessionId, before ?? Number.MAX_SAFE_INTEGER) as Row | undefined;
  return row ? toTotals(row) : NO_TOTALS;
}

function readLog(db: SqliteDb, id: number): CompactionLogRow {
  return toLogRow(db.stmt("SELECT * FROM compaction_log WHERE id = ?").get(id) as Row);
}
