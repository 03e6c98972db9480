/**
 * Stored rows → the store's records, for every implementation: a row is the column → value object a driver
 * returns (SQLite's numbers and 0/1, PostgreSQL's strings and booleans alike).
 */
import type { MessageKind, Role, SessionRow, SessionStatus, StoredMessage } from "../core/types.ts";
import type {
  AppendMessage,
  CommitRequest,
  CompactionKind,
  CompactionLogRow,
  CostDimension,
  CostGroup,
  ModelCallRow,
  PassMeasures,
  PassOutcome,
  PassRecord,
  RunRow,
  SearchRow,
  StepRecord,
} from "./store.ts";
import { nextTotals, occupancyOf, type PassTotals } from "./rules.ts";
import { roundUsd } from "../core/usd.ts";
import { LABEL_KEY, type Labels } from "../core/labels.ts";

type Record = { readonly [column: string]: unknown };

export const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);
export const int = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

export function toSession(row: Record): SessionRow {
  return {
    id: String(row.id),
    job: String(row.job),
    job_path: text(row.job_path),
    status: String(row.status) as SessionStatus,
    terminal_reason: text(row.terminal_reason),
    parent_id: text(row.parent_id),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    ended_at: int(row.ended_at),
    archived_at: int(row.archived_at),
    config_json: String(row.config_json),
    model: text(row.model),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    cached_tokens: Number(row.cached_tokens ?? 0),
    cache_write_tokens: Number(row.cache_write_tokens ?? 0),
    reasoning_tokens: Number(row.reasoning_tokens ?? 0),
    cost_usd: Number(row.cost_usd ?? 0),
    unpriced_calls: Number(row.unpriced_calls ?? 0),
    turns: Number(row.turns),
    owner_host: text(row.owner_host),
    owner_pid: int(row.owner_pid),
    owner_started: text(row.owner_started),
    labels: labelsOf(row.labels),
  };
}

/** Labels as stored: JSON text (SQLite, PostgreSQL text) or an object (PostgreSQL jsonb). */
export function labelsOf(value: unknown): Labels {
  if (value === null || value === undefined) return {};
  return typeof value === "string" ? JSON.parse(value) : value as Labels;
}

/** The key of a `label:KEY` grouping; rejects one that is not a label key. */
export function labelKey(dimension: string): string {
  const key = dimension.slice("label:".length);
  if (!LABEL_KEY.test(key)) {
    throw new RangeError(`Cannot group by "${dimension}": a label key is letters, digits, "_", "." and "-"`);
  }
  return key;
}

/** One grouped row of `model_calls` (its keys as k0, k1, …) → a CostGroup; a day key is a day number. */
export function toCostGroup(row: Record, by: readonly CostDimension[]): CostGroup {
  return {
    keys: by.map((dimension, i) => {
      const value = row[`k${i}`];
      if (value === null || value === undefined) return null;
      return dimension === "day"
        ? new Date(Number(value) * 86_400_000).toISOString().slice(0, 10)
        : String(value);
    }),
    calls: Number(row.calls),
    sessions: Number(row.sessions),
    input_tokens: Number(row.input_tokens ?? 0),
    cached_tokens: Number(row.cached_tokens ?? 0),
    cache_write_tokens: Number(row.cache_write_tokens ?? 0),
    output_tokens: Number(row.output_tokens ?? 0),
    reasoning_tokens: Number(row.reasoning_tokens ?? 0),
    cost_usd: roundUsd(Number(row.cost_usd ?? 0)),
    unpriced_calls: Number(row.unpriced_calls ?? 0),
  };
}

/** Groups in key order, a missing value (null) after every value: the same on every backend. */
export function sortCostGroups(groups: CostGroup[]): CostGroup[] {
  const compare = (a: string | null, b: string | null) =>
    a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1;
  return groups.filter((g) => g.calls > 0).sort((x, y) => {
    for (let i = 0; i < x.keys.length; i++) {
      const order = compare(x.keys[i]!, y.keys[i]!);
      if (order !== 0) return order;
    }
    return 0;
  });
}

