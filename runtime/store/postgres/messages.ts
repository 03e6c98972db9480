/**
 * The `messages` table: appends, the active transcript, the fingerprint the agent caches it by, and the
 * size-only rows compaction plans and estimates with. An append is one statement: it increments the session's
 * `last_seq` (locking the session row until the statement commits) and inserts the rows numbered after it,
 * so appends from any number of connections and hosts are totally ordered per session without gaps.
 * The active-transcript queries are served by the partial index `messages_active` (`WHERE active`).
 */
import type { AppendMessage, EstimateInput, MessageOps, TranscriptRow } from "../store.ts";
import { json, type PgDb, pgText, type Q } from "./_db.ts";
import { messageColumns, toMessage, toTranscriptRow, transcriptColumns } from "./_rows.ts";
import { appendedMessage } from "../_records.ts";

/** A row to insert; `pos` defaults to its seq (the end of the prompt). */
export interface InsertRow extends AppendMessage {
  pos?: number;
}

export function messageOps(db: PgDb): MessageOps {
  const { sql } = db;
  return {
    async appendMessages(sessionId, messages) {
      const now = db.clock.now();
      // In a transaction, not autocommit: a COMMIT cut off by a restart is resolved, never appended twice.
      const inserted = await db.tx(
        (q) => insertMessages(q, sessionId, messages, now),
        async (q, rows) => {
          // After a crash: committed only if the rows are there as this append wrote them.
          const found = await q`
            SELECT count(*)::integer AS n FROM messages WHERE session_id = ${sessionId}
              AND id IN (SELECT value::bigint FROM jsonb_array_elements_text(${
            json(q, rows.map((r) => r.id))
          }))
              AND created_at = ${now}`;
          return Number(found[0]!.n) === rows.length;
        },
      );
      // The content as PostgreSQL stored it (pgText).
      return messages.map((m, i) => ({
        ...appendedMessage(m, { session_id: sessionId, ...inserted[i]!, now }),
        content: pgText(m.content),
      }));
    },
    async activeMessages(sessionId) {
      const rows = await sql`
        SELECT ${
        messageColumns(sql)
      } FROM messages WHERE session_id = ${sessionId} AND active ORDER BY pos, seq`;
      return rows.map(toMessage);
    },
    async allMessages(sessionId) {
      const rows = await sql`
        SELECT ${messageColumns(sql)} FROM messages WHERE session_id = ${sessionId} ORDER BY pos, seq`;
      return rows.map(toMessage);
    },
    // Keys first (no content read), then those rows: each page costs its own rows, not the rest of the session.
    async messagePage(sessionId, after, limit) {
      const from = after === null
        ? sql`TRUE`
        : sql`(pos > ${after.pos} OR (pos = ${after.pos} AND seq > ${after.seq}))`;
      const rows = await sql`
        SELECT ${messageColumns(sql)} FROM messages WHERE session_id = ${sessionId} AND seq IN (
          SELECT seq FROM messages WHERE session_id = ${sessionId} AND ${from} ORDER BY pos, seq LIMIT ${limit})
        ORDER BY pos, seq`;
      return rows.map(toMessage);
    },
    async messageCount(sessionId) {
      const [row] = await sql`SELECT count(*) AS n FROM messages WHERE session_id = ${sessionId}`;
      return Number(row!.n);
    },
    async toolOutputBytes(sessionId) {
      const [row] = await sql`
        SELECT coalesce(sum(octet_length(content)), 0) AS n FROM messages
        WHERE session_id = ${sessionId} AND role = 'tool'`;
      return Number(row!.n);
    },
    async transcriptVersion(sessionId) {
      const [row] = await sql`
        SELECT count(*) AS n, coalesce(max(id), 0) AS m FROM messages WHERE session_id = ${sessionId} AND active`;
      return `${row!.n}:${row!.m}`;
    },
    transcriptRows: (sessionId) => transcriptRows(sql, sessionId),
    async messageContents(ids, cap) {
      if (ids.length === 0) return new Map();
      const rows = await sql`
        SELECT id, substr(content, 1, ${cap ?? 2_147_483_647}) AS content FROM messages
        WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text(${json(sql, ids)}))`;
      return new Map(rows.map((r) => [Number(r.id), String(r.content)]));
    },
    estimateInput: (sessionId) => estimateInput(sql, sessionId),
  };
}

