/**
 * The run routes: submit a job to the queue (by name from the server's jobs folder, or inline for `admin`),
 * list and read runs, cancel one, and stream its stored events as Server-Sent Events. Events are read from
 * the store (where the worker that runs it writes them), so any server sharing the store can stream any run;
 * `Last-Event-ID` (each event's `id:` is its `seq`) resumes after the last one the client saw.
 */
import type { Hono, MiddlewareHandler } from "hono";
import { streamSSE } from "hono/streaming";
import type { App, QueuedRun } from "../app/mod.ts";
import type { Clock } from "../core/clock.ts";
import type { ApiEnv } from "./auth.ts";
import { HttpError, problem } from "./problem.ts";
import { type BodyDeadline, jsonBody, parse } from "./body.ts";
import { RunQuery, SubmitBody } from "./schemas.ts";
import type { OpenStreams } from "./streams.ts";
import type { Wakeups } from "../core/wakeups.ts";

export interface RunRoutesOptions {
  app: App;
  clock: Clock;
  /** The folder job names resolve in (`--jobs DIR`); without it only admins' inline jobs can be submitted. */
  jobsDir: string | undefined;
  scope: (name: "runs:read" | "runs:write") => MiddlewareHandler<ApiEnv>;
  /** Event streams open at once per token; one more is 429. */
  maxStreams: number;
  streams: OpenStreams;
  /** How long a client may take to send a request body. */
  bodyDeadline: BodyDeadline;
  /** How often a stream looks for new events when nothing woke it (ms). */
  pollMs: number;
  /** A stream with nothing to send for this long sends a comment (`: ping`), so proxies keep it open (ms). */
  pingMs: number;
  /**
   * Notified with a run's id when events of it were stored or it ended: by this process's own queue worker,
   * and on a store that notifies (PostgreSQL) by any process. Its streams look at once instead of at their
   * next poll, which stays as the way of a SQLite store and a fallback.
   */
  runEvents?: Wakeups;
  /** Aborted when the server stops: open streams end. */
  signal: AbortSignal;
}

const JOB_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** A run as the API shows it (as `hermes runs show --json`): without its job snapshot. */
export function publicRun(run: QueuedRun): Omit<QueuedRun, "job_snapshot"> {
  const { job_snapshot: _snapshot, ...rest } = run;
  return rest;
}