export function toMessage(row: Record): StoredMessage {
  const message: StoredMessage = {
    id: Number(row.id),
    session_id: String(row.session_id),
    seq: Number(row.seq),
    pos: Number(row.pos),
    role: String(row.role) as Role,
    content: String(row.content),
    kind: String(row.kind) as MessageKind,
    // SQLite stores 0/1, PostgreSQL a boolean.
    active: row.active === true || Number(row.active) === 1,
    prompt_tokens: int(row.prompt_tokens),
    completion_tokens: int(row.completion_tokens),
    created_at: Number(row.created_at),
  };
  if (row.tool_calls !== null) message.tool_calls = JSON.parse(String(row.tool_calls));
  if (row.tool_call_id !== null) message.tool_call_id = String(row.tool_call_id);
  if (row.name !== null) message.name = String(row.name);
  if (row.reasoning !== null && row.reasoning !== undefined) {
    message.reasoning = JSON.parse(String(row.reasoning));
  }
  return message;
}

export function toStep(row: Record): StepRecord {
  return {
    session_id: String(row.session_id),
    step: Number(row.step),
    input: String(row.input),
    attempt: Number(row.attempt),
    message_seq: int(row.message_seq),
    status: String(row.status) as StepRecord["status"],
    started_at: Number(row.started_at),
    updated_at: Number(row.updated_at),
  };
}

export function toRunRow(row: Record): RunRow {
  return {
    job: String(row.job),
    slot: Number(row.slot),
    status: String(row.status),
    holder_host: text(row.holder_host),
    holder_pid: int(row.holder_pid),
    holder_started: text(row.holder_started),
    holder_nonce: text(row.holder_nonce),
    claimed_at: Number(row.claimed_at),
    lease_expires_at: int(row.lease_expires_at),
    finished_at: int(row.finished_at),
    session_id: text(row.session_id),
    note: text(row.note),
  };
}

