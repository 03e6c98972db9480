/**
 * The schedule runs a daemon has in flight: started on a claim, recorded when they end (runs that end
 * together in one transaction), kept alive by lease renewal, interrupted when the claim is lost or the
 * daemon stops.
 */
import type { Clock } from "../../runtime/core/clock.ts";
import { errorMessage } from "../../runtime/core/errors.ts";
import type { Logger } from "../../runtime/core/log.ts";
import type { ProcessIdentity } from "../../runtime/core/process_identity.ts";
import type { ScheduleStore } from "../../runtime/store/store.ts";
import { StoreUnavailableError } from "../../runtime/store/retry.ts";

/** One due run: the job file and the slot it is for. */
export interface ScheduledRun {
  job: string;
  path: string;
  /** The slot (epoch ms) this run is for. */
  slot: number;
}

/** Runs a job as a fresh session (`runJob`, wrapped); resolves with how it ended (a note says why, if need be). */
export type ScheduledRunner = (
  run: ScheduledRun,
  options: { signal: AbortSignal },
) => Promise<{ session_id: string | null; status: string; note?: string }>;

/** Anything in flight that a stop must wait for or interrupt. */
export interface InFlight {
  controller: AbortController;
  done: Promise<void>;
}

type Outcome = { status: string; session_id: string | null; note?: string };

interface Ended {
  run: ScheduledRun;
  outcome: Outcome;
  recorded: () => void;
}

export interface ClaimedRunsOptions {
  store: ScheduleStore;
  clock: Clock;
  log: Logger;
  holder: ProcessIdentity;
  runner: ScheduledRunner;
  /** Called after runs that ended were recorded. */
  onRecorded?: () => void;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** Pause between attempts to record run ends while the store is unavailable. */
const RECORD_RETRY_MS = 1_000;

/** One (job, slot) as a map key. */
export function claimKey(job: string, slot: number): string {
  return `${job}\u0000${slot}`;
}

export class ClaimedRuns {
  #o: ClaimedRunsOptions;
  #runs = new Map<string, InFlight & { run: ScheduledRun }>();
  #ended: Ended[] = [];

  constructor(options: ClaimedRunsOptions) {
    this.#o = options;
  }

  get size(): number {
    return this.#runs.size;
  }

  /** Starts the run of a slot this daemon has claimed. */
  start(run: ScheduledRun): void {
    const key = claimKey(run.job, run.slot);
    const controller = new AbortController();
    this.#o.log.debug(`${run.job}: running slot ${iso(run.slot)}`);
    const done = (async () => {
      let outcome: Outcome;
      try {
        outcome = await this.#o.runner(run, { signal: controller.signal });
      } catch (error) {
        const status = controller.signal.aborted ? "interrupted" : "failed";
        outcome = { status, session_id: null, note: errorMessage(error) };
      }
      await new Promise<void>((recorded) => this.#end({ run, outcome, recorded }));
    })().finally(() => this.#runs.delete(key));
    this.#runs.set(key, { run, controller, done });
  }

  /** Interrupts the run of (job, slot), if it runs here: its claim was cancelled (`overlap: cancel_previous`). */
  cancel(job: string, slot: number, why: string): void {
    const run = this.#runs.get(claimKey(job, slot));
    if (!run) return;
    this.#o.log.warn(`${job}: interrupting the run of slot ${iso(slot)}: ${why}`);
    run.controller.abort(new DOMException(`the run was cancelled: ${why}`, "AbortError"));
  }

  /** Extends the leases of the runs in flight; a run whose claim was taken over is interrupted. */
  async renew(now: number, leaseMs: number): Promise<void> {
    const claims = await this.#o.store.renewClaims(this.#o.holder, { now, lease_ms: leaseMs });
    const held = new Set(claims.map((c) => claimKey(c.job, c.slot)));
    for (const [key, { run, controller }] of this.#runs) {
      if (held.has(key)) continue;
      this.#o.log.warn(`${run.job}: lost the claim on slot ${iso(run.slot)}; interrupting the run`);
      controller.abort(new DOMException("the schedule claim was taken over", "AbortError"));
    }
  }

  /**
   * Lets the runs (and `others`) finish within `graceMs`, then interrupts them; a run that still has not
   * ended after another `graceMs` is recorded as interrupted.
   */
  async stop(graceMs: number, others: InFlight[] = []): Promise<void> {
    const active: InFlight[] = [...this.#runs.values(), ...others];
    if (active.length === 0) return;
    const { clock, log, store, holder } = this.#o;
    log.info(`stopping: waiting up to ${graceMs} ms for ${active.length} run(s)`);
    const settled = () => Promise.all(active.map((r) => r.done));
    if (await within(clock, settled(), graceMs)) return;
    for (const { controller } of active) {
      controller.abort(new DOMException("the daemon is stopping", "AbortError"));
    }
    if (await within(clock, settled(), graceMs)) return;
    const note = "the daemon stopped before the run ended";
    const outcome = { status: "interrupted", session_id: null, now: clock.now(), note };
    await store.finishRuns([...this.#runs.values()].map(({ run }) => ({ claim: run, holder, outcome })));
  }

  #end(ended: Ended): void {
    this.#ended.push(ended);
    if (this.#ended.length === 1) queueMicrotask(() => void this.#record());
  }

  async #record(): Promise<void> {
    const { store, clock, log, holder } = this.#o;
    let batch: Ended[];
    let recorded: boolean[];
    for (;;) {
      batch = this.#ended;
      this.#ended = [];
      const now = clock.now();
      try {
        // Runs that end together are recorded in one transaction.
        recorded = await store.finishRuns(
          batch.map(({ run, outcome }) => ({ claim: run, holder, outcome: { ...outcome, now } })),
        );
        break;
      } catch (error) {
        // The store stayed unavailable past store.retry: the ends are kept and recorded once it is back.
        if (!(error instanceof StoreUnavailableError)) throw error;
        log.warn(`cannot record ${batch.length} run end(s) yet: ${errorMessage(error)}`);
        this.#ended = [...batch, ...this.#ended];
        await clock.sleep(RECORD_RETRY_MS);
      }
    }
    batch.forEach(({ run, outcome, recorded: done }, i) => {
      const session = outcome.session_id ? ` (session ${outcome.session_id})` : "";
      if (recorded[i]) log.info(`${run.job}: slot ${iso(run.slot)} ${outcome.status}${session}`);
      else {log.warn(
          `${run.job}: slot ${
            iso(run.slot)
          } ended (${outcome.status}) after its claim was taken over or cancelled`,
        );}
      done();
    });
    this.#o.onRecorded?.();
  }
}

/** True when `promise` settles within `ms` on `clock`. */
async function within(clock: Clock, promise: Promise<unknown>, ms: number): Promise<boolean> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      promise.then(() => true, () => true),
      clock.sleep(ms, timer.signal).then(() => false, () => false),
    ]);
  } finally {
    timer.abort();
  }
}