export function runRoutes(api: Hono<ApiEnv>, options: RunRoutesOptions): void {
  const { app, scope, streams } = options;

  api.post("/v1/runs", scope("runs:write"), async (c) => {
    const body = parse(SubmitBody, await jsonBody(c.req.raw, options.bodyDeadline), "body");
    const token = c.get("token");
    let job: string | Record<string, unknown>;
    if (typeof body.job === "string") {
      job = await namedJob(options.jobsDir, body.job);
    } else {
      if (!token.scopes.includes("admin")) {
        throw new HttpError(
          403,
          `An inline job needs a token with the admin scope (token ${token.id} has not)`,
        );
      }
      job = body.job;
    }
    const { run, deduplicated } = await app.submit({
      job,
      ...(options.jobsDir !== undefined ? { cwd: options.jobsDir } : {}),
      ...(body.inputs ? { inputs: body.inputs } : {}),
      ...(body.key !== undefined ? { key: body.key } : {}),
      ...(body.priority !== undefined ? { priority: body.priority } : {}),
      trigger: "api",
    });
    return c.json({ ...publicRun(run), deduplicated }, 202, { location: `/v1/runs/${run.id}` });
  });

  api.get("/v1/runs", scope("runs:read"), async (c) => {
    const query = parse(RunQuery, c.req.query(), "query");
    const runs = await app.runs({
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.job !== undefined ? { job: query.job } : {}),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
    });
    return c.json({ runs: runs.map(publicRun) });
  });

  api.get(
    "/v1/runs/:id",
    scope("runs:read"),
    async (c) => c.json(publicRun(await app.getRun(c.req.param("id")))),
  );

  api.post("/v1/runs/:id/cancel", scope("runs:write"), async (c) => {
    return c.json(publicRun(await app.cancelRun(c.req.param("id"))), 202);
  });

  api.get("/v1/runs/:id/events", scope("runs:read"), async (c) => {
    const run = await app.getRun(c.req.param("id"));
    const after = lastEventId(c.req.header("last-event-id") ?? c.req.query("after"));
    const token = c.get("token");
    const open = streams.count(token.id);
    if (open >= options.maxStreams) {
      return problem(429, `Token ${token.id} has ${open} event streams open, the most it may`, {
        instance: c.req.path,
        headers: { "retry-after": "1" },
      });
    }
    streams.open(token.id);
    return streamSSE(c, async (stream) => {
      const done = new AbortController();
      stream.onAbort(() => done.abort());
      const stop = AbortSignal.any([done.signal, options.signal]);
      let seq = after;
      let lastWrite = options.clock.now();
      try {
        for (;;) {
          // Watched before the look, so news stored between the look and the sleep still wakes it.
          const news = options.runEvents?.watch(run.id);
          try {
            if (await nextEvents(news?.signal)) return;
          } finally {
            news?.release();
          }
          if (done.signal.aborted) return;
          if (options.signal.aborted) {
            await stream.writeSSE({ event: "end", data: JSON.stringify({ reason: "server_stopping" }) });
            return;
          }
        }
      } finally {
        streams.close(token.id);
      }

      /** Writes the events stored since the last look, then sleeps; true once the stream is over. */
      async function nextEvents(news: AbortSignal | undefined): Promise<boolean> {
        const rows = await app.runEvents(run.id, seq);
        for (const row of rows) {
          const event = row.event as { type?: unknown };
          await stream.writeSSE({
            id: String(row.seq),
            event: typeof event.type === "string" ? event.type : "event",
            data: JSON.stringify(row.event),
          });
          seq = row.seq;
          lastWrite = options.clock.now();
          if (event.type === "result") return true;
        }
        if (rows.length === 0) {
          // No event since the last look: the run may have ended without a result (never started,
          // cancelled while queued, its worker died); then the stream says so and ends.
          const now = await app.getRun(run.id);
          if (hasEnded(now) && (await app.runEvents(run.id, seq)).length === 0) {
            await stream.writeSSE({ event: "end", data: JSON.stringify(publicRun(now)) });
            return true;
          }
        }
        const quiet = options.clock.now() - lastWrite;
        if (quiet >= options.pingMs) {
          // A comment line: EventSource ignores it; proxies and load balancers see a live connection.
          await stream.write(": ping\n\n");
          lastWrite = options.clock.now();
        }
        const wake = news ? AbortSignal.any([stop, news]) : stop;
        const nap = Math.min(options.pollMs, options.pingMs - (options.clock.now() - lastWrite));
        if (!wake.aborted) await options.clock.sleep(Math.max(0, nap), wake).catch(() => {});
        return false;
      }
    });
  });
}

const ENDED = new Set(["success", "failed", "limit", "interrupted", "cancelled", "crashed"]);

function hasEnded(run: QueuedRun): boolean {
  return ENDED.has(run.status);
}

function lastEventId(text: string | undefined): number {
  if (text === undefined || text === "") return 0;
  // Past 2^53 a number is no seq any store holds, and PostgreSQL's bigint would refuse it mid-stream.
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new HttpError(400, `Last-Event-ID "${text.slice(0, 40)}" is not an event's seq (a whole number)`);
  }
  return Number(text);
}

/** The job file `name` names in the jobs folder: NAME.yaml or NAME.yml, nothing outside the folder. */
export async function namedJob(dir: string | undefined, name: string, field = "body.job"): Promise<string> {
  if (dir === undefined) {
    throw new HttpError(
      404,
      `Cannot find job "${name}": this server has no jobs folder (hermes serve --jobs DIR)`,
    );
  }
  if (!JOB_NAME.test(name) || name.includes("..")) {
    throw new HttpError(400, `${field}: "${name}" is not a job name (letters, digits, _ . -)`);
  }
  for (const ext of [".yaml", ".yml"]) {
    const path = `${dir}/${name}${ext}`;
    const info = await Deno.stat(path).catch(() => undefined);
    if (info?.isFile) return path;
  }
  throw new HttpError(404, `Cannot find job "${name}": no ${name}.yaml in the jobs folder`);
}
