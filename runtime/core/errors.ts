/** Errors carry their exit code; the CLI edge (main.ts) is the only place that maps them. */

export const ExitCode = {
  success: 0,
  failed: 1,
  invalid: 2,
  limit: 3,
  interrupted: 130,
  terminated: 143,
} as const;

/** Bad user input: flags, job files, inputs, ids. Printed as one line, no stack, exit 2. */
export class ValidationError extends Error {
  readonly exitCode: number;
  constructor(message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ValidationError";
    this.exitCode = options.exitCode ?? ExitCode.invalid;
  }
}

/** A run-time failure the user can act on (provider down, plugin fatal). Printed as one line, exit 1. */
export class RunError extends Error {
  readonly exitCode: number;
  readonly reason: string;
  constructor(message: string, options: { reason?: string; exitCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "RunError";
    this.reason = options.reason ?? "error";
    this.exitCode = options.exitCode ?? ExitCode.failed;
  }
}

/** Raised when a session id (or `latest`) names nothing in the store. */
export class NotFoundError extends ValidationError {
  constructor(message: string) {
    super(message);
    this.name = "NotFoundError";
  }
}

/**
 * The abort reason of a process signal: an interruption that ends a run with its own exit code (130 for
 * SIGINT, 143 for SIGTERM). An AbortError like any other abort, so everything that stops on one stops on it.
 */
export class Interruption extends DOMException {
  readonly exitCode: number;
  constructor(signal: "SIGINT" | "SIGTERM") {
    super(`received ${signal}`, "AbortError");
    this.exitCode = signal === "SIGTERM" ? ExitCode.terminated : ExitCode.interrupted;
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
