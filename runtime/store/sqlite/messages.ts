/**
 * The `messages` table: appends (the one `max(seq) + 1` inserter), the active transcript, the fingerprint the
 * agent caches it by, and the size-only rows compaction plans and estimates with. The active-transcript
 * queries use the partial index `messages_active (session_id, pos, seq) WHERE active = 1`, so their cost
 * follows the active rows, not the stored history.
 */
import type { SQLInputValue } from "node:sqlite";
import type { AppendMessage, EstimateInput, MessageOps, TranscriptRow } from "../store.ts";
import { jsonList, type Row, settle, type SqliteDb } from "./_db.ts";
import { toMessage, toTranscriptRow, TRANSCRIPT_COLUMNS } from "./_rows.ts";
import { appendedMessage } from "../_records.ts";

/** The queries that read the active transcript; each is served by a partial index (see query_plan_test.ts). */
export const ACTIVE_SQL = {
  messages: "SELECT * FROM messages WHERE session_id = ? AND active = 1 ORDER BY pos, seq",
  version:
    "SELECT count(*) AS n, coalesce(max(id), 0) AS m FROM messages WHERE session_id = ? AND active = 1",
  rows: `SELECT ${TRANSCRIPT_COLUMNS} FROM messages WHERE session_id = ? AND active = 1 ORDER BY pos, seq`,
  reading:
    `SELECT ${TRANSCRIPT_COLUMNS} FROM messages WHERE session_id = ? AND active = 1 AND role = 'assistant'
    AND prompt_tokens IS NOT NULL ORDER BY seq DESC LIMIT 1`,
  compaction: "SELECT max(seq) AS s FROM messages WHERE session_id = ? AND active = 1 AND kind <> 'message'",
  after: `SELECT ${TRANSCRIPT_COLUMNS} FROM messages WHERE session_id = ? AND seq > ? AND active = 1`,
} as const;

/** A row to insert; `pos` defaults to its seq (the end of the prompt). */
export interface InsertRow extends AppendMessage {
  pos?: number;
}

export function messageOps(db: SqliteDb): MessageOps {
  return {
    appendMessages: (sessionId, messages) =>
      settle(() => {
        const now = db.clock.now();
        const inserted = db.immediate(() => insertMessages(db, sessionId, messages, now));
        return messages.map((m, i) => appendedMessage(m, { session_id: sessionId, ...inserted[i]!, now }));
      }),
    activeMessages: (sessionId) =>
      settle(() => (db.stmt(ACTIVE_SQL.messages).all(sessionId) as Row[]).map(toMessage)),
    allMessages: (sessionId) =>
      settle(() =>
        (db.stmt("SELECT * FROM messages WHERE session_id = ? ORDER BY pos, seq").all(sessionId) as Row[])
          .map(toMessage)
      ),
    // Keys first (no content read), then those rows: each page costs its own rows, not the rest of the session.
    messagePage: (sessionId, after, limit) =>
      settle(() =>
        (db.stmt(
          `SELECT * FROM messages WHERE session_id = ? AND seq IN (
             SELECT seq FROM messages WHERE session_id = ? AND (? IS NULL OR pos > ? OR (pos = ? AND seq > ?))
             ORDER BY pos, seq LIMIT ?)
           ORDER BY pos, seq`,
        ).all(
          sessionId,
          sessionId,
          after?.pos ?? null,
          after?.pos ?? null,
          after?.pos ?? null,
          after?.seq ?? null,
          limit,
        ) as Row[]).map(toMessage)
      ),
    messageCount: (sessionId) =>
      settle(() =>
        Number((db.stmt("SELECT count(*) AS n FROM messages WHERE session_id = ?").get(sessionId) as Row).n)
      ),
    toolOutputBytes: (sessionId) =>
      settle(() =>
        Number(
          (db.stmt(
            "SELECT coalesce(sum(length(CAST(content AS BLOB))), 0) AS n FROM messages WHERE session_id = ? AND role = 'tool'",
          ).get(sessionId) as Row).n,
        )
      ),
    transcriptVersion: (sessionId) =>
      settle(() => {
        const row = db.stmt(ACTIVE_SQL.version).get(sessionId) as Row;
        return `${row.n}:${row.m}`;
      }),
    transcriptRows: (sessionId) => settle(() => transcriptRows(db, sessionId)),
    messageContents: (ids, cap) =>
      settle(() => {
        const rows = db.stmt(
          "SELECT id, substr(content, 1, ?) AS content FROM messages WHERE id IN (SELECT value FROM json_each(?))",
        ).all(cap ?? 2_147_483_647, jsonList(ids)) as Row[];
        return new Map(rows.map((r) => [Number(r.id), String(r.content)]));
      }),
    estimateInput: (sessionId) => settle(() => estimateInput(db, sessionId)),
  };
}

