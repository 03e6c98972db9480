/**
 * Errors as RFC 9457 problem details (`application/problem+json`), and the one map from the App's domain
 * errors to HTTP statuses.
 */
import {
  ApprovalDecidedError,
  NotFoundError,
  SessionBusyError,
  StoreUnavailableError,
  TurnRunningError,
  ValidationError,
} from "../app/mod.ts";
import { errorMessage } from "../core/errors.ts";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

export function problem(
  status: number,
  detail: string | undefined,
  options: { instance?: string; headers?: Record<string, string> } = {},
): Response {
  const body: Problem = {
    type: "about:blank",
    title: TITLES[status] ?? "Error",
    status,
    ...(detail !== undefined ? { detail } : {}),
    ...(options.instance !== undefined ? { instance: options.instance } : {}),
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/problem+json", ...options.headers },
  });
}

/** The status of a domain error; anything else is a 500 whose detail is not shown. */
export function statusOf(error: unknown): number {
  if (error instanceof HttpError) return error.status;
  // NotFoundError is a ValidationError: the narrower first.
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ValidationError) return 400;
  if (
    error instanceof SessionBusyError || error instanceof TurnRunningError ||
    error instanceof ApprovalDecidedError
  ) return 409;
  if (error instanceof StoreUnavailableError) return 503;
  return 500;
}

export function problemOf(error: unknown, instance?: string): Response {
  const status = statusOf(error);
  return problem(status, status === 500 ? "The server failed; see its log" : errorMessage(error), {
    ...(instance !== undefined ? { instance } : {}),
  });
}

/** A transport-level refusal (a body that is not JSON, a bad query) with its own status. */
export class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
  }
}
