/**
 * The floor under every request: context never fails a run while its irreducible part — the system prompt,
 * the tool definitions, the latest user message and the current tool round (its results cut down as far as
 * the ladder may cut them) — fits the window. Only when that part alone is larger does the run fail, with an
 * error that names the sizes.
 */
import { RunError } from "../core/errors.ts";
import { currentRoundStart, lastRealUserIndex } from "./boundaries.ts";
import type { PlanRow } from "./rows.ts";
import { MIN_CUT_CHARS } from "./tail_yield.ts";

export interface Irreducible {
  system: number;
  tools: number;
  user: number;
  round: number;
  total: number;
}

/** Tokens of the irreducible part of the next request from `rows` (prompt order), on the `ratio` basis. */
export function irreducibleTokens(rows: readonly PlanRow[], ratio: number, toolTokens: number): Irreducible {
  const scaled = (n: number) => Math.ceil(n * ratio);
  const system = scaled(rows.filter((r) => r.role === "system").reduce((n, r) => n + r.tokens, 0));
  const lastUser = lastRealUserIndex(rows);
  const user = lastUser >= 0 ? scaled(rows[lastUser]!.tokens) : 0;
  let round = 0;
  for (let i = Math.max(currentRoundStart(rows), lastUser + 1); i < rows.length; i++) {
    const r = rows[i]!;
    round += r.role === "tool" ? Math.min(r.tokens, Math.ceil(MIN_CUT_CHARS / 4)) : r.tokens;
  }
  const tools = scaled(toolTokens);
  round = scaled(round);
  return { system, tools, user, round, total: system + tools + user + round };
}

/** The run cannot go on: even the irreducible part of the next request is larger than the window. */
export class ContextTooLargeError extends RunError {
  constructor(part: Irreducible, window: number, estimate: number) {
    const sizes = `system prompt ${part.system}, tool definitions ${part.tools}, latest user message ` +
      `${part.user}, current tool round ${part.round}`;
    super(
      part.total > window
        ? `Cannot fit the next request into the model's ${window}-token context window: its irreducible part ` +
          `alone is about ${part.total} tokens (${sizes}); raise model.context_window, or shorten the ` +
          `system prompt, the tool list or the prompt`
        : `Cannot fit the next request into the model's ${window}-token context window: compaction left ` +
          `about ${estimate} tokens (irreducible part ${part.total}: ${sizes})`,
      { reason: "context_too_large" },
    );
    this.name = "ContextTooLargeError";
  }
}
