/** Listing sessions newest first with the filters of `hermes sessions list`, as SessionSummary records. */
import type { ListSessionsOptions, SessionSummary } from "../store.ts";
import type { Q, Row } from "./_db.ts";
import { roundUsd } from "../../core/usd.ts";
import { labelsOf } from "../_records.ts";

const iso = (ms: unknown) => ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();

/** A `sessions` row as `hermes sessions list` shows it (the key order is the CLI's). */
function toSummary(row: Row): SessionSummary {
  return {
    id: String(row.id),
    job: String(row.job),
    status: String(row.status),
    terminal_reason: row.terminal_reason === null ? null : String(row.terminal_reason),
    model: row.model === null ? null : String(row.model),
    parent_id: row.parent_id === null ? null : String(row.parent_id),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    ended_at: iso(row.ended_at),
    archived: row.archived_at !== null,
    archived_at: iso(row.archived_at),
    turns: Number(row.turns),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    cached_tokens: Number(row.cached_tokens),
    cache_write_tokens: Number(row.cache_write_tokens),
    reasoning_tokens: Number(row.reasoning_tokens),
    cost_usd: Number(row.unpriced_calls) > 0 ? null : roundUsd(Number(row.cost_usd)),
    labels: labelsOf(row.labels),
  };
}

export async function listSessions(q: Q, options: ListSessionsOptions = {}): Promise<SessionSummary[]> {
  const rows = await q`
    SELECT id, job, status, terminal_reason, model, parent_id, created_at, updated_at, ended_at, archived_at,
      turns, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost_usd,
      unpriced_calls, labels
    FROM sessions
    WHERE ${options.archived ? q`archived_at IS NOT NULL` : q`archived_at IS NULL`}
      ${options.job === undefined ? q`` : q`AND job = ${options.job}`}
      ${options.status === undefined ? q`` : q`AND status = ${options.status}`}
      ${options.since === undefined ? q`` : q`AND created_at >= ${options.since}`}
    ORDER BY created_at DESC, n DESC LIMIT ${options.limit ?? null}`;
  return rows.map(toSummary);
}

export async function getSessionSummary(q: Q, id: string): Promise<SessionSummary | undefined> {
  const [row] = await q`SELECT * FROM sessions WHERE id = ${id}`;
  return row ? toSummary(row) : undefined;
}
