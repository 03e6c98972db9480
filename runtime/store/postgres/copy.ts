/**
 * What the store holds, and its rows out and in verbatim (`hermes store info|migrate`): whole sessions (a
 * copy keeps ids, seqs, positions, active flags and times, and sets the session's `last_seq` to its highest
 * copied seq so that the next append follows it), schedule runs and plugin state.
 */
import type { CopyOps, PluginStateRow, QueuedRun, RunRow, SessionExport, StoreCounts } from "../store.ts";
import { toQueuedRun } from "../_run_queue.ts";
import { json, type PgDb, pgText, type Q } from "./_db.ts";
import { messageColumns, toMessage, toRunRow, toSession } from "./_rows.ts";
import { toStep } from "../_records.ts";
import { compactionOps } from "./compactions.ts";

export function copyOps(db: PgDb): CopyOps {
  const { sql } = db;
  const { compactionLog } = compactionOps(db);
  return {
    async storeInfo() {
      const [row] = await sql`
        SELECT (SELECT coalesce(max(version), 0) FROM schema_version) AS version,
          (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM messages) AS messages,
          (SELECT count(*) FROM session_kv) AS session_state,
          (SELECT count(*) FROM compaction_log) AS compaction_log,
          (SELECT count(*) FROM schedule_runs) AS schedule_runs,
          (SELECT count(*) FROM plugin_state) AS plugin_state`;
      const r = row!;
      const counts: StoreCounts = {
        sessions: Number(r.sessions),
        messages: Number(r.messages),
        session_state: Number(r.session_state),
        compaction_log: Number(r.compaction_log),
        schedule_runs: Number(r.schedule_runs),
        plugin_state: Number(r.plugin_state),
      };
      return { backend: "postgres", schema_version: Number(r.version), counts };
    },
    async sessionIds() {
      const rows = await sql`SELECT id FROM sessions ORDER BY created_at, n`;
      return rows.map((r) => String(r.id));
    },
    async exportSession(id) {
      const [row] = await sql`SELECT * FROM sessions WHERE id = ${id}`;
      if (!row) return undefined;
      const messages = await sql`
        SELECT ${messageColumns(sql)} FROM messages WHERE session_id = ${id} ORDER BY seq`;
      const state = await sql`SELECT key, value FROM session_kv WHERE session_id = ${id} ORDER BY key`;
      return {
        session: toSession(row),
        messages: messages.map(toMessage),
        state: state.map((r) => ({ key: String(r.key), value: JSON.parse(String(r.value)) })),
        compactions: await compactionLog(id),
        steps: (await sql`SELECT * FROM session_steps WHERE session_id = ${id} ORDER BY step`).map(toStep),
      };
    },
    importSession: (data) => db.tx((q) => importSession(q, data)),
    async scheduleRunJobs() {
      const rows = await sql`SELECT DISTINCT job FROM schedule_runs ORDER BY job`;
      return rows.map((r) => String(r.job));
    },
    async exportScheduleRuns(job) {
      return (await sql`SELECT * FROM schedule_runs WHERE job = ${job} ORDER BY slot`).map(toRunRow);
    },
    importScheduleRuns: (rows) =>
      rows.length === 0 ? Promise.resolve(0) : db.tx((q) => importScheduleRuns(q, rows)),
    async statefulPlugins() {
      const rows = await sql`SELECT DISTINCT plugin FROM plugin_state ORDER BY plugin`;
      return rows.map((r) => String(r.plugin));
    },
    async exportPluginState(plugin) {
      const rows = await sql`SELECT * FROM plugin_state WHERE plugin = ${plugin} ORDER BY key`;
      return rows.map((r) => ({
        plugin: String(r.plugin),
        key: String(r.key),
        value: JSON.parse(String(r.value)),
        updated_at: Number(r.updated_at),
      }));
    },
    importPluginState: (rows) =>
      rows.length === 0 ? Promise.resolve(0) : db.tx((q) => importPluginState(q, rows)),
    queuedRunJobs: async () =>
      (await sql`SELECT DISTINCT job FROM runs ORDER BY job`).map((r) => String(r.job)),
    exportQueuedRuns: async (job) =>
      (await sql`SELECT * FROM runs WHERE job = ${job} ORDER BY submitted_at, id`).map(toQueuedRun),
    importQueuedRuns: (runs) =>
      runs.length === 0 ? Promise.resolve(0) : db.tx((q) => importQueuedRuns(q, runs)),
    runsWithEvents: async () =>
      (await sql`SELECT DISTINCT run_id FROM run_events ORDER BY run_id`).map((r) => String(r.run_id)),
    importRunEvents: (rows) =>
      rows.length === 0 ? Promise.resolve(0) : db.tx(async (q) =>
        (await q`
          INSERT INTO run_events (run_id, seq, event)
          SELECT r.run_id, r.seq, r.event
          FROM jsonb_to_recordset(${
          json(q, rows.map((r) => ({ run_id: r.run_id, seq: r.seq, event: pgText(JSON.stringify(r.event)) })))
        }) AS r(run_id text, seq integer, event text)
          ON CONFLICT (run_id, seq) DO NOTHING`).count
      ),
    runsWithDeliveries: async () =>
      (await sql`SELECT DISTINCT run_id FROM run_deliveries ORDER BY run_id`).map((r) => String(r.run_id)),
    importDeliveries: (rows) =>
      rows.length === 0 ? Promise.resolve(0) : db.tx(async (q) =>
        (await q`
          INSERT INTO run_deliveries (id, run_id, target, event, status, attempts, response_status, error,
            created_at, updated_at)
          SELECT r.id, r.run_id, r.target, r.event, r.status, r.attempts, r.response_status, r.error,
            r.created_at, r.updated_at
          FROM jsonb_to_recordset(${json(q, rows)}) AS r(id text, run_id text, target text, event text,
            status text, attempts integer, response_status integer, error text, created_at bigint, updated_at bigint)
          ON CONFLICT (id) DO NOTHING`).count
      ),
    exportApiTokens: async () =>
      (await sql`SELECT * FROM api_tokens ORDER BY created_at, id`).map((r) => ({
        id: String(r.id),
        name: r.name === null ? null : String(r.name),
        hash: String(r.hash),
        scopes: JSON.parse(String(r.scopes)),
        created_at: Number(r.created_at),
        expires_at: r.expires_at === null ? null : Number(r.expires_at),
        revoked_at: r.revoked_at === null ? null : Number(r.revoked_at),
      })),
    importApiTokens: (rows) =>
      rows.length === 0 ? Promise.resolve(0) : db.tx(async (q) =>
        (await q`
          INSERT INTO api_tokens (id, name, hash, scopes, created_at, expires_at, revoked_at)
          SELECT r.id, r.name, r.hash, r.scopes, r.created_at, r.expires_at, r.revoked_at
          FROM jsonb_to_recordset(${
          json(q, rows.map((t) => ({ ...t, scopes: JSON.stringify(t.scopes) })))
        }) AS r(id text, name text, hash text, scopes text, created_at bigint, expires_at bigint, revoked_at bigint)
          ON CONFLICT (id) DO NOTHING`).count
      ),
  };
}

