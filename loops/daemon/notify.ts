/**
 * Completion notifications of queued runs (`notify:`): when a run ends, each entry whose `on` names its
 * ending gets the run record with its result, as JSON. An HTTP delivery is signed (`X-Hermes-Signature-256:
 * sha256=` HMAC-SHA256 of `timestamp + "." + body` with the secret of `secret_env`, `X-Hermes-Timestamp`),
 * carries one delivery id across its retries (`X-Hermes-Delivery`), and is retried with back-off until it
 * is answered 2xx or `windowMs` has passed; a command gets the JSON on stdin, in Hermes's own environment.
 * Every attempt is recorded in the store. Deliveries run beside the worker, never in its way: each attempt
 * has a timeout, nothing a receiver does changes the run's result, and a stop abandons what is left.
 */
import type { Clock } from "../../runtime/core/clock.ts";
import { errorMessage } from "../../runtime/core/errors.ts";
import { hex, hmacSha256 } from "../../runtime/core/hmac.ts";
import { hostProgramEnv } from "../../runtime/core/host_env.ts";
import type { Logger } from "../../runtime/core/log.ts";
import type { NotifyEntry } from "../../runtime/config/job_schema.ts";
import type { QueuedRun, RunDelivery, RunQueueStore } from "../../runtime/store/store.ts";

export interface NotifierOptions {
  store: RunQueueStore;
  clock: Clock;
  log: Logger;
  /** Hermes's own environment: secrets (`secret_env`) and the environment of notify commands. */
  env: Record<string, string>;
  /** How long a delivery is retried (default 10 min). */
  windowMs?: number;
  /** First back-off (default 1 s; doubled each attempt, at most 60 s). */
  backoffMs?: number;
  /** One attempt's timeout (default 10 s). */
  attemptMs?: number;
}

/** The signature header's value: `sha256=` and the hex HMAC-SHA256 of `timestamp.body`. */
export async function signature(secret: string, timestamp: string, body: string): Promise<string> {
  return "sha256=" + hex(await hmacSha256(secret, `${timestamp}.${body}`));
}

/** The notify entries of the job a run was submitted with. */
export function notifyEntries(run: QueuedRun): NotifyEntry[] {
  try {
    return (JSON.parse(run.job_snapshot) as { spec?: { notify?: NotifyEntry[] } }).spec?.notify ?? [];
  } catch {
    return [];
  }
}

function jobDir(run: QueuedRun): string {
  try {
    return (JSON.parse(run.job_snapshot) as { dir?: string }).dir ?? Deno.cwd();
  } catch {
    return Deno.cwd();
  }
}

export class Notifier {
  #o: Required<NotifierOptions>;
  #inFlight = new Set<Promise<void>>();
  #stop = new AbortController();

  constructor(options: NotifierOptions) {
    this.#o = { windowMs: 600_000, backoffMs: 1_000, attemptMs: 10_000, ...options };
  }

