/**
 * The cron daemon (`hermes daemon`): one timer for the nearest due slot across every scheduled job, a claim
 * per (job, slot) in the store so several daemons never run a slot twice, takeover of slots whose holder
 * died, startup catch-up, reload of edited job files, and a clean stop that lets runs finish or interrupts
 * them.
 */
import type { Clock } from "../../runtime/core/clock.ts";
import { errorMessage } from "../../runtime/core/errors.ts";
import type { Logger } from "../../runtime/core/log.ts";
import { currentProcess, type ProcessIdentity } from "../../runtime/core/process_identity.ts";
import { isStaleClaim } from "../../runtime/store/rules.ts";
import { StoreUnavailableError } from "../../runtime/store/retry.ts";
import type { AdminStore, ScheduleStore, SessionStore, SlotClaim } from "../../runtime/store/store.ts";
import { loadScheduledJobs, type ScheduledJob } from "./jobs.ts";
import { reloadJobs, type ScheduledEntry } from "./job_reload.ts";
import { watchJobFiles } from "./job_watch.ts";
import { ClaimedRuns, type InFlight, type ScheduledRunner } from "./runs.ts";
import { hasActiveRecurring, RECURRING_KEYS } from "../recurring_active.ts";
import { catchUpPlan, dueSlot } from "./slot_plan.ts";

export type { ScheduledRun, ScheduledRunner } from "./runs.ts";

/** Resumes a session whose live loop or heartbeat lost its process (`runJob` with `resume`). */
export type SessionResumer = (
  session: { session_id: string; job: string; path: string },
  options: { signal: AbortSignal },
) => Promise<{ session_id: string | null; status: string }>;

export interface DaemonOptions {
  store: AdminStore & ScheduleStore & SessionStore;
  clock: Clock;
  log: Logger;
  /** Job files and directories (`*.yaml` inside) to serve. */
  paths: readonly string[];
  runner: ScheduledRunner;
  /** Adopts and resumes sessions of the served jobs whose loop or heartbeat outlived its process. */
  resumer?: SessionResumer;
  identity?: ProcessIdentity;
  /** How long a claim stays valid without renewal (default 60 s; renewed every third of it). */
  leaseMs?: number;
  /** On stop, how long current runs may finish before they are interrupted (default 10 s). */
  graceMs?: number;
  /** How often other daemons' live claims are checked for a dead holder while there are any (default 250 ms). */
  reclaimPollMs?: number;
  /** How often the store is checked for stale claims otherwise (default 30 s). */
  scanMs?: number;
  /** Reload job files when they change on disk (default true). */
  watch?: boolean;
  /** After the store stayed unavailable past store.retry, how long to pause before trying again (default 1 s). */
  outagePauseMs?: number;
  /** Told of a slot recorded crashed because its holder died (on_crash: skip), e.g. to drop its queued run. */
  onSlotCrashed?: (job: string, slot: number) => Promise<void>;
}

const RELOAD_SETTLE_MS = 200;
const MAX_SLEEP_MS = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

export class Daemon {
  #o: Required<Omit<DaemonOptions, "identity" | "resumer" | "onSlotCrashed">>;
  #onSlotCrashed: (job: string, slot: number) => Promise<void>;
  #resumer: SessionResumer | undefined;
  #resuming = new Map<string, InFlight>();
  #holder: ProcessIdentity;
  #entries = new Map<string, ScheduledEntry>();
  #runs: ClaimedRuns;
  #waker = new AbortController();
  #reloadAt: number | null = null;
  #nextScanAt = 0;
  #nextRenewAt = Infinity;
  #nextAdoptAt = 0;
  /** Slots this daemon queued (`schedule.overlap: queue`), waiting for the job's previous run to end. */
  #queued: { job: string; slot: number }[] = [];
  #nextQueueAt = Infinity;

