/**
 * The commit of a compaction and the `compaction_log` table. The commit is one `BEGIN IMMEDIATE` transaction
 * that re-checks the lease, archives the replaced rows (active = 0, tagged with the log id), inserts the
 * replacements at the positions of the rows they stand for, and logs the compaction. Rows appended since the
 * compaction started are not touched: their positions already place them after the compacted set.
 */
import type { CommitRequest, CommitResult, CompactionKind, CompactionOps } from "../store.ts";
import { leaseLostReason } from "../rules.ts";
import { jsonList, type Row, settle, type SqliteDb } from "./_db.ts";
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
    compactionLog: (sessionId) =>
      settle(() =>
        (db.stmt("SELECT * FROM compaction_log WHERE session_id = ? ORDER BY id").all(sessionId) as Row[])
          .map(
            (row) => ({
              id: Number(row.id),
              session_id: String(row.session_id),
              kind: String(row.kind) as CompactionKind,
              reason: String(row.reason),
              before_tokens: Number(row.before_tokens),
              after_tokens: Number(row.after_tokens),
              messages_removed: Number(row.messages_removed),
              created_at: Number(row.created_at),
              detail: row.detail === null ? {} : JSON.parse(String(row.detail)),
            }),
          )
      ),
  };
}

function commit(db: SqliteDb, request: CommitRequest): CommitResult {
  const { sessionId, now } = request;
  const lost = leaseLostReason(readLease(db, sessionId), { sessionId, nonce: request.nonce, now });
  if (lost) return { committed: false, reason: lost };
  const compactionId = Number(
    db.stmt(
      `INSERT INTO compaction_log (session_id, kind, reason, before_tokens, after_tokens, messages_removed,
         created_at, detail) VALUES (?, ?, ?, ?, 0, ?, ?, ?)`,
    ).run(
      sessionId,
      request.kind,
      request.reason,
      request.beforeTokens,
      request.archive.length,
      now,
      JSON.stringify(request.detail),
    ).lastInsertRowid,
  );
  const archived = db.stmt(
    `UPDATE messages SET active = 0, compaction_id = ?
     WHERE session_id = ? AND active = 1 AND id IN (SELECT value FROM json_each(?))`,
  ).run(compactionId, sessionId, jsonList(request.archive)).changes;
  if (archived !== request.archive.length) {
    throw new TranscriptChanged("the rows to replace changed while the compaction ran");
  }
  insertMessages(db, sessionId, request.insert, now);
  const afterTokens = request.estimate(transcriptRows(db, sessionId));
  db.stmt("UPDATE compaction_log SET after_tokens = ? WHERE id = ?").run(afterTokens, compactionId);
  if (request.state) {
    const next = request.state.update(getState(db, sessionId, request.state.key), afterTokens);
    if (next !== undefined) setState(db, sessionId, request.state.key, next);
  }
  return { committed: true, compactionId, afterTokens };
}
