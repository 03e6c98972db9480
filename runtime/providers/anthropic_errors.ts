/**
 * How a failed Messages API attempt is judged: retryable or not, a context overflow or not, one redacted line
 * naming it. Anthropic answers `{"type":"error","error":{"type":"overloaded_error",…}}` with HTTP 529 when it
 * is overloaded and 429 on rate limits, both with `retry-after`; a stream may carry the same object as an
 * `error` event after HTTP 200.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { Redactor } from "../core/redact.ts";
import { IncompleteStream } from "./anthropic_stream.ts";
import { failureKind, retryAfterMs } from "./overload.ts";
import { type Failure, httpStatusLine } from "./retry_call.ts";

/** "prompt is too long: 208310 tokens > 200000 maximum" */
const TOO_LONG = /prompt is too long|input is too long|too many tokens|context (window|length)/i;
const LIMIT = /> ?(\d+) maximum|maximum (?:of )?(\d+)/i;
/** The status an error type stands for when a stream carries it without one. */
const TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function judgeAnthropicError(error: unknown, context: { redact: Redactor; now: number }): Failure {
  const oneLine = (text: string) => {
    const line = context.redact(text).split("\n")[0]!.trim();
    return line.length > 300 ? `${line.slice(0, 297)}...` : line;
  };
  const plain = (detail: string, retryable: boolean): Failure => ({
    status: null,
    detail: oneLine(detail),
    kind: retryable ? "transient" : "fatal",
    contextOverflow: false,
    contextLimit: null,
  });
  if (error instanceof Anthropic.APIConnectionTimeoutError) return plain(`timed out: ${error.message}`, true);
  if (error instanceof Anthropic.APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return plain(`connection failed${cause}`, true);
  }
  if (error instanceof Anthropic.APIError) {
    const body = error.error as { error?: { type?: string; message?: string } } | undefined;
    const type = body?.error?.type ?? error.type ?? "";
    const message = body?.error?.message ?? error.apiMessage ?? "";
    const inStream = typeof error.status !== "number";
    const status = inStream ? TYPE_STATUS[type] ?? null : error.status as number;
    const contextOverflow = (status === 400 || status === 413) && TOO_LONG.test(message);
    const limit = LIMIT.exec(message);
    const http = httpStatusLine(status);
    const head = inStream ? `error event in the stream${http ? ` (${http})` : ""}` : http;
    const text = [type, message].filter((s) => s !== "").join(": ");
    const retryAfter = retryAfterMs(error.headers, context.now);
    return {
      status,
      detail: oneLine(text ? `${head} (${text})` : head),
      kind: status === null ? "fatal" : failureKind(status, type),
      contextOverflow,
      contextLimit: contextOverflow && limit ? Number(limit[1] ?? limit[2]) : null,
      // A retry-after of a 200 stream's headers is not about the error the stream carried.
      ...(retryAfter === undefined || inStream ? {} : { retryAfterMs: retryAfter }),
    };
  }
  // fetch raises TypeError when the connection drops while the body is read.
  const retryable = error instanceof TypeError || error instanceof IncompleteStream;
  return plain(error instanceof Error ? error.message : String(error), retryable);
}