async function importQueuedRuns(q: Q, runs: readonly QueuedRun[]): Promise<number> {
  const rows = runs.map((r) => ({
    id: r.id,
    job: r.job,
    job_path: pgText(r.job_path),
    job_snapshot: pgText(r.job_snapshot),
    inputs: pgText(JSON.stringify(r.inputs)),
    key: r.key,
    priority: r.priority,
    not_before: r.not_before,
    status: r.status,
    attempts: r.attempts,
    on_crash: r.on_crash,
    group_key: r.group,
    group_limit: r.group_limit,
    model: r.model,
    labels: pgText(JSON.stringify(r.labels)),
    holder_host: r.holder?.host ?? null,
    holder_pid: r.holder?.pid ?? null,
    holder_started: r.holder?.started ?? null,
    holder_nonce: r.holder?.nonce ?? null,
    lease_expires_at: r.lease_expires_at,
    cancel_requested: r.cancel_requested,
    session_id: r.session_id,
    result: r.result === null || r.result === undefined ? null : pgText(JSON.stringify(r.result)),
    exit_code: r.exit_code,
    note: pgText(r.note),
    submitted_at: r.submitted_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
    triggered_by: r.trigger,
    pinned_to: r.pinned_to,
  }));
  const inserted = await q`
    INSERT INTO runs (id, job, job_path, job_snapshot, inputs, key, priority, not_before, status, attempts,
      on_crash, group_key, group_limit, model, labels, holder_host, holder_pid, holder_started, holder_nonce,
      lease_expires_at, cancel_requested, session_id, result, exit_code, note, submitted_at, started_at,
      finished_at, triggered_by, pinned_to)
    SELECT r.id, r.job, r.job_path, r.job_snapshot, r.inputs, r.key, r.priority, r.not_before, r.status,
      r.attempts, r.on_crash, r.group_key, r.group_limit, r.model, r.labels, r.holder_host, r.holder_pid,
      r.holder_started, r.holder_nonce, r.lease_expires_at, r.cancel_requested, r.session_id, r.result,
      r.exit_code, r.note, r.submitted_at, r.started_at, r.finished_at, r.triggered_by, r.pinned_to
    FROM jsonb_to_recordset(${json(q, rows)}) AS r(id text, job text, job_path text, job_snapshot text,
      inputs text, key text, priority integer, not_before bigint, status text, attempts integer, on_crash text,
      group_key text, group_limit integer, model text, labels text, holder_host text, holder_pid integer,
      holder_started text, holder_nonce text, lease_expires_at bigint, cancel_requested boolean,
      session_id text, result text, exit_code integer, note text, submitted_at bigint, started_at bigint,
      finished_at bigint, triggered_by text, pinned_to text)
    ON CONFLICT DO NOTHING`;
  return inserted.count;
}