  /** Starts the deliveries of a run that ended (its record as stored now); returns at once. */
  notify(run: QueuedRun): void {
    const event = `run.${run.status}`;
    notifyEntries(run).forEach((entry) => {
      if (entry.on && !entry.on.includes(run.status as never)) return;
      const delivery = this.#deliver(run, entry, event).catch((error) => {
        this.#o.log.warn(`run ${run.id}: notification failed: ${errorMessage(error)}`);
      }).finally(() => this.#inFlight.delete(delivery));
      this.#inFlight.add(delivery);
    });
  }

  /** Stops retrying; waits for the attempts under way (each bounded by its timeout). */
  async close(): Promise<void> {
    this.#stop.abort();
    await Promise.all([...this.#inFlight]);
  }

  async #deliver(run: QueuedRun, entry: NotifyEntry, event: string): Promise<void> {
    const { store, clock, log } = this.#o;
    const { job_snapshot: _snapshot, ...record } = run;
    const started = clock.now();
    const delivery: RunDelivery = {
      id: crypto.randomUUID(),
      run_id: run.id,
      target: entry.url ?? entry.command!.join(" "),
      event,
      status: "pending",
      attempts: 0,
      response_status: null,
      error: null,
      created_at: started,
      updated_at: started,
    };
    const body = JSON.stringify({ event, delivery_id: delivery.id, run: record });
    await store.recordDelivery(delivery);
    let wait = this.#o.backoffMs;
    for (;;) {
      const outcome = entry.url !== undefined
        ? await this.#post(entry, { id: delivery.id, event, body })
        : await this.#command(entry.command!, body, jobDir(run));
      delivery.attempts++;
      delivery.response_status = outcome.status;
      delivery.error = outcome.error;
      delivery.updated_at = clock.now();
      const last = outcome.ok || this.#stop.signal.aborted ||
        delivery.updated_at + wait - started > this.#o.windowMs;
      delivery.status = outcome.ok ? "delivered" : last ? "failed" : "pending";
      await store.recordDelivery(delivery);
      if (last) {
        if (!outcome.ok) log.warn(`run ${run.id}: ${event} to ${delivery.target} failed: ${outcome.error}`);
        return;
      }
      await clock.sleep(wait, this.#stop.signal).catch(() => {});
      if (this.#stop.signal.aborted) {
        // Not retried by another worker: the record says it was left.
        delivery.status = "failed";
        delivery.error = `${outcome.error}; the worker stopped before a retry`;
        delivery.updated_at = clock.now();
        await store.recordDelivery(delivery);
        return;
      }
      wait = Math.min(wait * 2, 60_000);
    }
  }

  async #post(
    entry: NotifyEntry,
    message: { id: string; event: string; body: string },
  ): Promise<{ ok: boolean; status: number | null; error: string | null }> {
    const timestamp = String(Math.floor(this.#o.clock.now() / 1000));
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "hermes",
      "x-hermes-event": message.event,
      "x-hermes-delivery": message.id,
      "x-hermes-timestamp": timestamp,
    };
    if (entry.secret_env !== undefined) {
      const secret = this.#o.env[entry.secret_env];
      if (secret === undefined) {
        return { ok: false, status: null, error: `secret_env ${entry.secret_env} is not set on this worker` };
      }
      headers["x-hermes-signature-256"] = await signature(secret, timestamp, message.body);
    }
    const timeout = AbortSignal.timeout(this.#o.attemptMs);
    try {
      const response = await fetch(entry.url!, {
        method: "POST",
        headers,
        body: message.body,
        signal: AbortSignal.any([timeout, this.#stop.signal]),
        redirect: "manual",
      });
      await response.body?.cancel();
      return response.ok
        ? { ok: true, status: response.status, error: null }
        : { ok: false, status: response.status, error: `HTTP ${response.status}` };
    } catch (error) {
      const why = timeout.aborted ? `no answer within ${this.#o.attemptMs} ms` : errorMessage(error);
      return { ok: false, status: null, error: why };
    }
  }

  async #command(
    argv: readonly string[],
    body: string,
    dir: string,
  ): Promise<{ ok: boolean; status: number | null; error: string | null }> {
    // A relative program path resolves against the job's directory, also the command's working directory.
    const program = argv[0]!.includes("/") && !argv[0]!.startsWith("/") ? `${dir}/${argv[0]}` : argv[0]!;
    try {
      const child = new Deno.Command(program, {
        args: argv.slice(1),
        cwd: dir,
        env: hostProgramEnv(this.#o.env),
        clearEnv: true,
        stdin: "piped",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const timer = new AbortController();
      const killed = this.#o.clock.sleep(this.#o.attemptMs, timer.signal).then(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* exited */ }
      }, () => {});
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(body)).catch(() => {});
      await writer.close().catch(() => {});
      const out = await child.output();
      timer.abort();
      await killed;
      if (out.success) return { ok: true, status: 0, error: null };
      const stderr = new TextDecoder().decode(out.stderr).trim().split("\n").at(-1) ?? "";
      return { ok: false, status: out.code, error: `exit ${out.code}${stderr ? `: ${stderr}` : ""}` };
    } catch (error) {
      return { ok: false, status: null, error: errorMessage(error) };
    }
  }
}
