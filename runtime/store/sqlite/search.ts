/**
 * Full-text search over every stored message (FTS5 index `messages_fts`), compacted rows and archived
 * sessions included. The index is filled lazily (appends stay cheap: an FTS5 insert per transaction costs
 * more than the append itself); `meta.fts_upto` is the highest message id indexed.
 */
import type { SearchOps, SearchTerm } from "../store.ts";
import type { MessageKind, Role } from "../../core/types.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";

export function searchOps(db: SqliteDb): SearchOps {
  return {
    syncSearchIndex: () => settle(() => syncSearchIndex(db)),
    searchMessages: ({ terms, job, limit, order }) =>
      settle(() => {
        syncSearchIndex(db);
        const columns =
          "m.session_id, s.job, s.archived_at, m.seq, m.role, m.kind, m.active, m.created_at, m.content";
        const sql = `SELECT ${columns} FROM messages_fts f JOIN messages m ON m.id = f.rowid
          JOIN sessions s ON s.id = m.session_id WHERE messages_fts MATCH ? ${
          job === undefined ? "" : "AND s.job = ?"
        }
          ORDER BY ${order === "relevance" ? "f.rank" : "f.rowid DESC"} LIMIT ?`;
        const params = job === undefined
          ? [matchExpression(terms), limit]
          : [matchExpression(terms), job, limit];
        return (db.stmt(sql).all(...params) as Row[]).map((row) => ({
          session_id: String(row.session_id),
          job: String(row.job),
          session_archived: row.archived_at !== null,
          seq: Number(row.seq),
          role: String(row.role) as Role,
          kind: String(row.kind) as MessageKind,
          active: Number(row.active) === 1,
          created_at: Number(row.created_at),
          content: String(row.content),
        }));
      }),
  };
}

function syncSearchIndex(db: SqliteDb): number {
  return db.immediate(() => {
    const upto = Number((db.stmt("SELECT value FROM meta WHERE key = 'fts_upto'").get() as Row).value);
    const top = Number((db.stmt("SELECT coalesce(max(id), 0) AS m FROM messages").get() as Row).m);
    if (top <= upto) return 0;
    const added = db.stmt(
      "INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages WHERE id > ? ORDER BY id",
    ).run(upto).changes;
    db.stmt("UPDATE meta SET value = ? WHERE key = 'fts_upto'").run(top);
    return Number(added);
  });
}

/** Each term quoted, so FTS5 operators in what a user typed are taken as words. */
function matchExpression(terms: readonly SearchTerm[]): string {
  return terms.map((t) => `"${t.words.join(" ")}"${t.prefix ? "*" : ""}`).join(" ");
}