async function importScheduleRuns(q: Q, rows: readonly RunRow[]): Promise<number> {
  const inserted = await q`
    INSERT INTO schedule_runs (job, slot, status, holder_host, holder_pid, holder_started, holder_nonce,
      claimed_at, lease_expires_at, finished_at, session_id, note)
    SELECT r.job, r.slot, r.status, r.holder_host, r.holder_pid, r.holder_started, r.holder_nonce,
      r.claimed_at, r.lease_expires_at, r.finished_at, r.session_id, r.note
    FROM jsonb_to_recordset(${json(q, rows.map((r) => ({ ...r, note: pgText(r.note) })))}) AS r(job text,
      slot bigint, status text, holder_host text, holder_pid integer, holder_started text, holder_nonce text,
      claimed_at bigint, lease_expires_at bigint, finished_at bigint, session_id text, note text)
    ON CONFLICT (job, slot) DO NOTHING`;
  return inserted.count;
}

async function importPluginState(q: Q, rows: readonly PluginStateRow[]): Promise<number> {
  const values = rows.map((r) => ({ ...r, value: JSON.stringify(r.value) }));
  const inserted = await q`
    INSERT INTO plugin_state (plugin, key, value, updated_at)
    SELECT r.plugin, r.key, r.value, r.updated_at
    FROM jsonb_to_recordset(${json(q, values)}) AS r(plugin text, key text, value text, updated_at bigint)
    ON CONFLICT (plugin, key) DO NOTHING`;
  return inserted.count;
}