/**
 * Inserts `rows` after everything already in the session (seq = max + 1, …) at `now`; the caller holds the
 * write transaction. Returns each row's id and seq.
 */
export function insertMessages(
  db: SqliteDb,
  sessionId: string,
  rows: readonly InsertRow[],
  now: number,
): { id: number; seq: number }[] {
  const top = db.stmt("SELECT coalesce(max(seq), 0) AS s FROM messages WHERE session_id = ?").get(
    sessionId,
  ) as Row;
  let seq = Number(top.s);
  const insert = db.stmt(
    `INSERT INTO messages (session_id, seq, pos, role, content, tool_calls, tool_call_id, name, kind,
       active, prompt_tokens, completion_tokens, created_at, reasoning)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  return rows.map((m) => {
    seq++;
    const result = insert.run(
      sessionId,
      seq,
      m.pos ?? seq,
      m.role,
      // node:sqlite reads TEXT up to its first NUL: stored as U+FFFD (as on PostgreSQL), what follows is kept.
      m.content.includes("\0") ? m.content.replaceAll("\0", "\uFFFD") : m.content,
      m.tool_calls?.length ? JSON.stringify(m.tool_calls) : null,
      m.tool_call_id ?? null,
      m.name ?? null,
      m.kind ?? "message",
      m.active === false ? 0 : 1,
      m.prompt_tokens ?? null,
      m.completion_tokens ?? null,
      now,
      m.reasoning?.length ? JSON.stringify(m.reasoning) : null,
    );
    return { id: Number(result.lastInsertRowid), seq };
  });
}

/** The session's active rows without content, in prompt order (the order of `activeMessages`). */
export function transcriptRows(db: SqliteDb, sessionId: string): TranscriptRow[] {
  return arrays(db, ACTIVE_SQL.rows, sessionId).map(toTranscriptRow);
}

/**
 * Two index probes and a range: the newest reading (partial index `messages_readings`), the newest compaction
 * row (`messages_compaction_rows`), then the rows stored after the reading (by seq). Every active row only
 * when there is no usable reading.
 */
function estimateInput(db: SqliteDb, sessionId: string): EstimateInput {
  const [reading] = arrays(db, ACTIVE_SQL.reading, sessionId).map(toTranscriptRow);
  const compacted = db.stmt(ACTIVE_SQL.compaction).get(sessionId) as Row;
  if (!reading || reading.seq < Number(compacted.s ?? 0)) {
    return { reading: null, after: transcriptRows(db, sessionId) };
  }
  return { reading, after: arrays(db, ACTIVE_SQL.after, sessionId, reading.seq).map(toTranscriptRow) };
}

function arrays(db: SqliteDb, sql: string, ...params: SQLInputValue[]): SQLInputValue[][] {
  const statement = db.stmt(sql);
  // Deno 2.9's node:sqlite has the method; its type declarations do not yet.
  (statement as typeof statement & { setReturnArrays(enabled: boolean): void }).setReturnArrays(true);
  return statement.all(...params) as unknown as SQLInputValue[][];
}
