/**
 * The HTTP API as a Hono app over the App: routes onto its operations, bearer tokens with scopes, bounded
 * bodies, per-token rate limits, and every error as problem+json (problem.ts). The transport (Deno.serve,
 * signals) is `serve.ts`'s; this part answers Requests, so it is tested without a socket as well.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { routePath } from "hono/route";
import type { App } from "../app/mod.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { type ApiEnv, RateLimiter, requireScope } from "./auth.ts";
import { HttpMetrics } from "./metrics.ts";
import { problem, problemOf, statusOf } from "./problem.ts";
import { jsonBody, parse, rawBody } from "./body.ts";
import { runRoutes } from "./runs.ts";
import { hookRoutes } from "./hooks.ts";
import { approvalRoutes } from "./approvals.ts";
import { PromptBody, RUN_STATUSES, SessionQuery } from "./schemas.ts";
import { openApiDocument } from "./openapi.ts";
import { OpenStreams } from "./streams.ts";
import type { Wakeups } from "../core/wakeups.ts";

export interface ApiOptions {
  app: App;
  clock: Clock;
  log: Logger;
  version: string;
  /** Largest accepted request body (bytes); a larger one is 413. */
  maxBodyBytes?: number;
  /** Requests a minute per token; over it, 429 with Retry-After. */
  rateLimit?: number;
  /** The folder POST /v1/runs names jobs in. */
  jobsDir?: string;
  /** Event streams open at once per token (default 8). */
  maxStreams?: number;
  /** Aborted when the server stops: event streams end with a last event. */
  signal?: AbortSignal;
  /** How long a client may take to send a request body (ms); slower is 408. */
  bodyTimeoutMs?: number;
  /** The event streams open here (the caller waits for them on shutdown). */
  streams?: OpenStreams;
  /**
   * Notified with a run's id when its events were stored or it ended: by this process's queue worker, and
   * by any process on a store that notifies (PostgreSQL).
   */
  runEvents?: Wakeups;
  /** How often an event stream looks at the store when nothing woke it (ms; default 200, 5 s on PostgreSQL). */
  streamPollMs?: number;
  /** How long an event stream may send nothing before it sends a `: ping` comment (ms; default 15 s). */
  pingMs?: number;
  /** Answers every path outside the API's (the web console): without it they are 404 problems. */
  console?: { fetch(request: Request): Response | Promise<Response> };
}

export const DEFAULT_MAX_BODY = 1024 * 1024;
export const DEFAULT_RATE_LIMIT = 600;
export const DEFAULT_MAX_STREAMS = 8;
export const DEFAULT_BODY_TIMEOUT = 30_000;
export const DEFAULT_PING = 15_000;