async function importSession(q: Q, data: SessionExport): Promise<boolean> {
  const s = data.session;
  const lastSeq = data.messages.reduce((max, m) => Math.max(max, m.seq), 0);
  const inserted = await q`
    INSERT INTO sessions (id, job, job_path, status, terminal_reason, parent_id, created_at, updated_at,
      ended_at, archived_at, config_json, model, prompt_tokens, completion_tokens, turns, owner_host,
      owner_pid, owner_started, last_seq, cached_tokens, cache_write_tokens, reasoning_tokens, cost_usd,
      unpriced_calls, labels)
    VALUES (${s.id}, ${pgText(s.job)}, ${pgText(s.job_path)}, ${s.status}, ${s.terminal_reason},
      ${s.parent_id}, ${s.created_at}, ${s.updated_at}, ${s.ended_at}, ${s.archived_at},
      ${pgText(s.config_json)}, ${pgText(s.model)}, ${s.prompt_tokens}, ${s.completion_tokens}, ${s.turns},
      ${s.owner_host}, ${s.owner_pid}, ${s.owner_started}, ${lastSeq}, ${s.cached_tokens ?? 0},
      ${s.cache_write_tokens ?? 0}, ${s.reasoning_tokens ?? 0}, ${s.cost_usd ?? 0}::double precision,
      ${s.unpriced_calls ?? 0}, ${JSON.stringify(s.labels ?? {})})
    ON CONFLICT (id) DO NOTHING RETURNING id`;
  if (inserted.length === 0) return false;
  if (data.messages.length > 0) {
    const rows = data.messages.map((m) => ({
      seq: m.seq,
      pos: m.pos,
      role: m.role,
      content: pgText(m.content),
      tool_calls: m.tool_calls?.length ? pgText(JSON.stringify(m.tool_calls)) : null,
      tool_call_id: pgText(m.tool_call_id),
      name: pgText(m.name),
      kind: m.kind,
      active: m.active,
      prompt_tokens: m.prompt_tokens,
      completion_tokens: m.completion_tokens,
      created_at: m.created_at,
      reasoning: m.reasoning?.length ? pgText(JSON.stringify(m.reasoning)) : null,
    }));
    await q`
      INSERT INTO messages (session_id, seq, pos, role, content, tool_calls, tool_call_id, name, kind, active,
        prompt_tokens, completion_tokens, created_at, reasoning)
      SELECT ${s.id}::text, r.seq, r.pos, r.role, r.content, r.tool_calls, r.tool_call_id, r.name, r.kind,
        r.active, r.prompt_tokens, r.completion_tokens, r.created_at, r.reasoning
      FROM jsonb_to_recordset(${json(q, rows)}) AS r(seq bigint, pos double precision, role text,
        content text, tool_calls text, tool_call_id text, name text, kind text, active boolean,
        prompt_tokens integer, completion_tokens integer, created_at bigint, reasoning text)`;
  }
  for (const r of data.steps) {
    await q`
      INSERT INTO session_steps (session_id, step, input, attempt, message_seq, status, started_at, updated_at)
      VALUES (${s.id}, ${r.step}, ${pgText(r.input)}, ${r.attempt}, ${r.message_seq}, ${r.status},
        ${r.started_at}, ${r.updated_at})`;
  }
  for (const { key, value } of data.state) {
    await q`INSERT INTO session_kv (session_id, key, value, updated_at)
      VALUES (${s.id}, ${key}, ${pgText(JSON.stringify(value))}, ${s.updated_at})`;
  }
  for (const c of data.compactions) {
    await q`
      INSERT INTO compaction_log (session_id, kind, reason, outcome, before_tokens, after_tokens,
        messages_removed, created_at, detail, threshold_tokens, window_tokens, occupancy, duration_ms,
        absorbed_messages, absorbed_tokens, summary_tokens, total_passes, total_committed, total_hard,
        total_saved_tokens)
      VALUES (${s.id}, ${c.kind}, ${c.reason}, ${c.outcome}, ${c.before_tokens}, ${c.after_tokens},
        ${c.messages_removed}, ${c.created_at}, ${JSON.stringify(c.detail)}, ${c.threshold_tokens},
        ${c.window_tokens}, ${c.occupancy}, ${c.duration_ms}, ${c.absorbed_messages}, ${c.absorbed_tokens},
        ${c.summary_tokens}, ${c.total_passes}, ${c.total_committed}, ${c.total_hard}, ${c.total_saved_tokens})`;
  }
  return true;
}
