/**
 * What the store holds, and its rows out and in verbatim (`hermes store info|migrate`): whole sessions (a
 * copy keeps ids, seqs, positions, active flags and times, so the receiving store shows the same
 * transcripts), schedule runs and plugin state.
 */
import type {
  CopyOps,
  PluginStateRow,
  QueuedRun,
  RunDelivery,
  RunRow,
  SessionExport,
  StoreCounts,
  StoredApiToken,
} from "../store.ts";
import { toQueuedRun } from "../_run_queue.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";
import { toMessage, toRunRow, toSession } from "./_rows.ts";
import { compactionOps } from "./compactions.ts";
import { toStep } from "../_records.ts";

const TABLES: Record<keyof StoreCounts, string> = {
  sessions: "sessions",
  messages: "messages",
  session_state: "session_kv",
  compaction_log: "compaction_log",
  schedule_runs: "schedule_runs",
  plugin_state: "plugin_state",
};

export function copyOps(db: SqliteDb): CopyOps {
  const { compactionLog } = compactionOps(db);
  return {
    storeInfo: () =>
      settle(() => {
        const version = db.stmt("PRAGMA user_version").get() as Row;
        const counts = Object.fromEntries(
          Object.entries(TABLES).map((
            [name, table],
          ) => [name, Number((db.stmt(`SELECT count(*) AS n FROM ${table}`).get() as Row).n)]),
        ) as unknown as StoreCounts;
        return { backend: "sqlite" as const, schema_version: Number(version.user_version), counts };
      }),
    sessionIds: () =>
      settle(() =>
        (db.stmt("SELECT id FROM sessions ORDER BY created_at, rowid").all() as Row[]).map((r) =>
          String(r.id)
        )
      ),
    async exportSession(id) {
      const row = db.stmt("SELECT * FROM sessions WHERE id = ?").get(id) as Row | undefined;
      if (!row) return undefined;
      const messages = (db.stmt("SELECT * FROM messages WHERE session_id = ? ORDER BY seq").all(id) as Row[])
        .map(toMessage);
      const state = (db.stmt("SELECT key, value FROM session_kv WHERE session_id = ? ORDER BY key").all(
        id,
      ) as Row[]).map((r) => ({ key: String(r.key), value: JSON.parse(String(r.value)) }));
      const steps =
        (db.stmt("SELECT * FROM session_steps WHERE session_id = ? ORDER BY step").all(id) as Row[])
          .map(toStep);
      return { session: toSession(row), messages, state, compactions: await compactionLog(id), steps };
    },
    importSession: (data) => settle(() => db.immediate(() => importSession(db, data))),
    scheduleRunJobs: () =>
      settle(() =>
        (db.stmt("SELECT DISTINCT job FROM schedule_runs ORDER BY job").all() as Row[]).map((r) =>
          String(r.job)
        )
      ),
    exportScheduleRuns: (job) =>
      settle(() =>
        (db.stmt("SELECT * FROM schedule_runs WHERE job = ? ORDER BY slot").all(job) as Row[]).map(toRunRow)
      ),
    importScheduleRuns: (rows) => settle(() => db.immediate(() => importScheduleRuns(db, rows))),
    statefulPlugins: () =>
      settle(() =>
        (db.stmt("SELECT DISTINCT plugin FROM plugin_state ORDER BY plugin").all() as Row[]).map((r) =>
          String(r.plugin)
        )
      ),
    exportPluginState: (plugin) =>
      settle(() =>
        (db.stmt("SELECT * FROM plugin_state WHERE plugin = ? ORDER BY key").all(plugin) as Row[]).map((
          r,
        ) => ({
          plugin: String(r.plugin),
          key: String(r.key),
          value: JSON.parse(String(r.value)),
          updated_at: Number(r.updated_at),
        }))
      ),
    importPluginState: (rows) => settle(() => db.immediate(() => importPluginState(db, rows))),
    queuedRunJobs: () => settle(() => distinct(db, "job", "runs")),
    exportQueuedRuns: (job) =>
      settle(() =>
        (db.stmt("SELECT * FROM runs WHERE job = ? ORDER BY submitted_at, id").all(job) as Row[]).map(
          toQueuedRun,
        )
      ),
    importQueuedRuns: (runs) => settle(() => db.immediate(() => importQueuedRuns(db, runs))),
    runsWithEvents: () => settle(() => distinct(db, "run_id", "run_events")),
    importRunEvents: (rows) =>
      settle(() =>
        db.immediate(() => {
          const insert = db.stmt(
            "INSERT INTO run_events (run_id, seq, event) VALUES (?, ?, ?) ON CONFLICT (run_id, seq) DO NOTHING",
          );
          return rows.reduce(
            (n, r) => n + Number(insert.run(r.run_id, r.seq, JSON.stringify(r.event)).changes),
            0,
          );
        })
      ),
    runsWithDeliveries: () => settle(() => distinct(db, "run_id", "run_deliveries")),
    importDeliveries: (rows) => settle(() => db.immediate(() => importDeliveries(db, rows))),
    exportApiTokens: () =>
      settle(() =>
        (db.stmt("SELECT * FROM api_tokens ORDER BY created_at, id").all() as Row[]).map((r) => ({
          id: String(r.id),
          name: r.name === null ? null : String(r.name),
          hash: String(r.hash),
          scopes: JSON.parse(String(r.scopes)),
          created_at: Number(r.created_at),
          expires_at: r.expires_at === null ? null : Number(r.expires_at),
          revoked_at: r.revoked_at === null ? null : Number(r.revoked_at),
        }))
      ),
    importApiTokens: (rows) =>
      settle(() =>
        db.immediate(() => {
          const insert = db.stmt(
            `INSERT INTO api_tokens (id, name, hash, scopes, created_at, expires_at, revoked_at)
             VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
          );
          return rows.reduce(
            (n, t: StoredApiToken) =>
              n +
              Number(
                insert.run(
                  t.id,
                  t.name,
                  t.hash,
                  JSON.stringify(t.scopes),
                  t.created_at,
                  t.expires_at,
                  t.revoked_at,
                )
                  .changes,
              ),
            0,
          );
        })
      ),
  };
}

function distinct(db: SqliteDb, column: string, table: string): string[] {
  return (db.stmt(`SELECT DISTINCT ${column} AS v FROM ${table} ORDER BY ${column}`).all() as Row[]).map((
    r,
  ) => String(r.v));
}

function importQueuedRuns(db: SqliteDb, runs: readonly QueuedRun[]): number {
  const insert = db.stmt(
    `INSERT INTO runs (id, job, job_path, job_snapshot, inputs, key, priority, not_before, status, attempts,
       on_crash, group_key, group_limit, model, labels, holder_host, holder_pid, holder_started, holder_nonce,
       lease_expires_at, cancel_requested, session_id, result, exit_code, note, submitted_at, started_at,
       finished_at, triggered_by, pinned_to)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT DO NOTHING`,
  );
  let stored = 0;
  for (const r of runs) {
    stored += Number(
      insert.run(
        r.id,
        r.job,
        r.job_path,
        r.job_snapshot,
        JSON.stringify(r.inputs),
        r.key,
        r.priority,
        r.not_before,
        r.status,
        r.attempts,
        r.on_crash,
        r.group,
        r.group_limit,
        r.model,
        JSON.stringify(r.labels),
        r.holder?.host ?? null,
        r.holder?.pid ?? null,
        r.holder?.started ?? null,
        r.holder?.nonce ?? null,
        r.lease_expires_at,
        r.cancel_requested ? 1 : 0,
        r.session_id,
        r.result === null || r.result === undefined ? null : JSON.stringify(r.result),
        r.exit_code,
        r.note,
        r.submitted_at,
        r.started_at,
        r.finished_at,
        r.trigger,
        r.pinned_to,
      ).changes,
    );
  }
  return stored;
}

function importDeliveries(db: SqliteDb, rows: readonly RunDelivery[]): number {
  const insert = db.stmt(
    `INSERT INTO run_deliveries (id, run_id, target, event, status, attempts, response_status, error,
       created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  );
  let stored = 0;
  for (const d of rows) {
    stored += Number(
      insert.run(
        d.id,
        d.run_id,
        d.target,
        d.event,
        d.status,
        d.attempts,
        d.response_status,
        d.error,
        d.created_at,
        d.updated_at,
      ).changes,
    );
  }
  return stored;
}

function importScheduleRuns(db: SqliteDb, rows: readonly RunRow[]): number {
  const insert = db.stmt(
    `INSERT INTO schedule_runs (job, slot, status, holder_host, holder_pid, holder_started, holder_nonce,
       claimed_at, lease_expires_at, finished_at, session_id, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (job, slot) DO NOTHING`,
  );
  let stored = 0;
  for (const r of rows) {
    stored += Number(
      insert.run(
        r.job,
        r.slot,
        r.status,
        r.holder_host,
        r.holder_pid,
        r.holder_started,
        r.holder_nonce,
        r.claimed_at,
        r.lease_expires_at,
        r.finished_at,
        r.session_id,
        r.note,
      ).changes,
    );
  }
  return stored;
}

function importPluginState(db: SqliteDb, rows: readonly PluginStateRow[]): number {
  const insert = db.stmt(
    `INSERT INTO plugin_state (plugin, key, value, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (plugin, key) DO NOTHING`,
  );
  let stored = 0;
  for (const r of rows) {
    stored += Number(insert.run(r.plugin, r.key, JSON.stringify(r.value), r.updated_at).changes);
  }
  return stored;
}

function importSession(db: SqliteDb, data: SessionExport): boolean {
  const s = data.session;
  const inserted = db.stmt(
    `INSERT INTO sessions (id, job, job_path, status, terminal_reason, parent_id, created_at, updated_at,
       ended_at, archived_at, config_json, model, prompt_tokens, completion_tokens, turns, owner_host,
       owner_pid, owner_started, cached_tokens, cache_write_tokens, reasoning_tokens, cost_usd,
       unpriced_calls, labels) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO NOTHING`,
  ).run(
    s.id,
    s.job,
    s.job_path,
    s.status,
    s.terminal_reason,
    s.parent_id,
    s.created_at,
    s.updated_at,
    s.ended_at,
    s.archived_at,
    s.config_json,
    s.model,
    s.prompt_tokens,
    s.completion_tokens,
    s.turns,
    s.owner_host,
    s.owner_pid,
    s.owner_started,
    s.cached_tokens ?? 0,
    s.cache_write_tokens ?? 0,
    s.reasoning_tokens ?? 0,
    s.cost_usd ?? 0,
    s.unpriced_calls ?? 0,
    JSON.stringify(s.labels ?? {}),
  );
  if (Number(inserted.changes) === 0) return false;
  const message = db.stmt(
    `INSERT INTO messages (session_id, seq, pos, role, content, tool_calls, tool_call_id, name, kind, active,
       prompt_tokens, completion_tokens, created_at, reasoning) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const m of data.messages) {
    message.run(
      s.id,
      m.seq,
      m.pos,
      m.role,
      m.content,
      m.tool_calls?.length ? JSON.stringify(m.tool_calls) : null,
      m.tool_call_id ?? null,
      m.name ?? null,
      m.kind,
      m.active ? 1 : 0,
      m.prompt_tokens,
      m.completion_tokens,
      m.created_at,
      m.reasoning?.length ? JSON.stringify(m.reasoning) : null,
    );
  }
  const step = db.stmt(
    `INSERT INTO session_steps (session_id, step, input, attempt, message_seq, status, started_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const r of data.steps) {
    step.run(s.id, r.step, r.input, r.attempt, r.message_seq, r.status, r.started_at, r.updated_at);
  }
  const state = db.stmt("INSERT INTO session_kv (session_id, key, value, updated_at) VALUES (?, ?, ?, ?)");
  for (const { key, value } of data.state) state.run(s.id, key, JSON.stringify(value), s.updated_at);
  const log = db.stmt(
    `INSERT INTO compaction_log (session_id, kind, reason, outcome, before_tokens, after_tokens,
       messages_removed, created_at, detail, threshold_tokens, window_tokens, occupancy, duration_ms,
       absorbed_messages, absorbed_tokens, summary_tokens, total_passes, total_committed, total_hard,
       total_saved_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const c of data.compactions) {
    log.run(
      s.id,
      c.kind,
      c.reason,
      c.outcome,
      c.before_tokens,
      c.after_tokens,
      c.messages_removed,
      c.created_at,
      JSON.stringify(c.detail),
      c.threshold_tokens,
      c.window_tokens,
      c.occupancy,
      c.duration_ms,
      c.absorbed_messages,
      c.absorbed_tokens,
      c.summary_tokens,
      c.total_passes,
      c.total_committed,
      c.total_hard,
      c.total_saved_tokens,
    );
  }
  return true;
}
