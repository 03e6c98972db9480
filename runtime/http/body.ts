/** Request bodies and query strings, read and validated with the routes' zod schemas; a refusal is 400/415. */
import type { z } from "zod";
import { HttpError } from "./problem.ts";

/** The request's JSON body; anything else is a 4xx naming what was wrong. */
export async function jsonBody(request: Request): Promise<unknown> {
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

/** `value` as `schema` reads it; the first issue is a 400 naming where (`body.inputs.x: …`). */
export function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.length ? `.${issue.path.join(".")}` : "";
  throw new HttpError(400, `${where}${path}: ${issue.message}`);
}