/** The API's routes; `metrics` counts what it answers. */
export function createApi(options: ApiOptions): Hono<ApiEnv> {
  const { app, log } = options;
  const limiter = new RateLimiter({
    perMinute: options.rateLimit ?? DEFAULT_RATE_LIMIT,
    clock: options.clock,
  });
  const metrics = new HttpMetrics();
  const scope = (name: Parameters<typeof requireScope>[1]) => requireScope(app, name, limiter);
  const api = new Hono<ApiEnv>();
  const bodyDeadline = { ms: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT, clock: options.clock };

  api.use(async (c, next) => {
    await next();
    metrics.count(c.req.method, routePath(c), c.res.status);
    // A problem's detail may quote what the client sent (a run id, a job name): never sniffed as HTML. The
    // API's answers are one token's view: no cache keeps them unless a route says otherwise.
    if (!c.res.headers.has("x-content-type-options")) c.res.headers.set("x-content-type-options", "nosniff");
    if (c.req.path.startsWith("/v1/") && !c.res.headers.has("cache-control")) {
      c.res.headers.set("cache-control", "no-store");
    }
  });
  // Every path, the console's forms too (its sign-in takes a body before any token): a body over the limit
  // is refused as it arrives, not read whole.
  api.use(
    bodyLimit({
      maxSize: options.maxBodyBytes ?? DEFAULT_MAX_BODY,
      onError: (c) =>
        problem(413, `The body is over ${options.maxBodyBytes ?? DEFAULT_MAX_BODY} bytes`, {
          instance: c.req.path,
        }),
    }),
  );
  api.notFound((c) => problem(404, `No route ${c.req.method} ${c.req.path}`, { instance: c.req.path }));
  api.onError((error, c) => {
    if (statusOf(error) === 500) log.error(`${c.req.method} ${c.req.path}: ${error.stack ?? error}`);
    return problemOf(error, c.req.path);
  });

  api.get("/healthz", (c) => c.json({ status: "ok", version: options.version }));
  api.get("/readyz", async (c) => {
    try {
      await app.list({ limit: 1 });
      return c.json({ status: "ready" });
    } catch (error) {
      return problem(503, `The store is not reachable: ${error instanceof Error ? error.message : error}`);
    }
  });
  api.get("/metrics", async (c) => {
    const [runs, spend] = await Promise.all([app.runCounts(), app.spendByModel()]);
    const byModel = (value: (g: (typeof spend)[number]) => number): [Record<string, string>, number][] =>
      spend.map((g) => [{ model: g.keys[0] ?? "unknown" }, value(g)]);
    const text = metrics.render([
      {
        name: "hermes_runs",
        help: "Runs in the store by status (queued is the queue's depth).",
        type: "gauge",
        values: RUN_STATUSES.map((status) => [{ status }, runs[status] ?? 0]),
      },
      {
        name: "hermes_model_calls_total",
        help: "Model calls the store recorded, by model.",
        type: "counter",
        values: byModel((g) => g.calls),
      },
      {
        name: "hermes_model_tokens_total",
        help: "Tokens of the recorded model calls, by model and kind (input, output).",
        type: "counter",
        values: spend.flatMap((g) => [
          [{ model: g.keys[0] ?? "unknown", kind: "input" }, g.input_tokens] as [
            Record<string, string>,
            number,
          ],
          [{ model: g.keys[0] ?? "unknown", kind: "output" }, g.output_tokens] as [
            Record<string, string>,
            number,
          ],
        ]),
      },
      {
        name: "hermes_cost_usd_total",
        help: "USD of the recorded model calls with a known price, by model.",
        type: "counter",
        values: byModel((g) => g.cost_usd),
      },
      {
        name: "hermes_sessions_open",
        help: "Sessions open in this server.",
        type: "gauge",
        values: [[{}, app.sessions().length]],
      },
    ]);
    return c.text(text, 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });

  const document = openApiDocument(options.version);
  api.get("/v1/openapi.json", (c) => c.json(document));

  api.get("/v1/sessions", scope("sessions:read"), async (c) => {
    const query = parse(SessionQuery, c.req.query(), "query");
    const sessions = await app.list({
      ...(query.job !== undefined ? { job: query.job } : {}),
      ...(query.status !== undefined ? { status: query.status } : {}),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
      ...(query.archived === "true" ? { archived: true } : {}),
    });
    return c.json({ sessions });
  });
  api.get("/v1/sessions/:id", scope("sessions:read"), async (c) => {
    const { messages: _messages, ...view } = await app.get(c.req.param("id"));
    return c.json(view);
  });
  api.get("/v1/sessions/:id/messages", scope("sessions:read"), async (c) => {
    const { session, messages } = await app.transcript(c.req.param("id"));
    return c.json({ session_id: session.id, messages });
  });
  api.post("/v1/sessions/:id/prompt", scope("sessions:write"), async (c) => {
    const body = parse(PromptBody, await jsonBody(c.req.raw, bodyDeadline), "body");
    const outcome = await app.prompt(c.req.param("id"), body.text);
    if (outcome.refused) throw outcome.refused;
    return c.json(outcome.result);
  });

  runRoutes(api, {
    app,
    clock: options.clock,
    jobsDir: options.jobsDir,
    scope,
    maxStreams: options.maxStreams ?? DEFAULT_MAX_STREAMS,
    streams: options.streams ?? new OpenStreams(),
    bodyDeadline,
    signal: options.signal ?? new AbortController().signal,
    pollMs: options.streamPollMs ?? (app.storeNotifies ? 5_000 : 200),
    pingMs: options.pingMs ?? DEFAULT_PING,
    ...(options.runEvents ? { runEvents: options.runEvents } : {}),
  });

  hookRoutes(api, { app, clock: options.clock, jobsDir: options.jobsDir, bodyDeadline });

  approvalRoutes(api, { app, scope, bodyDeadline });

  const web = options.console;
  if (web) {
    // Registered last: the API's routes answer first, and an unknown /v1 path stays a problem+json 404.
    api.all("*", async (c) => {
      if (c.req.path === "/v1" || c.req.path.startsWith("/v1/")) {
        return problem(404, `No route ${c.req.method} ${c.req.path}`, { instance: c.req.path });
      }
      let request = c.req.raw;
      if (request.body !== null) {
        // A form is read here within the body timeout, as the API's bodies are (a client trickling a sign-in
        // body holds nothing open for longer); the console gets it whole.
        const bytes = await rawBody(request, bodyDeadline);
        request = new Request(request.url, {
          method: request.method,
          headers: request.headers,
          body: bytes as Uint8Array<ArrayBuffer>,
          signal: request.signal,
        });
      }
      return await web.fetch(request);
    });
  }

  return api;
}
