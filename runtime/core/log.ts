/**
 * Logs go to stderr only; stdout is the product. A line is redacted, and its control characters are
 * rendered visibly: messages quote commands, tool output and errors from servers.
 */
import type { Redactor } from "./redact.ts";
import { visibleText } from "./visible.ts";

export type LogLevel = "error" | "warn" | "info" | "debug";
const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  /** A logger whose lines are prefixed with `[name]`. */
  child(name: string): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  write: (line: string) => void;
  redact?: Redactor;
  prefix?: string;
}

export function createLogger(options: LoggerOptions): Logger {
  const threshold = RANK[options.level ?? "info"];
  const redact = options.redact ?? ((t: string) => t);
  const prefix = options.prefix ? `[${options.prefix}] ` : "";
  const at = (level: LogLevel) => (message: string) => {
    if (RANK[level] <= threshold) options.write(visibleText(redact(`hermes ${level}: ${prefix}${message}`)));
  };
  return {
    error: at("error"),
    warn: at("warn"),
    info: at("info"),
    debug: at("debug"),
    child: (name) =>
      createLogger({ ...options, prefix: options.prefix ? `${options.prefix}:${name}` : name }),
  };
}

export const silentLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  child: () => silentLogger,
};
