/**
 * `POST /v1/hooks/{job}`: a signed delivery (GitHub's webhooks, or any sender signing as Hermes's own
 * notifications do) starts a run of a job with `triggers.webhook`. The signature over the raw body is the
 * authentication, so the route takes no bearer token. A delivery already seen answers the run it started
 * (the queue's idempotency key `hook:JOB:…`, from what the signature covers), an event the trigger does not list is acknowledged and starts
 * nothing, and the inputs mapped from the body are checked as `--input` values are (422 when they do not fit).
 */
import { createHash } from "node:crypto";
import type { Hono } from "hono";
import { type App, NotFoundError, ValidationError } from "../app/mod.ts";
import type { Clock } from "../core/clock.ts";
import { renderTriggerInputs } from "../config/trigger_inputs.ts";
import type { ApiEnv } from "./auth.ts";
import { type BodyDeadline, parseJson, rawBody } from "./body.ts";
import { HttpError, problem } from "./problem.ts";
import { namedJob, publicRun } from "./runs.ts";
import { verifySignature } from "./signature.ts";

export interface HookRoutesOptions {
  app: App;
  clock: Clock;
  jobsDir: string | undefined;
  bodyDeadline: BodyDeadline;
}

const DELIVERY = /^[A-Za-z0-9_.:-]{1,200}$/;

export function hookRoutes(api: Hono<ApiEnv>, options: HookRoutesOptions): void {
  const { app } = options;

  api.post("/v1/hooks/:job", async (c) => {
    const name = c.req.param("job");
    const instance = c.req.path;
    const path = await namedJob(options.jobsDir, name, "job");
    const hook = await app.webhook(path);
    if (hook === undefined) {
      throw new HttpError(404, `Job "${name}" has no webhook trigger (triggers.webhook in its file)`);
    }
    if (hook.secret === undefined || hook.secret === "") {
      // The server's configuration, not the sender's fault: logged here, a plain 500 to the sender.
      throw new Error(
        `Cannot verify deliveries of job "${name}": ${hook.trigger.secret_env} is not set in the server's environment`,
      );
    }
    const headers = c.req.raw.headers;
    const body = await rawBody(c.req.raw, options.bodyDeadline);
    const kind = hook.trigger.signature ?? "github";
    const verdict = await verifySignature(kind, {
      secret: hook.secret,
      headers,
      body,
      now: options.clock.now(),
    });
    if (!verdict.ok) return problem(401, `Cannot authenticate the delivery: ${verdict.reason}`, { instance });

    const github = kind === "github";
    const event = headers.get(github ? "x-github-event" : "x-hermes-event") ?? "";
    const events = hook.trigger.events;
    if (events !== undefined && !events.includes(event)) {
      return c.json({
        status: "ignored",
        event,
        reason: `job "${name}" is not triggered by ${event === "" ? "a delivery without an event" : event}`,
      });
    }
    const delivery = headers.get(github ? "x-github-delivery" : "x-hermes-delivery");
    if (delivery !== null && !DELIVERY.test(delivery)) {
      throw new HttpError(400, `The delivery id "${delivery.slice(0, 200)}" is not letters, digits, _ . : -`);
    }
    const { payload, text } = parsePayload(headers.get("content-type") ?? "", body);
    // The run's idempotency key. GitHub signs only the body (not X-GitHub-Delivery, not the event, no time):
    // keyed by the signed payload, a captured delivery sent again under a new id, or as another event, answers
    // the run it started instead of starting one (a Redeliver sends the same payload, so it dedupes too). The
    // generic form signs a timestamp that bounds a replay to minutes: keyed by its delivery id (a retry has a
    // new timestamp), or without one by what was signed.
    const signed = github || delivery === null
      ? `sha256-${sha256Hex(github ? text : `${headers.get("x-hermes-timestamp")}.${text}`)}`
      : delivery;
    let submitted: Awaited<ReturnType<App["submit"]>>;
    try {
      const inputs = renderTriggerInputs(hook.trigger.inputs ?? {}, { body: payload, event });
      submitted = await app.submit({
        job: path,
        ...(options.jobsDir !== undefined ? { cwd: options.jobsDir } : {}),
        inputs,
        trigger: "webhook",
        // The file's name, unique in the jobs folder (two files may carry the same name: inside).
        key: `hook:${name}:${signed}`,
      });
    } catch (error) {
      // The delivery was authentic but does not make a run of this job: its inputs do not fit (or the job
      // is beyond the trust policy). Nothing was queued.
      if (error instanceof ValidationError && !(error instanceof NotFoundError)) {
        throw new HttpError(422, error.message);
      }
      throw error;
    }
    const { run, deduplicated } = submitted;
    return c.json({ ...publicRun(run), deduplicated }, 202, { location: `/v1/runs/${run.id}` });
  });
}

/** The delivery's JSON: the body, or its `payload` field when the sender posts a form (GitHub can). */
function parsePayload(type: string, body: Uint8Array): { payload: unknown; text: string } {
  if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
    const field = new URLSearchParams(new TextDecoder().decode(body)).get("payload");
    if (field === null) throw new HttpError(400, "The form body has no payload field");
    return { payload: parseJson(new TextEncoder().encode(field)), text: field };
  }
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw new HttpError(
      415,
      `Expected a JSON body (content-type: application/json), got "${type || "none"}"`,
    );
  }
  return { payload: parseJson(body), text: new TextDecoder().decode(body) };
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
