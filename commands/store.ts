/**
 * `hermes store info [--json]`: the store's backend, schema version and row counts.
 * `hermes store migrate --to postgres://… [--json]`: copies everything this store holds into a PostgreSQL
 * store — every session (archived ones, compacted rows, state and compaction log included), the schedule run
 * history and live claims, plugin state, the recorded model calls, the run queue (runs with their events
 * and notification deliveries) and API tokens (as hashes) — then verifies it: each session by its row counts and a
 * checksum of its content, each other row by its values. What the target already holds is not copied again
 * (a re-run copies nothing and verifies everything). Compaction leases are not copied: they name processes
 * of this store and last seconds.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { openStore } from "../runtime/store/open.ts";
import { systemClock } from "../runtime/core/clock.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { isPostgresUrl, redactUrl } from "../runtime/store/postgres/_url.ts";
import type {
  ModelCallRow,
  PluginStateRow,
  QueuedRun,
  RunDelivery,
  RunEventRow,
  RunRow,
  SessionExport,
  Store,
  StoredApiToken,
  StoreInfo,
} from "../runtime/store/store.ts";

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("store", cli.args);
  const [sub, ...rest] = positionals;
  if (rest.length > 0) throw new ValidationError(`hermes store: unexpected argument "${rest[0]}"`);
  if (sub === "info") {
    if (values.to !== undefined) {
      throw new ValidationError("hermes store: --to goes with `hermes store migrate`");
    }
    return await info(cli, values.json ?? false);
  }
  if (sub === "migrate") {
    if (values.to === undefined) {
      throw new ValidationError("hermes store migrate: expected --to postgres://…");
    }
    return await migrate(cli, values.to, values.json ?? false);
  }
  throw new ValidationError(
    `hermes store: expected info or migrate, got ${sub === undefined ? "nothing" : `"${sub}"`}`,
  );
}

async function info(cli: Cli, json: boolean): Promise<number> {
  const store = await cli.openStore();
  try {
    const report = { location: where(cli.dbPath), ...await store.storeInfo() };
    await cli.out(json ? JSON.stringify(report) + "\n" : formatInfo(report));
    return 0;
  } finally {
    await store.close();
  }
}

function formatInfo(report: StoreInfo & { location: string }): string {
  const counts = Object.entries(report.counts).map(([name, n]) => `  ${name.padEnd(15)} ${n}`);
  return [
    `backend         ${report.backend}`,
    `location        ${report.location}`,
    `schema version  ${report.schema_version}`,
    "rows:",
    ...counts,
  ].join("\n") + "\n";
}

interface Mismatch {
  session_id: string;
  problem: string;
}

/** How many rows of one kind there were, and what became of them. */
interface Tally {
  rows: number;
  copied: number;
  already_present: number;
  verified: number;
}

/** How the rows of one kind outside sessions were copied (`schedule_runs`, `plugin_state`). */
interface RowsReport extends Tally {
  /** Each row the target holds otherwise, named by its key (`job` and `slot`, or `plugin` and `key`). */
  mismatches: (Record<string, string | number> & { problem: string })[];
}

/** Rows that belong to no session, copied and verified a group at a time (a job's runs, a plugin's values). */
interface GroupedRows<T> {
  groups(store: Store): Promise<string[]>;
  rows(store: Store, group: string): Promise<T[]>;
  put(store: Store, rows: readonly T[]): Promise<number>;
  /** The row's key, as the report names it. */
  key(row: T): Record<string, string | number>;
}

const SCHEDULE_RUNS: GroupedRows<RunRow> = {
  groups: (store) => store.scheduleRunJobs(),
  rows: (store, job) => store.exportScheduleRuns(job),
  put: (store, rows) => store.importScheduleRuns(rows),
  key: (row) => ({ job: row.job, slot: row.slot }),
};

const PLUGIN_STATE: GroupedRows<PluginStateRow> = {
  groups: (store) => store.statefulPlugins(),
  rows: (store, plugin) => store.exportPluginState(plugin),
  put: (store, rows) => store.importPluginState(rows),
  key: (row) => ({ plugin: row.plugin, key: row.key }),
};

const MODEL_CALLS: GroupedRows<ModelCallRow> = {
  groups: (store) => store.modelCallSessions(),
  rows: (store, session) => store.exportModelCalls(session),
  put: (store, rows) => store.importModelCalls(rows),
  key: (row) => ({ session_id: row.session_id, caller_id: row.caller_id, at: row.at }),
};