  /** Loads the jobs; throws a ValidationError naming the file when one is invalid. */
  constructor(options: DaemonOptions) {
    this.#o = {
      leaseMs: 60_000,
      graceMs: 10_000,
      reclaimPollMs: 250,
      scanMs: 30_000,
      watch: true,
      outagePauseMs: 1_000,
      ...options,
    };
    this.#holder = options.identity ?? currentProcess();
    this.#resumer = options.resumer;
    this.#onSlotCrashed = options.onSlotCrashed ?? (() => Promise.resolve());
    this.#runs = new ClaimedRuns({
      ...options,
      holder: this.#holder,
      // A run that ended may be what a queued slot waits for: look at once.
      onRecorded: () => {
        if (this.#queued.length === 0) return;
        this.#nextQueueAt = 0;
        this.#waker.abort();
      },
    });
    for (const job of loadScheduledJobs(options.paths)) this.#entries.set(job.name, { job, next: null });
  }

  get holder(): ProcessIdentity {
    return this.#holder;
  }

  /** Slots whose runs are in flight here (started, not yet recorded). */
  get inFlight(): number {
    return this.#runs.size;
  }

  /** The jobs served now, with their next slot. */
  jobs(): { job: ScheduledJob; next: number | null }[] {
    return [...this.#entries.values()].map((e) => ({ job: e.job, next: e.next }));
  }

  /** Serves the schedules until `signal` aborts, then stops cleanly (see `graceMs`). */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, log } = this.#o;
    const watch = this.#o.watch
      ? watchJobFiles(this.#o.paths, () => {
        // Editors write in several steps: reload once the writes settle.
        this.#reloadAt = clock.now() + RELOAD_SETTLE_MS;
        this.#waker.abort();
      }, log)
      : null;
    try {
      // Catching up (again after the store was unavailable) comes before serving slots.
      let catchUp = true;
      let announced = false;
      while (!signal.aborted) {
        try {
          if (catchUp) {
            // Dead claims first: a restarted daemon settles its predecessor's slots by on_crash before
            // catch-up or the next slot could supersede them (recorded `abandoned` instead).
            await this.#scan(clock.now());
            await this.#catchUp(clock.now());
            catchUp = false;
            if (!announced) {
              log.info(
                `daemon serving ${this.#entries.size} scheduled job(s) as ${this.#holder.host}:${this.#holder.pid}`,
              );
            } else log.info("the store is back: serving the schedules again");
            announced = true;
          }
          const now = clock.now();
          if (this.#reloadAt !== null && now >= this.#reloadAt) {
            this.#reloadAt = null;
            this.#entries = reloadJobs(this.#entries, this.#o.paths, now, log) ?? this.#entries;
          }
          await this.#startDue(now);
          if (now >= this.#nextScanAt) await this.#scan(now);
          if (now >= this.#nextRenewAt) await this.#renew(now);
          if (now >= this.#nextQueueAt) await this.#startQueued(now);
          await this.#sleepUntil(this.#nextWake(), signal);
        } catch (error) {
          // A store outage longer than store.retry stops no daemon: it waits, then catches up the slots
          // it missed as each job's catch_up says (and settles dead claims by on_crash) once it is back.
          if (!(error instanceof StoreUnavailableError)) throw error;
          log.warn(`${errorMessage(error)}; the daemon keeps running and tries again`);
          catchUp = true;
          announced = true;
          await this.#sleepUntil(clock.now() + this.#o.outagePauseMs, signal);
        }
      }
    } finally {
      await watch?.close();
      await this.#runs.stop(this.#o.graceMs, [...this.#resuming.values()]);
      await this.#dropQueued();
    }
  }

  async #catchUp(now: number): Promise<void> {
    const claims: SlotClaim[] = [];
    for (const entry of this.#entries.values()) {
      const { job } = entry;
      entry.next = job.slots.nextAfter(now);
      const plan = catchUpPlan({
        latest: job.slots.latestAtOrBefore(now),
        last_recorded: await this.#o.store.lastRecordedSlot(job.name),
        now,
        catch_up: job.catch_up,
      });
      if (plan.action === "due") entry.next = plan.slot;
      else if (plan.action === "run") {
        claims.push({
          job: job.name,
          slot: plan.slot,
          note: "catch-up",
          overlap: job.schedule.overlap ?? "skip",
        });
      } else if (plan.action === "skip") {
        const note = "missed while no daemon was running (catch_up: none)";
        await this.#o.store.recordSkipped({ job: job.name, slot: plan.slot, note }, this.#holder, now);
        this.#o.log.info(`${job.name}: slot ${iso(plan.slot)} was missed; not run (catch_up: none)`);
      }
    }
    await this.#claimAndStart(claims, now);
  }

  async #startDue(now: number): Promise<void> {
    const due = [...this.#entries.values()].filter((e) => e.next !== null && e.next <= now);
    if (due.length === 0) return;
    const claims = due.map((e) => ({
      job: e.job.name,
      slot: dueSlot(e.next!, now, e.job.slots.latestAtOrBefore),
      overlap: e.job.schedule.overlap ?? "skip",
    }));
    await this.#claimAndStart(claims, now);
    for (const entry of due) entry.next = entry.job.slots.nextAfter(now);
  }

  async #claimAndStart(claims: SlotClaim[], now: number): Promise<void> {
    if (claims.length === 0) return;
    const outcomes = await this.#o.store.claimSlots(claims, this.#holder, { now, lease_ms: this.#o.leaseMs });
    outcomes.forEach((outcome, i) => {
      const claim = claims[i]!;
      if (outcome.outcome === "claimed") {
        if (outcome.cancelled) {
          this.#o.log.warn(
            `${claim.job}: slot ${iso(claim.slot)} came due; cancelling the run of ${
              iso(outcome.cancelled.slot)
            } (schedule.overlap: cancel_previous)`,
          );
          // Held here: interrupted now; held by another daemon: it finds the claim gone at its next renewal.
          if (outcome.cancelled.holder_nonce === this.#holder.nonce) {
            this.#runs.cancel(claim.job, outcome.cancelled.slot, "a newer slot replaced it");
          }
        }
        this.#start(claim.job, claim.slot);
      } else if (outcome.outcome === "taken") {
        this.#nextScanAt = Math.min(this.#nextScanAt, now + this.#o.reclaimPollMs);
      } else if (outcome.outcome === "queued") {
        this.#o.log.info(
          `${claim.job}: slot ${iso(claim.slot)} queued: the run of ${
            iso(outcome.running_slot)
          } is still going (schedule.overlap: queue)`,
        );
        this.#queued.push({ job: claim.job, slot: claim.slot });
        this.#nextQueueAt = Math.min(this.#nextQueueAt, now + this.#o.reclaimPollMs);
      } else {
        this.#o.log.warn(
          `${claim.job}: slot ${iso(claim.slot)} skipped: the run of ${
            iso(outcome.running_slot)
          } is still going`,
        );
      }
    });
  }

  #start(name: string, slot: number): void {
    const entry = this.#entries.get(name);
    if (!entry) return;
    this.#runs.start({ job: name, path: entry.job.path, slot });
    this.#nextRenewAt = Math.min(this.#nextRenewAt, this.#o.clock.now() + this.#o.leaseMs / 3);
  }

  /** Takes over slots whose holder died or went silent; polls fast while other daemons hold live claims. */
  async #scan(now: number): Promise<void> {
    let foreign = false;
    for (const row of await this.#o.store.liveClaims()) {
      if (row.holder_nonce === this.#holder.nonce) continue;
      foreign = true;
      const entry = this.#entries.get(row.job);
      if (!entry || !isStaleClaim(row, { now, host: this.#holder.host })) continue;
      // By default a crashed slot is recorded, never started twice; `rerun` opts into a takeover.
      const on_crash = entry.job.schedule.on_crash ?? "skip";
      const lease = { now, lease_ms: this.#o.leaseMs, on_crash };
      const from = `${row.holder_host}:${row.holder_pid}`;
      if (await this.#o.store.takeOverClaim(row, this.#holder, lease)) {
        this.#o.log.warn(`${row.job}: taking over slot ${iso(row.slot)} from ${from}`);
        this.#start(row.job, row.slot);
      } else if (on_crash === "skip" && row.status === "running") {
        this.#o.log.warn(
          `${row.job}: slot ${iso(row.slot)} stopped with ${from}; not run again (on_crash: skip)`,
        );
        await this.#onSlotCrashed(row.job, row.slot);
      }
    }
    this.#nextScanAt = now + (foreign ? this.#o.reclaimPollMs : this.#o.scanMs);
    if (this.#resumer && now >= this.#nextAdoptAt) {
      await this.#adoptOrphans();
      this.#nextAdoptAt = now + this.#o.scanMs;
    }
  }

  /** Resumes sessions of served jobs whose owner died while their loop or heartbeat was active. */
  async #adoptOrphans(): Promise<void> {
    const resumer = this.#resumer!;
    for (const session of await this.#o.store.orphanedSessions(RECURRING_KEYS)) {
      if (!hasActiveRecurring(session.state)) continue;
      const entry = this.#entries.get(session.job);
      if (!entry || this.#resuming.has(session.id)) continue;
      if (!(await this.#o.store.adoptSession(session.id, { expected: session, holder: this.#holder }))) {
        continue;
      }
      this.#o.log.warn(`${session.job}: resuming session ${session.id}, whose loop outlived its process`);
      const controller = new AbortController();
      const done = resumer({ session_id: session.id, job: session.job, path: entry.job.path }, {
        signal: controller.signal,
      }).then(
        (result) => this.#o.log.info(`${session.job}: resumed session ${session.id} ended ${result.status}`),
        (error) =>
          this.#o.log.warn(`${session.job}: resuming session ${session.id} failed: ${errorMessage(error)}`),
      ).finally(() => this.#resuming.delete(session.id));
      this.#resuming.set(session.id, { controller, done });
    }
  }

  /** Starts queued slots whose job's previous run ended (here or in another daemon); polls while any wait. */
  async #startQueued(now: number): Promise<void> {
    const { started, waiting } = await this.#o.store.startQueued(this.#queued, this.#holder, {
      now,
      lease_ms: this.#o.leaseMs,
    });
    this.#queued = waiting;
    for (const run of started) {
      this.#o.log.info(`${run.job}: starting queued slot ${iso(run.slot)}; the previous run ended`);
      this.#start(run.job, run.slot);
    }
    // The poll also keeps the waiting rows' leases fresh (well within leaseMs).
    this.#nextQueueAt = waiting.length
      ? now + Math.min(this.#o.reclaimPollMs, this.#o.leaseMs / 3)
      : Infinity;
  }

  /** On stop: slots still queued never start here; recorded skipped, so the history says why. */
  async #dropQueued(): Promise<void> {
    if (this.#queued.length === 0) return;
    const now = this.#o.clock.now();
    const note = "skipped: the daemon stopped before the queued slot could start (schedule.overlap: queue)";
    await this.#o.store.finishRuns(this.#queued.map((claim) => ({
      claim,
      holder: this.#holder,
      outcome: { status: "skipped", session_id: null, now, note },
    })));
    this.#queued = [];
  }

  async #renew(now: number): Promise<void> {
    if (this.#runs.size > 0) await this.#runs.renew(now, this.#o.leaseMs);
    this.#nextRenewAt = this.#runs.size > 0 ? now + this.#o.leaseMs / 3 : Infinity;
  }

  #nextWake(): number {
    let at = Math.min(this.#nextScanAt, this.#nextRenewAt, this.#nextQueueAt, this.#reloadAt ?? Infinity);
    for (const entry of this.#entries.values()) if (entry.next !== null && entry.next < at) at = entry.next;
    return at;
  }

  async #sleepUntil(at: number, signal: AbortSignal): Promise<void> {
    const ms = Math.min(Math.max(0, at - this.#o.clock.now()), MAX_SLEEP_MS);
    if (this.#waker.signal.aborted) this.#waker = new AbortController();
    try {
      await this.#o.clock.sleep(ms, AbortSignal.any([signal, this.#waker.signal]));
    } catch {
      // woken early: reload requested or stopping
    }
  }
}
