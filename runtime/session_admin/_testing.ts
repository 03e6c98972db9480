/** Test fixtures: a real store in a temp dir, filled through the Store interface with controllable times. */
import type { Clock } from "../core/clock.ts";
import { systemClock } from "../core/clock.ts";
import { type Hooks, noHooks, type SessionDeletePayload } from "../core/hooks.ts";
import type { AppendMessage, Store } from "../store/store.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import type { SessionStatus } from "../core/types.ts";

/** Row counts and hand-made compacted rows, through the SQLite store's test hatch. */
export { countRows as count, deactivateRows as deactivate } from "../store/sqlite/_testing.ts";

/** A clock the fixture sets explicitly, so rows get the times a test needs. */
export class SetClock implements Clock {
  at: number;
  constructor(at: number) {
    this.at = at;
  }
  now(): number {
    return this.at;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }
}

export interface TempStore extends AsyncDisposable {
  store: Store;
  clock: SetClock;
  dir: string;
  path: string;
}

export async function tempStore(start = Date.UTC(2026, 0, 1)): Promise<TempStore> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-sessions-" });
  const path = `${dir}/state.db`;
  const clock = new SetClock(start);
  const store = openSqliteStore(path, { clock });
  return {
    store,
    clock,
    dir,
    path,
    async [Symbol.asyncDispose]() {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

export interface FixtureSession {
  id: string;
  job: string;
  status: SessionStatus;
  created_at: number;
  updated_at: number;
  archived: boolean;
}

export const JOBS = ["nightly", "triage", "deploy", "report"];
export const STATUSES: SessionStatus[] = ["success", "failed", "limit", "success", "interrupted"];
const MINUTE = 60_000;

/**
 * `count` sessions, one a minute from the clock's start (the newest last); session i has job JOBS[i % 4],
 * status STATUSES[i % 5], is archived when i % 10 === 9, and holds a user turn, a tool call and its result.
 */
export async function addSessions(fx: TempStore, count: number): Promise<FixtureSession[]> {
  const start = fx.clock.at;
  const sessions: FixtureSession[] = [];
  for (let i = 0; i < count; i++) {
    fx.clock.at = start + i * MINUTE;
    const job = JOBS[i % JOBS.length]!;
    const status = STATUSES[i % STATUSES.length]!;
    const session = await fx.store.createSession({ job, status });
    await fx.store.appendMessages(session.id, conversation(i));
    const archived = i % 10 === 9;
    if (archived) await fx.store.archiveSessions([session.id]);
    sessions.push({
      id: session.id,
      job,
      status,
      created_at: fx.clock.at,
      updated_at: fx.clock.at,
      archived,
    });
  }
  return sessions;
}

export function conversation(i: number): AppendMessage[] {
  return [
    { role: "user", content: `Check build number ${i} of the pipeline` },
    {
      role: "assistant",
      content: "",
      tool_calls: [{
        id: `call_${i}`,
        name: "shell",
        arguments: JSON.stringify({ command: `ci status ${i}` }),
      }],
      completion_tokens: 12,
      prompt_tokens: 100,
    },
    { role: "tool", content: `build ${i}: green`, tool_call_id: `call_${i}`, name: "shell" },
  ];
}

/** Hooks that record every on_session_delete call. */
export function recordingHooks(): Hooks & { deletes: SessionDeletePayload[] } {
  const deletes: SessionDeletePayload[] = [];
  return {
    ...noHooks,
    deletes,
    onSessionDelete(payload) {
      deletes.push(structuredClone(payload));
      return Promise.resolve();
    },
  };
}