const QUEUED_RUNS: GroupedRows<QueuedRun> = {
  groups: (store) => store.queuedRunJobs(),
  rows: (store, job) => store.exportQueuedRuns(job),
  put: (store, rows) => store.importQueuedRuns(rows),
  key: (row) => ({ run: row.id }),
};

const RUN_EVENTS: GroupedRows<RunEventRow> = {
  groups: (store) => store.runsWithEvents(),
  rows: (store, run) => store.runEvents(run, 0),
  put: (store, rows) => store.importRunEvents(rows),
  key: (row) => ({ run: row.run_id, seq: row.seq }),
};

const RUN_DELIVERIES: GroupedRows<RunDelivery> = {
  groups: (store) => store.runsWithDeliveries(),
  rows: (store, run) => store.runDeliveries(run),
  put: (store, rows) => store.importDeliveries(rows),
  key: (row) => ({ delivery: row.id }),
};

const API_TOKENS: GroupedRows<StoredApiToken> = {
  groups: () => Promise.resolve(["tokens"]),
  rows: (store) => store.exportApiTokens(),
  put: (store, rows) => store.importApiTokens(rows),
  key: (row) => ({ token: row.id }),
};

async function migrate(cli: Cli, to: string, json: boolean): Promise<number> {
  if (!isPostgresUrl(to)) {
    throw new ValidationError(`hermes store migrate: --to must be a postgres:// URL, got "${to}"`);
  }
  if (to === cli.dbPath) {
    throw new ValidationError("hermes store migrate: --to names the store being copied (see --db)");
  }
  const source = await cli.openStore();
  try {
    const target = await openStore(to, { clock: systemClock, host: cli.host });
    try {
      const sessions = await copySessions(cli, { from: source, to: target });
      if (cli.isTTY) cli.status("copying schedule runs and plugin state");
      const report = {
        to: redactUrl(to),
        ...sessions,
        schedule_runs: await copyRows(SCHEDULE_RUNS, { from: source, to: target }),
        plugin_state: await copyRows(PLUGIN_STATE, { from: source, to: target }),
        model_calls: await copyRows(MODEL_CALLS, { from: source, to: target }),
        runs: await copyRows(QUEUED_RUNS, { from: source, to: target }),
        run_events: await copyRows(RUN_EVENTS, { from: source, to: target }),
        run_deliveries: await copyRows(RUN_DELIVERIES, { from: source, to: target }),
        api_tokens: await copyRows(API_TOKENS, { from: source, to: target }),
      };
      cli.status("");
      const rowMismatches = [
        ...report.schedule_runs.mismatches,
        ...report.plugin_state.mismatches,
        ...report.model_calls.mismatches,
        ...report.runs.mismatches,
        ...report.run_events.mismatches,
        ...report.run_deliveries.mismatches,
        ...report.api_tokens.mismatches,
      ];
      if (json) await cli.out(JSON.stringify(report) + "\n");
      else {
        await cli.out(formatMigration(report));
        for (const m of report.mismatches) {
          cli.err(`hermes store migrate: session ${m.session_id}: ${m.problem}`);
        }
        for (const { problem, ...key } of rowMismatches) {
          const name = Object.entries(key).map(([k, v]) => `${k} ${v}`).join(", ");
          cli.err(`hermes store migrate: ${name}: ${problem}`);
        }
      }
      return report.mismatches.length + rowMismatches.length === 0 ? 0 : 1;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** Copies every session the target lacks, then verifies each one; the fields of the report (a CLI contract). */
async function copySessions(cli: Cli, stores: { from: Store; to: Store }) {
  const ids = await stores.from.sessionIds();
  let copied = 0;
  let messages = 0;
  const mismatches: Mismatch[] = [];
  for (const [i, id] of ids.entries()) {
    if (cli.isTTY) cli.status(`copying session ${i + 1}/${ids.length}`);
    const data = await stores.from.exportSession(id);
    if (!data) continue; // deleted since it was listed
    if (await stores.to.importSession(data)) {
      copied++;
      messages += data.messages.length;
    }
    const problem = await verify(data, stores.to);
    if (problem) mismatches.push({ session_id: id, problem });
  }
  return {
    sessions: ids.length,
    copied,
    already_present: ids.length - copied,
    messages_copied: messages,
    verified: ids.length - mismatches.length,
    mismatches,
  };
}

function formatMigration(
  report: Awaited<ReturnType<typeof copySessions>> & {
    to: string;
    schedule_runs: RowsReport;
    plugin_state: RowsReport;
    model_calls: RowsReport;
    runs: RowsReport;
    run_events: RowsReport;
    run_deliveries: RowsReport;
    api_tokens: RowsReport;
  },
): string {
  const line = (name: string, tally: Tally, detail = "") =>
    `  ${
      name.padEnd(14)
    } ${tally.copied} of ${tally.rows}${detail}; ${tally.already_present} already there; ` +
    `${tally.verified} verified`;
  const others = [
    report.schedule_runs,
    report.plugin_state,
    report.model_calls,
    report.runs,
    report.run_events,
    report.run_deliveries,
    report.api_tokens,
  ];
  const nothing = report.copied + others.reduce((n, r) => n + r.copied, 0) === 0;
  return [
    nothing ? `nothing new to copy to ${report.to}: it holds everything already` : `copied to ${report.to}:`,
    line("sessions", { ...report, rows: report.sessions }, ` (${report.messages_copied} messages)`) +
    " (counts and checksum)",
    line("schedule runs", report.schedule_runs),
    line("plugin state", report.plugin_state),
    line("model calls", report.model_calls),
    line("queued runs", report.runs),
    line("run events", report.run_events),
    line("deliveries", report.run_deliveries),
    line("API tokens", report.api_tokens),
  ].join("\n") + "\n";
}

/** Copies every group of `kind`, then checks that the target holds each copied row as this store does. */
async function copyRows<T extends object>(
  kind: GroupedRows<T>,
  stores: { from: Store; to: Store },
): Promise<RowsReport> {
  const report: RowsReport = { rows: 0, copied: 0, already_present: 0, verified: 0, mismatches: [] };
  const keyOf = (row: T) => canonical(kind.key(row));
  for (const group of await kind.groups(stores.from)) {
    const rows = await kind.rows(stores.from, group);
    report.rows += rows.length;
    report.copied += await kind.put(stores.to, rows);
    const theirs = new Map((await kind.rows(stores.to, group)).map((row) => [keyOf(row), row]));
    for (const row of rows) {
      const problem = rowProblem(row, theirs.get(keyOf(row)));
      if (problem) report.mismatches.push({ ...kind.key(row), problem });
      else report.verified++;
    }
  }
  report.already_present = report.rows - report.copied;
  return report;
}

/** Null when both rows hold the same values, else the first column that differs. */
function rowProblem(mine: object, theirs: object | undefined): string | null {
  if (!theirs) return "missing from the target";
  for (const [column, value] of Object.entries(mine)) {
    const [a, b] = [canonical(value), canonical((theirs as Record<string, unknown>)[column])];
    if (a !== b) return `${column} is ${clip(a)} here, ${clip(b)} in the target (copied before it changed?)`;
  }
  return null;
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Null when the target holds the session as the source does: the same row counts and checksum. */
async function verify(data: SessionExport, target: Store): Promise<string | null> {
  const copy = await target.exportSession(data.session.id);
  if (!copy) return "missing from the target";
  for (const part of ["messages", "state", "compactions", "steps"] as const) {
    if (copy[part].length !== data[part].length) {
      return `${part}: ${data[part].length} here, ${copy[part].length} in the target`;
    }
  }
  const [mine, theirs] = await Promise.all([checksum(data), checksum(copy)]);
  return mine === theirs ? null : `checksum ${mine.slice(0, 12)} here, ${theirs.slice(0, 12)} in the target`;
}

/** SHA-256 of the session's content in a canonical form, without the ids each store numbers itself. */
export async function checksum(data: SessionExport): Promise<string> {
  const content = {
    session: data.session,
    messages: data.messages.map(({ id: _id, ...m }) => m),
    state: data.state,
    compactions: data.compactions.map(({ id: _id, ...c }) => c),
    steps: data.steps,
  };
  const bytes = new TextEncoder().encode(canonical(content));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** JSON with object keys sorted, so that two stores' rows hash alike whatever order their columns come in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function where(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location) : location;
}