/** What `appendMessages` returns for `m`, stored as row `id`, `seq` of its session, at `now`. */
export function appendedMessage(
  m: AppendMessage,
  at: { session_id: string; id: number; seq: number; now: number },
): StoredMessage {
  return {
    ...stripUndefined(m),
    id: at.id,
    session_id: at.session_id,
    seq: at.seq,
    // Appended at the end of the prompt.
    pos: at.seq,
    kind: m.kind ?? "message",
    active: m.active ?? true,
    prompt_tokens: m.prompt_tokens ?? null,
    completion_tokens: m.completion_tokens ?? null,
    created_at: at.now,
  };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** A search hit: the message's columns with its session's `job` and `archived_at`. */
export function toSearchRow(row: Record): SearchRow {
  return {
    session_id: String(row.session_id),
    job: String(row.job),
    session_archived: row.archived_at !== null,
    seq: Number(row.seq),
    role: String(row.role) as Role,
    kind: String(row.kind) as MessageKind,
    active: row.active === true || Number(row.active) === 1,
    created_at: Number(row.created_at),
    content: String(row.content),
  };
}

/** One compaction pass to log. */
export interface LogInsert {
  sessionId: string;
  now: number;
  kind: CompactionKind;
  reason: string;
  outcome: PassOutcome;
  before: number;
  after: number;
  removed: number;
  measures: PassMeasures | undefined;
  detail: { readonly [key: string]: unknown };
}

/** A pass that changed nothing (`recordCompactionPass`), as the log row to write. */
export function passLog(record: PassRecord): LogInsert {
  const { sessionId, now, kind, reason, outcome, tokens, measures } = record;
  return {
    sessionId,
    now,
    kind,
    reason,
    outcome,
    before: tokens,
    after: tokens,
    removed: 0,
    measures,
    detail: record.detail ?? {},
  };
}

/** A committed pass (`commitCompaction`) as the log row to write, `after` tokens once it is applied. */
export function commitLog(request: CommitRequest, after: number): LogInsert {
  return {
    sessionId: request.sessionId,
    now: request.now,
    kind: request.kind,
    reason: request.reason,
    outcome: "committed",
    before: request.beforeTokens,
    after,
    removed: request.archive.length - request.insert.length,
    measures: request.measures,
    detail: request.detail,
  };
}

/** The `compaction_log` columns of `row`, its running totals carried on from the session's `previous` pass. */
export function logColumns(
  row: LogInsert,
  previous: PassTotals,
): { [column: string]: string | number | null } {
  const m = row.measures;
  return {
    session_id: row.sessionId,
    kind: row.kind,
    reason: row.reason,
    outcome: row.outcome,
    before_tokens: row.before,
    after_tokens: row.after,
    messages_removed: row.removed,
    created_at: row.now,
    detail: JSON.stringify(row.detail),
    threshold_tokens: m?.thresholdTokens ?? null,
    window_tokens: m?.windowTokens ?? null,
    occupancy: occupancyOf(row.after, m?.thresholdTokens),
    duration_ms: m?.durationMs ?? null,
    absorbed_messages: m?.absorbedMessages ?? null,
    absorbed_tokens: m?.absorbedTokens ?? null,
    summary_tokens: m?.summaryTokens ?? null,
    ...nextTotals(previous, { kind: row.kind, outcome: row.outcome, before: row.before, after: row.after }),
  };
}

/** The running totals a compaction log row carries. */
export function toTotals(row: Record): PassTotals {
  return {
    total_passes: Number(row.total_passes),
    total_committed: Number(row.total_committed),
    total_hard: Number(row.total_hard),
    total_saved_tokens: Number(row.total_saved_tokens),
  };
}

export function toLogRow(row: Record): CompactionLogRow {
  return {
    id: Number(row.id),
    session_id: String(row.session_id),
    kind: String(row.kind) as CompactionKind,
    reason: String(row.reason),
    outcome: String(row.outcome) as PassOutcome,
    before_tokens: Number(row.before_tokens),
    after_tokens: Number(row.after_tokens),
    messages_removed: Number(row.messages_removed),
    created_at: Number(row.created_at),
    detail: row.detail === null ? {} : JSON.parse(String(row.detail)),
    threshold_tokens: int(row.threshold_tokens),
    window_tokens: int(row.window_tokens),
    occupancy: int(row.occupancy),
    duration_ms: int(row.duration_ms),
    absorbed_messages: int(row.absorbed_messages),
    absorbed_tokens: int(row.absorbed_tokens),
    summary_tokens: int(row.summary_tokens),
    ...toTotals(row),
  };
}

export function toModelCall(row: Record): ModelCallRow {
  return {
    session_id: String(row.session_id),
    caller_id: String(row.caller_id),
    job: String(row.job),
    labels: labelsOf(row.labels),
    at: Number(row.at),
    provider: text(row.provider),
    model: text(row.model),
    prompt_tokens: Number(row.prompt_tokens),
    cached_tokens: Number(row.cached_tokens),
    cache_write_tokens: Number(row.cache_write_tokens),
    completion_tokens: Number(row.completion_tokens),
    reasoning_tokens: Number(row.reasoning_tokens),
    cost_usd: row.cost_usd === null || row.cost_usd === undefined ? null : Number(row.cost_usd),
  };
}

/**
 * Identical calls grouped (everything but the id, in a canonical form) with how many of them `rows` holds:
 * what an import compares against what the store has.
 */
export function identicalCalls(rows: readonly ModelCallRow[]): { row: ModelCallRow; count: number }[] {
  const groups = new Map<string, { row: ModelCallRow; count: number }>();
  for (const row of rows) {
    const key = JSON.stringify([
      row.session_id,
      row.caller_id,
      row.job,
      Object.entries(row.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      row.at,
      row.provider,
      row.model,
      row.prompt_tokens,
      row.cached_tokens,
      row.cache_write_tokens,
      row.completion_tokens,
      row.reasoning_tokens,
      row.cost_usd,
    ]);
    const group = groups.get(key);
    if (group) group.count++;
    else groups.set(key, { row, count: 1 });
  }
  return [...groups.values()];
}
