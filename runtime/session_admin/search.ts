/**
 * Full-text search over every stored message, including rows replaced by compaction and messages of archived
 * sessions (both are marked in the hits): the query language, and snippets (cut from stored text, whose
 * secrets were replaced before it was stored).
 */
import { ValidationError } from "../core/errors.ts";
import type { AdminStore, SearchTerm } from "../store/store.ts";
import type { MessageKind, Role } from "../core/types.ts";
import { isoTime } from "./records.ts";

export type SearchOrder = "newest" | "relevance";
export const SEARCH_ORDERS: readonly SearchOrder[] = ["newest", "relevance"];

export interface SearchOptions {
  job?: string;
  /** At most this many hits (default 20). */
  limit?: number;
  /**
   * `newest` (default): most recently stored first; stops after `limit` hits, so it stays fast however
   * common the words are. `relevance`: best BM25 match first; scores every match (seconds for a word
   * found in a million rows).
   */
  order?: SearchOrder;
}

export interface SearchHit {
  session_id: string;
  job: string;
  session_archived: boolean;
  seq: number;
  role: Role;
  kind: MessageKind;
  /** False for a row replaced by compaction. */
  active: boolean;
  created_at: string;
  /** About 120 characters around the first match; matches are wrapped in « ». */
  snippet: string;
}

/**
 * Words are ANDed; "double quotes" make a phrase; a trailing `*` makes a prefix. Search operators are not
 * interpreted, so any text a user types is a valid query.
 */
export async function searchMessages(
  store: AdminStore,
  query: string,
  options: SearchOptions = {},
): Promise<SearchHit[]> {
  const terms = parseQuery(query);
  if (terms.length === 0) throw new ValidationError(`Cannot search for "${query}": the query has no words`);
  const pattern = termPattern(terms);
  let rows;
  try {
    rows = await store.searchMessages({
      terms,
      limit: options.limit ?? 20,
      order: options.order ?? "newest",
      ...(options.job === undefined ? {} : { job: options.job }),
    });
  } catch (error) {
    throw new ValidationError(`Cannot search for "${query}": ${(error as Error).message}`);
  }
  return rows.map(({ content, created_at, ...row }) => ({
    ...row,
    created_at: isoTime(created_at),
    snippet: snippet(content, pattern),
  }));
}

function parseQuery(query: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  for (const [, phrase, word] of query.matchAll(/"([^"]*)"?|(\S+)/g)) {
    const text = phrase ?? word ?? "";
    const prefix = phrase === undefined && text.endsWith("*");
    const words = text.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
    if (words.length > 0) terms.push({ words, prefix });
  }
  return terms;
}

/** Matches any term as FTS5's unicode61 tokenizer would: whole words, case-insensitive. */
function termPattern(terms: SearchTerm[]): RegExp {
  const alternatives = terms.map((t) => {
    const body = t.words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^\\p{L}\\p{N}]+");
    return `(?<![\\p{L}\\p{N}])${body}${t.prefix ? "" : "(?![\\p{L}\\p{N}])"}`;
  });
  return new RegExp(alternatives.join("|"), "giu");
}

const CONTEXT = 50;

function snippet(text: string, pattern: RegExp): string {
  const flat = text.replace(/\s+/g, " ").trim();
  pattern.lastIndex = 0;
  const first = pattern.exec(flat);
  if (!first) return flat.length > 2 * CONTEXT ? `${flat.slice(0, 2 * CONTEXT)}…` : flat;
  const start = Math.max(0, first.index - CONTEXT);
  const end = Math.min(flat.length, first.index + first[0].length + CONTEXT);
  const window = flat.slice(start, end).replace(pattern, (m) => `«${m}»`);
  return `${start > 0 ? "…" : ""}${window}${end < flat.length ? "…" : ""}`;
}