/**
 * Inserts `rows` after everything already in the session (seq = last_seq + 1, …) at `now`, in one statement
 * (inside the caller's transaction when `q` is one). Returns each row's id and seq, in the order of `rows`.
 */
export async function insertMessages(
  q: Q,
  sessionId: string,
  rows: readonly InsertRow[],
  now: number,
): Promise<{ id: number; seq: number }[]> {
  if (rows.length === 0) return [];
  const payload = rows.map((m, i) => ({
    i: i + 1,
    pos: m.pos ?? null,
    role: m.role,
    content: pgText(m.content),
    tool_calls: m.tool_calls?.length ? pgText(JSON.stringify(m.tool_calls)) : null,
    tool_call_id: pgText(m.tool_call_id),
    name: pgText(m.name),
    kind: m.kind ?? "message",
    active: m.active ?? true,
    prompt_tokens: m.prompt_tokens ?? null,
    completion_tokens: m.completion_tokens ?? null,
    reasoning: m.reasoning?.length ? pgText(JSON.stringify(m.reasoning)) : null,
  }));
  const inserted = await q`
    WITH base AS (
      UPDATE sessions SET last_seq = last_seq + ${rows.length} WHERE id = ${sessionId}
      RETURNING last_seq - ${rows.length} AS seq
    )
    INSERT INTO messages (session_id, seq, pos, role, content, tool_calls, tool_call_id, name, kind, active,
      prompt_tokens, completion_tokens, created_at, reasoning)
    SELECT ${sessionId}::text, base.seq + r.i, coalesce(r.pos, base.seq + r.i), r.role, r.content, r.tool_calls,
      r.tool_call_id, r.name, r.kind, r.active, r.prompt_tokens, r.completion_tokens, ${now}::bigint,
      r.reasoning
    FROM base, jsonb_to_recordset(${json(q, payload)}) AS r(i integer, pos double precision, role text,
      content text, tool_calls text, tool_call_id text, name text, kind text, active boolean,
      prompt_tokens integer, completion_tokens integer, reasoning text)
    RETURNING id, seq`;
  if (inserted.length !== rows.length) {
    throw new Error(`Cannot append messages to session "${sessionId}": no such session`);
  }
  return inserted.map((r) => ({ id: Number(r.id), seq: Number(r.seq) })).sort((a, b) => a.seq - b.seq);
}

/** The session's active rows without content, in prompt order (the order of `activeMessages`). */
export async function transcriptRows(q: Q, sessionId: string): Promise<TranscriptRow[]> {
  const rows = await q`
    SELECT ${
    transcriptColumns(q)
  } FROM messages WHERE session_id = ${sessionId} AND active ORDER BY pos, seq`;
  return rows.map(toTranscriptRow);
}

/**
 * Two index probes and a range: the newest reading (partial index `messages_readings`), the newest compaction
 * row (`messages_compaction_rows`), then the rows stored after the reading. Every active row only when
 * there is no usable reading.
 */
async function estimateInput(q: Q, sessionId: string): Promise<EstimateInput> {
  // Both probes in one statement: a row of nulls but `compacted` when there is no reading.
  const [probed] = await q`
    SELECT r.*, (SELECT max(seq) FROM messages WHERE session_id = ${sessionId} AND active AND kind <> 'message')
      AS compacted
    FROM (SELECT 1) AS one LEFT JOIN LATERAL (
      SELECT ${transcriptColumns(q)} FROM messages
      WHERE session_id = ${sessionId} AND active AND role = 'assistant' AND prompt_tokens IS NOT NULL
      ORDER BY seq DESC LIMIT 1) AS r ON true`;
  const reading = probed!.id === null ? undefined : toTranscriptRow(probed!);
  if (!reading || reading.seq < Number(probed!.compacted ?? 0)) {
    return { reading: null, after: await transcriptRows(q, sessionId) };
  }
  const after = await q`
    SELECT ${
    transcriptColumns(q)
  } FROM messages WHERE session_id = ${sessionId} AND seq > ${reading.seq} AND active
    ORDER BY pos, seq`;
  return { reading, after: after.map(toTranscriptRow) };
}
