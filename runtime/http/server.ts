/**
 * The HTTP API as a Hono app over the App: routes onto its operations, bearer tokens with scopes, bounded
 * bodies, per-token rate limits, and every error as problem+json (problem.ts). The transport (Deno.serve,
 * signals) is `serve.ts`'s; this part answers Requests, so it is tested without a socket as well.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { routePath } from "hono/route";
import { z } from "zod";
import type { App } from "../app/mod.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { type ApiEnv, RateLimiter, requireScope } from "./auth.ts";
import { HttpMetrics } from "./metrics.ts";
import { HttpError, problem, problemOf, statusOf } from "./problem.ts";

export interface ApiOptions {
  app: App;
  clock: Clock;
  log: Logger;
  version: string;
  /** Largest accepted request body (bytes); a larger one is 413. */
  maxBodyBytes?: number;
  /** Requests a minute per token; over it, 429 with Retry-After. */
  rateLimit?: number;
}

export const DEFAULT_MAX_BODY = 1024 * 1024;
export const DEFAULT_RATE_LIMIT = 600;

const PromptBody = z.object({ text: z.string().min(1) }).strict();
const SessionQuery = z.object({
  job: z.string().optional(),
  status: z.string().optional(),
  limit: z.coerce.number().int().positive().max(1000).optional(),
  archived: z.enum(["true", "false"]).optional(),
});

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

  api.use(async (c, next) => {
    await next();
    metrics.count(c.req.method, routePath(c), c.res.status);
  });
  api.use(
    "/v1/*",
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
  api.get("/metrics", (c) => {
    const text = metrics.render([
      {
        name: "hermes_sessions_open",
        help: "Sessions open in this server.",
        type: "gauge",
        values: [[{}, app.sessions().length]],
      },
    ]);
    return c.text(text, 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });

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
    const body = parse(PromptBody, await jsonBody(c.req.raw), "body");
    const outcome = await app.prompt(c.req.param("id"), body.text);
    if (outcome.refused) throw outcome.refused;
    return c.json(outcome.result);
  });

  return api;
}

/** The request's JSON body; anything else is a 400 naming what was wrong. */
async function jsonBody(request: Request): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw new HttpError(
      415,
      `Expected a JSON body (content-type: application/json), got "${type || "none"}"`,
    );
  }
  try {
    return JSON.parse(await request.text());
  } catch (error) {
    throw new HttpError(400, `The body is not JSON: ${error instanceof Error ? error.message : error}`);
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.length ? `.${issue.path.join(".")}` : "";
  throw new HttpError(400, `${where}${path}: ${issue.message}`);
}
