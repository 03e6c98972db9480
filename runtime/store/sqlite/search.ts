/**
 * Full-text search over every stored message (FTS5 index `messages_fts`), compacted rows and archived
 * sessions included. The index is filled lazily (appends stay cheap: an FTS5 insert per transaction costs
 * more than the append itself); `meta.fts_upto` is the highest message id indexed.
 */
import type { SearchOps, SearchTerm } from "../store.ts";
import { toSearchRow } from "../_records.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";

export function searchOps(db: SqliteDb): SearchOps {
  return {
    syncSearchIndex: () => settle(() => syncSearchIndex(db)),
    searchMessages: ({ terms, job, limit, order }) =>
      settle(() => {
        const tail = syncOrIndexTail(db);
        const columns =
          "m.session_id, s.job, s.archived_at, m.seq, m.role, m.kind, m.active, m.created_at, m.content";
        const source = tail
          ? `(SELECT rowid, rank FROM messages_fts WHERE messages_fts MATCH ?1 UNION ALL
              SELECT rowid, rank FROM temp.messages_fts_tail WHERE messages_fts_tail MATCH ?1) f`
          : "messages_fts f";
        const sql = `SELECT ${columns} FROM ${source} JOIN messages m ON m.id = f.rowid
          JOIN sessions s ON s.id = m.session_id WHERE ${tail ? "1" : "messages_fts MATCH ?1"} ${
          job === undefined ? "" : "AND s.job = ?2"
        }
          ORDER BY ${order === "relevance" ? "f.rank" : "f.rowid DESC"} LIMIT ?${job === undefined ? 2 : 3}`;
        const params = job === undefined
          ? [matchExpression(terms), limit]
          : [matchExpression(terms), job, limit];
        return (db.stmt(sql).all(...params) as Row[]).map(toSearchRow);
      }),
  };
}

/**
 * Brings the index up to date; on a read-only store (which cannot), indexes the messages it lacks in a
 * temporary table instead and returns true, so a search there still sees every message.
 */
function syncOrIndexTail(db: SqliteDb): boolean {
  try {
    syncSearchIndex(db);
    return false;
  } catch (error) {
    if (!/readonly database/.test(error instanceof Error ? error.message : String(error))) throw error;
  }
  const upto = Number((db.stmt("SELECT value FROM meta WHERE key = 'fts_upto'").get() as Row).value);
  db.db.exec("PRAGMA temp_store = MEMORY");
  db.db.exec("DROP TABLE IF EXISTS temp.messages_fts_tail");
  db.db.exec("CREATE VIRTUAL TABLE temp.messages_fts_tail USING fts5(content)");
  db.db.prepare(
    "INSERT INTO temp.messages_fts_tail (rowid, content) SELECT id, content FROM messages WHERE id > ?",
  )
    .run(upto);
  return true;
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
