/** What every `hermes sessions` subcommand receives, and the flag parsing they share. */
import type { Cli } from "../_cli.ts";
import { ValidationError } from "../../runtime/core/errors.ts";
import { parseDuration } from "../../runtime/core/duration.ts";
import type { Store } from "../../runtime/store/store.ts";

export interface SessionsContext {
  cli: Cli;
  /** Arguments after the subcommand name (global flags included). */
  args: string[];
  /** `list` prints a table on a terminal and JSON otherwise. */
  stdoutIsTerminal: boolean;
  /** `prune` asks for confirmation on a terminal and refuses without `--yes` otherwise. */
  stdinIsTerminal: boolean;
}

export async function withStore<T>(cli: Cli, fn: (store: Store) => T | Promise<T>): Promise<T> {
  const store = await cli.openStore();
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export function parseLimit(command: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new ValidationError(`hermes ${command}: invalid --limit "${text}": expected a positive integer`);
  }
  return Number(text);
}

/** `7d`, `12h`, `30m` (an age in milliseconds). */
export function parseAge(command: string, flag: string, text: string): number {
  // A bare number would mean seconds: `--older-than 30` would delete almost everything. A unit is required.
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) {
    throw new ValidationError(
      `hermes ${command}: invalid ${flag} "${text}": a unit is required, for example ${text.trim()}d, ${text.trim()}h or ${text.trim()}m`,
    );
  }
  try {
    return parseDuration(text);
  } catch {
    throw new ValidationError(
      `hermes ${command}: invalid ${flag} "${text}": expected a duration like 30d, 12h or 90m`,
    );
  }
}

/** `--since 7d` (relative to now) or `--since 2026-01-31[T…]` (absolute); epoch ms. */
export function parseSince(command: string, text: string, now: number): number {
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const at = Date.parse(text);
    if (Number.isNaN(at)) {
      throw new ValidationError(
        `hermes ${command}: invalid --since "${text}": expected a date like 2026-01-31`,
      );
    }
    return at;
  }
  try {
    return now - parseDuration(text);
  } catch {
    throw new ValidationError(
      `hermes ${command}: invalid --since "${text}": expected a duration like 7d or 12h, or a date like 2026-01-31`,
    );
  }
}

export function noPositionals(command: string, positionals: string[]): void {
  if (positionals.length > 0) {
    throw new ValidationError(`hermes ${command}: unexpected argument "${positionals[0]}"`);
  }
}

export function exactlyOneId(command: string, positionals: string[]): string {
  if (positionals.length !== 1) {
    throw new ValidationError(
      `hermes ${command}: expected one session id (or "latest"), got ${
        positionals.length === 0 ? "none" : positionals.length
      }`,
    );
  }
  return positionals[0]!;
}

export { jsonArray } from "./list_quick.ts";
