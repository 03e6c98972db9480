/**
 * The commit of a compaction: one `BEGIN IMMEDIATE` transaction that re-checks the lease, archives the
 * replaced rows (active = 0, tagged with the compaction log id), inserts the replacements at the positions of
 * the rows they stand for, and logs the compaction. Rows appended since the compaction started are not
 * touched: their positions already place them after the compacted set.
 */
import type { CompactionReason } from "../agent/seams.ts";
import type { Store } from "../store/store.ts";
import type { Role } from "../core/types.ts";
import { estimateTokens } from "./estimate.ts";
import { leaseLostReason } from "./lease.ts";
import { loadPlanRows } from "./rows.ts";

export type CompactionKind = "summarize" | "prune_tool_results";

export interface ReplacementRow {
  role: Role;
  content: string;
  kind: "summary" | "pruned";
  /** Prompt position: that of the (archived) row it stands for. */
  pos: number;
  tool_call_id?: string;
  name?: string;
}

export interface CommitRequest {
  sessionId: string;
  /** The lease nonce this compaction holds. */
  nonce: string;
  now: number;
  kind: CompactionKind;
  reason: CompactionReason;
  /** Ids of the active rows being replaced. */
  archive: readonly number[];
  insert: readonly ReplacementRow[];
  beforeTokens: number;
  detail: Record<string, unknown>;
  /** Runs inside the transaction with the estimate of the new transcript (guard bookkeeping). */
  inTransaction?: (afterTokens: number) => void;
}

export type CommitResult =
  | { committed: true; compactionId: number; afterTokens: number }
  | { committed: false; reason: string };

class TranscriptChanged extends Error {}

export function commitCompaction(store: Store, request: CommitRequest): CommitResult {
  const { sessionId, now } = request;
  try {
    return store.immediate((): CommitResult => {
      const lost = leaseLostReason(store, { sessionId, nonce: request.nonce, now });
      if (lost) return { committed: false, reason: lost };
      const compactionId = Number(
        store.stmt(
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
      const archived = store.stmt(
        `UPDATE messages SET active = 0, compaction_id = ?
         WHERE session_id = ? AND active = 1 AND id IN (SELECT value FROM json_each(?))`,
      ).run(compactionId, sessionId, JSON.stringify(request.archive)).changes;
      if (archived !== request.archive.length) {
        throw new TranscriptChanged("the rows to replace changed while the compaction ran");
      }
      const top = store.stmt("SELECT coalesce(max(seq), 0) AS s FROM messages WHERE session_id = ?")
        .get(sessionId) as { s: number };
      let seq = Number(top.s);
      const insert = store.stmt(
        `INSERT INTO messages (session_id, seq, pos, role, content, tool_call_id, name, kind, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const row of request.insert) {
        insert.run(
          sessionId,
          ++seq,
          row.pos,
          row.role,
          row.content,
          row.tool_call_id ?? null,
          row.name ?? null,
          row.kind,
          now,
        );
      }
      const afterTokens = estimateTokens(loadPlanRows(store, sessionId));
      store.stmt("UPDATE compaction_log SET after_tokens = ? WHERE id = ?").run(afterTokens, compactionId);
      request.inTransaction?.(afterTokens);
      return { committed: true, compactionId, afterTokens };
    });
  } catch (error) {
    if (error instanceof TranscriptChanged) return { committed: false, reason: error.message };
    throw error;
  }
}
