/**
 * A queue worker (`hermes daemon --concurrency N`): claims queued runs from the store while it has free
 * slots, runs each through a runner (the App's run operation), records how it ended, and keeps its claims
 * alive by lease renewal. A cancel asked for anywhere reaches the run here within `cancelPollMs`; a run
 * whose claim was lost (its lease expired and another worker recovered it) is stopped. Runs of workers that
 * died are recovered by any worker (`recoverRuns`: on_crash). The worker sleeps between claims and is woken
 * by the store's notifications (PostgreSQL LISTEN/NOTIFY), by a run of its own ending, by `wake()` (a run
 * submitted in the same process), or by its poll.
 *
 * A run's events are stored as they come (batched; the last batch with its end, in one write), its session
 * is recorded as soon as it has one, and a provider's rate-limit answer (429, retried after `delay_ms`) holds
 * back the other queued runs of its model for as long.
 */
import type { Clock } from "../../runtime/core/clock.ts";
import { errorMessage } from "../../runtime/core/errors.ts";
import type { HermesEvent } from "../../runtime/core/events.ts";
import type { Logger } from "../../runtime/core/log.ts";
import type { ProcessIdentity } from "../../runtime/core/process_identity.ts";
import { StoreUnavailableError } from "../../runtime/store/retry.ts";
import type { QueuedRun, RunEnd, RunQueueStore } from "../../runtime/store/store.ts";

/** How a run ended, as its runner reports it. */
export interface QueuedOutcome {
  status: RunEnd["status"];
  session_id: string | null;
  result: unknown;
  exit_code: number | null;
  note?: string;
}

export interface RunContext {
  signal: AbortSignal;
  /** Every event of the run, in order (stored for `runs events`; the first names its session). */
  event(event: HermesEvent): void;
}

export type QueueRunner = (run: QueuedRun, context: RunContext) => Promise<QueuedOutcome>;

export interface QueueWorkerOptions {
  store: RunQueueStore;
  clock: Clock;
  log: Logger;
  holder: ProcessIdentity;
  runner: QueueRunner;
  /** Runs at once in this worker (default 1). */
  concurrency?: number;
  /** config.yaml `queue.max_running`: no claim beyond this many running runs in the store. */
  maxRunning?: number | null;
  /** How long a claim stays valid without renewal (default 60 s; renewed every third of it). */
  leaseMs?: number;
  /** How often the store is asked for work when nothing wakes the worker (default 250 ms). */
  pollMs?: number;
  /** How often cancels of this worker's runs are looked for while runs are in flight (default 250 ms). */
  cancelPollMs?: number;
  /** How often runs of dead or silent workers are looked for (default 1 s). */
  scanMs?: number;
  /** On stop, how long runs may finish before they are interrupted (default 10 s). */
  graceMs?: number;
  /** How often a run's events are written while it runs (default 250 ms). */
  eventFlushMs?: number;
  /** Told of each run this worker recorded the end of (its record as stored), e.g. to notify about it. */
  onEnded?: (run: QueuedRun) => void;
  /**
   * Whether `onEnded` wants the ended record of a run (read back from the store after its end); default
   * every run. A run without notifications costs no read then.
   */
  wantsEnded?: (run: QueuedRun) => boolean;
  /**
   * Whether its daemon still has cron slots in flight: while stopping, the worker keeps claiming the runs
   * pinned here (the slots were claimed before the stop) until they are done or graceMs has passed.
   */
  slotsInFlight?: () => boolean;
  /** Told a run's id each time this worker stored events of it or its end (a server's streams look then). */
  onStored?: (runId: string) => void;
}

interface InFlight {
  run: QueuedRun;
  controller: AbortController;
  /** Why it was stopped, when it was: recorded as the run's status (`cancelled`) and note. */
  stopped?: { status: "cancelled" | "interrupted"; note: string };
  done: Promise<void>;
}

const RECORD_RETRY_MS = 1_000;
/** Most runs pinned to this worker claimed at one look. */
const PINNED_BATCH = 16;
/** While stopping, how often runs pinned here (slots claimed just before the stop) are looked for. */
const STOP_LOOK_MS = 100;

export class QueueWorker {
  #o:
    & Required<
      Omit<QueueWorkerOptions, "maxRunning" | "onEnded" | "onStored" | "wantsEnded" | "slotsInFlight">
    >
    & {
      slotsInFlight: () => boolean;
      maxRunning: number | null;
      onEnded: (run: QueuedRun) => void;
      wantsEnded: (run: QueuedRun) => boolean;
      onStored: (runId: string) => void;
    };
  #runs = new Map<string, InFlight>();
  #waker = new AbortController();
  #stopping = false;
  /** A run pinned to this worker (a cron slot of its daemon) may be waiting: claim those at the next look. */
  #pinnedWaiting = false;

