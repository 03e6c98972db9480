/** What the store contract gets from an implementation, and the helpers its parts share. */
import type { Clock } from "../../../runtime/core/clock.ts";
import { systemClock } from "../../../runtime/core/clock.ts";
import {
  currentProcess,
  type ProcessIdentity,
  processStartTime,
} from "../../../runtime/core/process_identity.ts";
import type { ReplacementRow, Store } from "../../../runtime/store/store.ts";

export interface StoreFixture extends AsyncDisposable {
  /** A fresh, empty store. */
  store: Store;
  /** Another connection to the same store (the same object when it cannot be shared, e.g. `:memory:`). */
  connect(): Promise<Store>;
  /**
   * Runs a separate process that opens the store and appends `count` messages (`${tag} 1`, `${tag} 2`, …;
   * user and assistant in turn) to the session, one transaction each; resolves when it exited cleanly.
   * Absent when no other process can reach the store.
   */
  appendFromProcess?(sessionId: string, count: number, tag: string): Promise<void>;
}

/**
 * Opens a fresh store whose rows are stamped by `clock` (default: the system clock), used by a process on
 * `host`, the name its holders carry and the one host whose dead holders it may prove dead (default: the
 * hostname).
 */
export type OpenStore = (options?: { clock?: Clock; host?: string }) => Promise<StoreFixture>;

/** A clock the test sets explicitly, so rows get the times it needs. */
export class SetClock implements Clock {
  at: number;
  constructor(at = Date.UTC(2026, 0, 1)) {
    this.at = at;
  }
  now(): number {
    return this.at;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }
}

/** This process under a fresh nonce: alive, on this host. */
export function liveHolder(overrides: Partial<ProcessIdentity> = {}): ProcessIdentity {
  return { ...currentProcess(), ...overrides };
}

/** The identity of a real process that has exited: provably dead on this host. */
export async function deadHolder(): Promise<ProcessIdentity> {
  const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" }).spawn();
  const started = processStartTime(child.pid)!;
  child.kill("SIGKILL");
  await child.status;
  return { host: Deno.hostname(), pid: child.pid, started, nonce: crypto.randomUUID() };
}

/** Owner columns naming `holder` (for `updateSession`). */
export function ownedBy(holder: ProcessIdentity) {
  return { owner_host: holder.host, owner_pid: holder.pid, owner_started: holder.started };
}

/**
 * Replaces `archive` (active row ids) by `insert` the way a compaction does: takes the lease, commits,
 * releases. Resolves with the compaction log id.
 */
export async function compactRows(
  store: Store,
  sessionId: string,
  archive: readonly number[],
  insert: ReplacementRow[] = [],
): Promise<number> {
  const holder = liveHolder();
  const now = Date.now();
  const taken = await store.acquireLease({ sessionId, holder, now, ttlMs: 60_000 });
  if (!taken.acquired) throw new Error("Cannot compact in the test: the lease is held");
  const result = await store.commitCompaction({
    sessionId,
    nonce: holder.nonce,
    now,
    kind: "summarize",
    reason: "manual",
    archive,
    insert,
    beforeTokens: 0,
    detail: {},
    estimate: () => 0,
  });
  await store.releaseLease({ sessionId, nonce: holder.nonce });
  if (!result.committed) throw new Error(`Cannot compact in the test: ${result.reason}`);
  return result.compactionId;
}
