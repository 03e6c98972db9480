/**
 * Full-text search over every stored message (`messages.tsv`, GIN index `messages_search`), compacted rows
 * and archived sessions included. The vector is filled lazily, so appends stay one cheap insert: each search
 * first indexes the rows that have none yet (partial index `messages_unindexed`). The `simple` configuration
 * lower-cases and does not stem, like SQLite's FTS5 `unicode61` tokenizer (which also folds diacritics; this
 * does not). A term is one `websearch_to_tsquery` phrase; a prefix term's last word matches word starts.
 */
import type { SearchOps, SearchTerm } from "../store.ts";
import { toSearchRow } from "../_records.ts";
import type { PgDb, Q } from "./_db.ts";

export function searchOps(db: PgDb): SearchOps {
  const { sql } = db;
  return {
    syncSearchIndex: () => syncSearchIndex(sql),
    async searchMessages({ terms, job, limit, order }) {
      await syncSearchIndex(sql);
      if (terms.length === 0) return [];
      const rows = await sql`
        WITH query AS (SELECT ${matchQuery(sql, terms)} AS q)
        SELECT m.session_id, s.job, s.archived_at, m.seq, m.role, m.kind, m.active, m.created_at, m.content
        FROM query, messages m JOIN sessions s ON s.id = m.session_id
        WHERE m.tsv @@ query.q ${job === undefined ? sql`` : sql`AND s.job = ${job}`}
        ORDER BY ${order === "relevance" ? sql`ts_rank(m.tsv, query.q) DESC, m.id DESC` : sql`m.id DESC`}
        LIMIT ${limit}`;
      return rows.map(toSearchRow);
    },
  };
}

/** Indexes every message that has no search vector yet; returns how many. */
async function syncSearchIndex(q: Q): Promise<number> {
  return (await q`UPDATE messages SET tsv = to_tsvector('simple', content) WHERE tsv IS NULL`).count;
}

/**
 * The terms ANDed, each a quoted phrase for `websearch_to_tsquery` (so operators a user typed are words);
 * for a prefix term `:*` is added to the phrase's last lexeme.
 */
function matchQuery(q: Q, terms: readonly SearchTerm[]) {
  const parts = terms.map((term, i) => {
    const phrase = `"${term.words.map((w) => w.replaceAll('"', " ")).join(" ")}"`;
    const query = q`websearch_to_tsquery('simple', ${phrase}::text)`;
    const part = term.prefix
      ? q`(CASE WHEN numnode(${query}) = 0 THEN ${query} ELSE (${query}::text || ':*')::tsquery END)`
      : query;
    return i === 0 ? part : q`&& ${part}`;
  });
  return parts;
}
