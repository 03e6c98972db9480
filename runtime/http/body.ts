/** Request bodies and query strings, read and validated with the routes' zod schemas; a refusal is 400/415. */
import type { z } from "zod";
import type { Clock } from "../core/clock.ts";
import { HttpError } from "./problem.ts";

/** How long a client may take to send its body, and the clock that times it. */
export interface BodyDeadline {
  ms: number;
  clock: Clock;
}

/**
 * The request's JSON body; anything else is a 4xx naming what was wrong. A body not received within the
 * deadline is 408: a client that stalls mid-body holds no handler for longer.
 */
export async function jsonBody(request: Request, deadline: BodyDeadline): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw new HttpError(
      415,
      `Expected a JSON body (content-type: application/json), got "${type || "none"}"`,
    );
  }
  return parseJson(await rawBody(request, deadline));
}

/**
 * JSON text in UTF-8 (RFC 8259), else a 400: bytes that are not UTF-8 are refused rather than read as U+FFFD,
 * so what a route validates is what the client sent.
 */
export function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError(400, "The body is not UTF-8 text");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `The body is not JSON: ${error instanceof Error ? error.message : error}`);
  }
}

/** The request's body as raw bytes (what a webhook signature is computed over), within the deadline. */
export async function rawBody(request: Request, deadline: BodyDeadline): Promise<Uint8Array> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      request.bytes(),
      deadline.clock.sleep(deadline.ms, timer.signal).then(() => {
        throw new HttpError(408, `The body did not arrive within ${deadline.ms} ms`);
      }),
    ]);
  } finally {
    timer.abort();
  }
}

/** `value` as `schema` reads it; the first issue is a 400 naming where (`body.inputs.x: …`). */
export function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.length ? `.${issue.path.join(".")}` : "";
  throw new HttpError(400, `${where}${path}: ${issue.message}`);
}