  constructor(options: QueueWorkerOptions) {
    this.#o = {
      concurrency: 1,
      leaseMs: 60_000,
      pollMs: 250,
      cancelPollMs: 250,
      scanMs: 1_000,
      graceMs: 10_000,
      eventFlushMs: 250,
      ...options,
      maxRunning: options.maxRunning ?? null,
      onEnded: options.onEnded ?? (() => {}),
      slotsInFlight: options.slotsInFlight ?? (() => false),
      wantsEnded: options.wantsEnded ?? (() => options.onEnded !== undefined),
      onStored: options.onStored ?? (() => {}),
    };
  }

  /** This worker's identity (runs pinned to its nonce are claimed by it alone). */
  get holder(): ProcessIdentity {
    return this.#o.holder;
  }

  /** Runs in flight here now. */
  get size(): number {
    return this.#runs.size;
  }

  /** Works the queue until `signal` aborts, then lets runs finish within graceMs and interrupts the rest. */
  async run(signal: AbortSignal): Promise<void> {
    const { store, clock, log } = this.#o;
    const unwatch = await store.watchRuns(() => this.#wake()).catch((error) => {
      log.warn(`cannot listen for queue notifications (${errorMessage(error)}); polling instead`);
      return () => Promise.resolve();
    });
    const stop = () => this.#wake();
    signal.addEventListener("abort", stop, { once: true });
    let nextScan = 0;
    let nextRenew = Infinity;
    let nextCancelPoll = Infinity;
    try {
      while (!signal.aborted) {
        const now = clock.now();
        try {
          if (now >= nextScan) {
            await this.#recover(now);
            nextScan = now + this.#o.scanMs;
          }
          if (this.#runs.size > 0 && now >= nextRenew) {
            await this.#renew(now);
            nextRenew = now + this.#o.leaseMs / 3;
          }
          if (this.#runs.size > 0 && now >= nextCancelPoll) {
            this.#cancel(await store.cancelRequests(this.#o.holder));
            nextCancelPoll = now + this.#o.cancelPollMs;
          }
          if (this.#pinnedWaiting) {
            if (await this.#claimPinned(now) > 0) {
              nextRenew = Math.min(nextRenew, now + this.#o.leaseMs / 3);
              nextCancelPoll = Math.min(nextCancelPoll, now + this.#o.cancelPollMs);
            }
          }
          let unpinned = 0;
          for (const flight of this.#runs.values()) if (flight.run.pinned_to === null) unpinned++;
          const free = this.#o.concurrency - unpinned;
          if (free > 0) {
            const claimed = await store.claimRuns({
              holder: this.#o.holder,
              now,
              lease_ms: this.#o.leaseMs,
              max: free,
              max_running: this.#o.maxRunning,
              pinned: "none",
            });
            for (const run of claimed) this.#start(run);
            if (claimed.length > 0) {
              nextRenew = Math.min(nextRenew, now + this.#o.leaseMs / 3);
              nextCancelPoll = Math.min(nextCancelPoll, now + this.#o.cancelPollMs);
              // More may be waiting: look again at once while slots are free.
              if (claimed.length === free) continue;
            }
          }
        } catch (error) {
          if (!(error instanceof StoreUnavailableError)) throw error;
          log.warn(`${errorMessage(error)}; the queue worker keeps running and tries again`);
        }
        const wakeAt = Math.min(
          now + this.#o.pollMs,
          nextScan,
          this.#runs.size > 0 ? Math.min(nextRenew, nextCancelPoll) : Infinity,
        );
        await this.#sleep(Math.max(0, wakeAt - clock.now()), signal);
      }
    } finally {
      signal.removeEventListener("abort", stop);
      await this.#stop();
      await unwatch();
    }
  }

  /**
   * Claims the runs pinned here (its daemon's cron slots): not counted against --concurrency (each job's
   * schedule caps its own runs), but held to the store's caps like any run. Resolves with how many.
   */
  async #claimPinned(now: number): Promise<number> {
    this.#pinnedWaiting = false;
    const pinned = await this.#o.store.claimRuns({
      holder: this.#o.holder,
      now,
      lease_ms: this.#o.leaseMs,
      max: PINNED_BATCH,
      max_running: this.#o.maxRunning,
      pinned: "only",
    });
    for (const run of pinned) this.#start(run);
    return pinned.length;
  }

  async #recover(now: number): Promise<void> {
    for (const run of await this.#o.store.recoverRuns({ now })) {
      this.#o.log.warn(`run ${run.id} (${run.job}): ${run.note} → ${run.status}`);
      if (run.status === "crashed") this.#o.onEnded(run);
    }
    // Runs cancelled while queued ended with no worker: one worker sends their notifications.
    for (const run of await this.#o.store.takeUnnotifiedRuns()) this.#o.onEnded(run);
  }

  async #renew(now: number): Promise<void> {
    const { held, cancel } = await this.#o.store.renewRuns(this.#o.holder, {
      now,
      lease_ms: this.#o.leaseMs,
    });
    const kept = new Set(held);
    for (const [id, flight] of this.#runs) {
      if (kept.has(id) || flight.stopped) continue;
      this.#o.log.warn(`run ${id} (${flight.run.job}): lost its claim; stopping it`);
      flight.stopped = { status: "interrupted", note: "the worker lost its claim" };
      flight.controller.abort(new DOMException("the run's claim was lost", "AbortError"));
    }
    this.#cancel(cancel);
  }

  #cancel(ids: readonly string[]): void {
    for (const id of ids) {
      const flight = this.#runs.get(id);
      if (!flight || flight.stopped) continue;
      this.#o.log.info(`run ${id} (${flight.run.job}): cancelled; stopping it`);
      flight.stopped = { status: "cancelled", note: "cancelled while it ran" };
      flight.controller.abort(new DOMException("the run was cancelled", "AbortError"));
    }
  }

  #start(run: QueuedRun): void {
    const controller = new AbortController();
    const flight: InFlight = { run, controller, done: Promise.resolve() };
    this.#runs.set(run.id, flight);
    this.#o.log.debug(`run ${run.id} (${run.job}): started (attempt ${run.attempts})`);
    flight.done = (async () => {
      const events = new EventSink(this.#o, run);
      let outcome: QueuedOutcome;
      try {
        outcome = await this.#o.runner(run, { signal: controller.signal, event: (e) => events.add(e) });
      } catch (error) {
        outcome = {
          status: "failed",
          session_id: null,
          result: null,
          exit_code: 1,
          note: errorMessage(error),
        };
      }
      // The events not written yet go out with the run's end (one write).
      const last = await events.close();
      if (flight.stopped) {
        outcome = { ...outcome, status: flight.stopped.status, note: flight.stopped.note };
      }
      await this.#record(run, { ...outcome, session_id: outcome.session_id ?? events.sessionId }, last);
    })().finally(() => {
      this.#runs.delete(run.id);
      this.#wake();
    });
  }

  async #record(run: QueuedRun, outcome: QueuedOutcome, events: readonly HermesEvent[]): Promise<void> {
    const { store, clock, log, holder } = this.#o;
    for (;;) {
      try {
        const recorded = await store.finishRun({
          id: run.id,
          holder,
          status: outcome.status,
          session_id: outcome.session_id,
          result: outcome.result,
          exit_code: outcome.exit_code,
          now: clock.now(),
          ...(outcome.note !== undefined ? { note: outcome.note } : {}),
          ...(events.length > 0 ? { events } : {}),
        });
        if (recorded || events.length > 0) this.#o.onStored(run.id);
        if (recorded) {
          log.info(`run ${run.id} (${run.job}): ${outcome.status}`);
          if (this.#o.wantsEnded(run)) {
            const ended = await store.getRun(run.id);
            if (ended) this.#o.onEnded(ended);
          }
        } else log.warn(`run ${run.id} (${run.job}): ended (${outcome.status}) after its claim was lost`);
        return;
      } catch (error) {
        // The store stayed unavailable past store.retry: the end is recorded once it is back.
        if (!(error instanceof StoreUnavailableError)) throw error;
        log.warn(`cannot record the end of run ${run.id} yet: ${errorMessage(error)}`);
        await clock.sleep(RECORD_RETRY_MS);
      }
    }
  }

  /**
   * Lets runs finish within graceMs, then interrupts them and waits for their ends to be recorded. Runs
   * pinned here still start meanwhile: they are cron slots its daemon claimed before the stop.
   */
  async #stop(): Promise<void> {
    this.#stopping = true;
    const { clock, log, graceMs } = this.#o;
    const deadline = clock.now() + graceMs;
    const claimPinned = () =>
      this.#claimPinned(clock.now()).catch((error) => {
        log.warn(`cannot claim this daemon's slot runs while stopping: ${errorMessage(error)}`);
      });
    if (this.#pinnedWaiting) await claimPinned();
    const pending = () => this.#runs.size > 0 || this.#o.slotsInFlight();
    if (!pending()) return;
    log.info(`stopping: waiting up to ${graceMs} ms for ${this.#runs.size} queued run(s)`);
    while (pending() && clock.now() < deadline) {
      const timer = new AbortController();
      // The flights still in the map have not ended (each leaves it when it has).
      const flights = [...this.#runs.values()].map((f) => f.done);
      await Promise.race([
        ...(flights.length > 0 ? [Promise.all(flights)] : []),
        clock.sleep(Math.min(STOP_LOOK_MS, deadline - clock.now()), timer.signal).catch(() => {}),
      ]);
      timer.abort();
      if (this.#pinnedWaiting && clock.now() < deadline) await claimPinned();
    }
    const flights = [...this.#runs.values()];
    if (flights.length === 0) return;
    const settled = Promise.all(flights.map((f) => f.done));
    for (const flight of flights) {
      flight.stopped ??= { status: "interrupted", note: "the worker stopped before the run ended" };
      flight.controller.abort(new DOMException("the worker is stopping", "AbortError"));
    }
    await settled;
  }

  /**
   * Looks at the queue now instead of at the next poll: for a run submitted in this process (the store's
   * notifications and the poll cover runs submitted elsewhere). Does nothing once the worker is stopping.
   */
  wake(): void {
    this.#wake();
  }

  /** Looks now for runs pinned to this worker (its daemon's cron slots); called again while one waits. */
  wakePinned(): void {
    this.#pinnedWaiting = true;
    this.#wake();
  }

  #wake(): void {
    if (!this.#stopping) this.#waker.abort();
  }

  async #sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#waker.signal.aborted) {
      this.#waker = new AbortController();
      return;
    }
    try {
      await this.#o.clock.sleep(ms, AbortSignal.any([signal, this.#waker.signal]));
    } catch {
      // woken early
    }
    if (this.#waker.signal.aborted) this.#waker = new AbortController();
  }
}

type SinkOptions = Pick<QueueWorkerOptions, "store" | "clock" | "log" | "holder"> & {
  eventFlushMs: number;
  onStored: (runId: string) => void;
};

/**
 * A run's events on their way to the store, written in batches (never awaited by the run); the first
 * event's session is recorded on the run, and a rate-limited provider call holds back the model's queue.
 */
class EventSink {
  sessionId: string | null = null;
  #o: SinkOptions;
  #run: QueuedRun;
  #pending: HermesEvent[] = [];
  #writing: Promise<void> = Promise.resolve();
  #timer: AbortController | undefined;

  constructor(options: SinkOptions, run: QueuedRun) {
    this.#o = options;
    this.#run = run;
  }

  add(event: HermesEvent): void {
    const { store, holder, clock } = this.#o;
    if (this.sessionId === null && event.session_id) {
      this.sessionId = event.session_id;
      this.#chain(() => store.setRunSession(this.#run.id, holder, event.session_id).then(() => {}));
    }
    if (event.type === "provider.retry" && event.status === 429 && this.#run.model) {
      const model = this.#run.model;
      const until = clock.now() + event.delay_ms;
      this.#chain(() => store.holdModel(model, until));
    }
    this.#pending.push(event);
    if (this.#timer) return;
    const timer = this.#timer = new AbortController();
    clock.sleep(this.#o.eventFlushMs, timer.signal).then(() => {
      this.#timer = undefined;
      this.#flush();
    }, () => {});
  }

  /** Waits for every write under way and hands back the events not written yet (the run's end takes them). */
  async close(): Promise<HermesEvent[]> {
    this.#timer?.abort();
    this.#timer = undefined;
    await this.#writing;
    const rest = this.#pending;
    this.#pending = [];
    return rest;
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    this.#chain(async () => {
      await this.#o.store.appendRunEvents(this.#run.id, batch);
      this.#o.onStored(this.#run.id);
    });
  }

  #chain(write: () => Promise<void>): void {
    this.#writing = this.#writing.then(write).catch((error) => {
      this.#o.log.warn(`run ${this.#run.id}: cannot store its events: ${errorMessage(error)}`);
    });
  }
}
