/**
 * A claimed cron slot as a queued run: the daemon holding the slot's claim submits the job as a run of the
 * queue (trigger `schedule`, an idempotency key made of the job and the slot, so two daemons never queue a
 * slot twice) pinned to its own worker, and waits for the run to end; the slot is recorded as the run ended.
 * Claims of the queue apply to it as to any run: concurrency groups, `queue.max_running`, model holds.
 *
 * The slot's claim keeps the schedule's rules (`overlap`, `catch_up`, `on_crash`); the run is pinned to the
 * slot's holder so that the two live and die together: a daemon taking the slot over (on_crash: rerun) pins
 * the run to itself, one recording the slot crashed (skip) cancels the run if it never started.
 */
import type { Clock } from "../../runtime/core/clock.ts";
import { errorMessage } from "../../runtime/core/errors.ts";
import type { Logger } from "../../runtime/core/log.ts";
import type { ProcessIdentity } from "../../runtime/core/process_identity.ts";
import { crashedNote } from "../../runtime/store/rules.ts";
import type { NewQueuedRun, QueuedRun, RunQueueStore } from "../../runtime/store/store.ts";

export interface SlotRunOptions {
  store: RunQueueStore;
  clock: Clock;
  log: Logger;
  /** This daemon: its queue worker claims the slot's run. */
  holder: ProcessIdentity;
  /** Wakes this process's queue worker to claim the runs pinned to it (called while the slot's run waits). */
  wake: () => void;
  /** How often the run is looked at while it is queued or runs (default 100 ms). */
  pollMs?: number;
  /** Once the slot's run is to stop, how long to wait for its end before giving it up (default 10 s). */
  stopWaitMs?: number;
}

/** How a slot's run ended, as the slot's record takes it. */
export interface SlotOutcome {
  session_id: string | null;
  status: string;
  note?: string;
}

const ACTIVE = new Set(["queued", "running"]);

/** The idempotency key of a slot's run: one per job and slot time, across every daemon on the store. */
export function slotRunKey(job: string, slot: number): string {
  return `schedule:${job}:${new Date(slot).toISOString()}`;
}

/** The slot's record of its run's end. */
export function slotOutcome(run: QueuedRun): SlotOutcome {
  if (run.status === "crashed" && run.on_crash === "skip" && run.holder) {
    return {
      session_id: run.session_id,
      status: "crashed",
      note: crashedNote(`${run.holder.host}:${run.holder.pid}`),
    };
  }
  return {
    session_id: run.session_id,
    status: run.status,
    ...(run.status === "crashed" ? { note: run.note ?? "" } : {}),
  };
}

/**
 * Follows the run of `slot` queued before (a slot taken over), or queues it pinned to this daemon (`prepare`
 * makes it, or says why the slot does not run), and resolves with its end. `signal` stops it: the run is
 * cancelled and its end awaited for at most `stopWaitMs`.
 */
export async function runSlot(
  slot: { job: string; slot: number },
  prepare: () => Promise<NewQueuedRun | SlotOutcome>,
  signal: AbortSignal,
  options: SlotRunOptions,
): Promise<SlotOutcome> {
  const { store, clock, holder } = options;
  const pollMs = options.pollMs ?? 100;
  const key = slotRunKey(slot.job, slot.slot);
  const [before] = await store.listRuns({ key, limit: 1 });
  let current: QueuedRun;
  if (before) {
    current = before;
    options.log.info(`${slot.job}: the slot's run ${current.id} was queued before; following it`);
  } else {
    const run = await prepare();
    if (!("job_snapshot" in run)) return run;
    // Two daemons may get here for one slot (a takeover racing): the key stores one run, both follow it.
    current = (await store.submitRun({ ...run, key, trigger: "schedule", pinned_to: holder.nonce })).run;
  }
  options.wake();
  let stopAt: number | null = null;
  for (;;) {
    if (!ACTIVE.has(current.status)) return slotOutcome(current);
    // Queued for another daemon that held the slot before (it died, this one took the slot over).
    if (current.status === "queued" && current.pinned_to !== holder.nonce) {
      await store.pinRun(current.id, holder.nonce);
    }
    // Still queued (a group at its limit, a model held, max_running): the worker looks again.
    if (current.status === "queued") options.wake();
    if (signal.aborted && stopAt === null) {
      stopAt = clock.now() + (options.stopWaitMs ?? 10_000);
      const id = current.id;
      await store.cancelRun(id, clock.now()).catch((error) => {
        options.log.warn(`${slot.job}: cannot cancel the slot's run ${id}: ${errorMessage(error)}`);
      });
    }
    if (stopAt !== null && clock.now() >= stopAt) {
      return {
        session_id: current.session_id,
        status: "interrupted",
        note: `the slot's run ${current.id} did not end within its stop wait (${current.status})`,
      };
    }
    // Woken early by a stop, once: a signal that fired already would make this loop spin.
    await clock.sleep(pollMs, signal.aborted ? undefined : signal).catch(() => {});
    current = (await store.getRun(current.id)) ?? current;
  }
}

/**
 * A slot recorded crashed (its holder died, on_crash: skip): its run is cancelled if it never started, so it
 * does not start later for a slot that says it did not run.
 */
export async function dropSlotRun(
  store: RunQueueStore,
  job: string,
  slot: number,
  now: number,
): Promise<void> {
  const [run] = await store.listRuns({ key: slotRunKey(job, slot), limit: 1 });
  if (run?.status === "queued") await store.cancelRun(run.id, now);
}
