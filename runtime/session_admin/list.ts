/** Listing stored sessions, newest first, with the filters of `hermes sessions list`. */
import type { SQLInputValue } from "node:sqlite";
import type { Store } from "../store/store.ts";
import { SESSION_SUMMARY_JSON, type SessionSummary } from "./records.ts";

export interface ListSessionsOptions {
  job?: string;
  status?: string;
  /** Only sessions created at or after this time (epoch ms). */
  since?: number;
  /** true: only archived sessions; otherwise only unarchived ones. */
  archived?: boolean;
  limit?: number;
}

export function listSessions(store: Store, options: ListSessionsOptions = {}): SessionSummary[] {
  return listSessionsJson(store, options).map((json) => JSON.parse(json));
}

/** The same list, each session as the JSON text of its SessionSummary (what `list --json` prints). */
export function listSessionsJson(store: Store, options: ListSessionsOptions = {}): string[] {
  const where = [options.archived ? "archived_at IS NOT NULL" : "archived_at IS NULL"];
  const params: SQLInputValue[] = [];
  if (options.job !== undefined) (where.push("job = ?"), params.push(options.job));
  if (options.status !== undefined) (where.push("status = ?"), params.push(options.status));
  if (options.since !== undefined) (where.push("created_at >= ?"), params.push(options.since));
  params.push(options.limit ?? -1);
  return store.stmt(
    `SELECT ${SESSION_SUMMARY_JSON} AS json FROM sessions WHERE ${where.join(" AND ")}
     ORDER BY created_at DESC, rowid DESC LIMIT ?`,
  ).all(...params).map((row) => row.json as string);
}

export function getSessionSummary(store: Store, id: string): SessionSummary | undefined {
  const row = store.stmt(`SELECT ${SESSION_SUMMARY_JSON} AS json FROM sessions WHERE id = ?`).get(id);
  return row ? JSON.parse(row.json as string) : undefined;
}
