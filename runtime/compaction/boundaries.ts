/**
 * Where a compaction may cut: the protected head (system prompt + `protect_first`), the protected tail, and
 * the middle between them. The tail's protection is a token budget first: walked backwards, it takes up to
 * `protect_last` trailing messages while they fit `tailBudget` — `protect_last` is a preference that gives
 * way when its messages are too big (without a budget, as for `/compress`, it is the tail). The tail always
 * reaches back to the latest real user message (the tail-yield rung of hard.ts cuts what is too big in it).
 * A cut never separates an assistant tool call from its tool results: the budget walk stops short of a
 * tool-call span it would split, and the head moves outward instead.
 */
import type { PlanRow } from "./rows.ts";

/** What boundary selection looks at: `StoredMessage` and `PlanRow` both fit. */
export type BoundaryRow = Pick<PlanRow, "role" | "kind" | "tool_calls" | "tool_call_id">;

export interface BoundaryOptions {
  protect_first: number;
  protect_last: number;
  /** Tokens the tail may take (absent: the last `protect_last` messages, whatever their size). */
  tailBudget?: number;
  /** Tokens of `messages[i]` on the caller's basis (needed with `tailBudget`). */
  tokens?: (i: number) => number;
}

/** `messages[head, tail)` is the middle; empty when `head === tail`. */
export interface Boundaries {
  head: number;
  tail: number;
}

export function selectBoundaries(messages: readonly BoundaryRow[], options: BoundaryOptions): Boundaries {
  const n = messages.length;
  const blocked = blockedCuts(messages);
  let leadingSystem = 0;
  while (leadingSystem < n && messages[leadingSystem]!.role === "system") leadingSystem++;
  let head = Math.min(n, leadingSystem + options.protect_first);
  while (head < n && blocked[head]) head++;
  let tail = Math.max(head, n - options.protect_last);
  if (options.tailBudget !== undefined && options.tokens) {
    let start = n;
    let used = 0;
    while (start > tail && used + options.tokens(start - 1) <= options.tailBudget) {
      used += options.tokens(--start);
    }
    // Inside a tool-call span, step forward to its end rather than split it (the budget is a ceiling).
    while (start < n && blocked[start]) start++;
    tail = start;
  }
  tail = Math.max(head, Math.min(tail, currentRoundStart(messages)));
  const lastUser = lastRealUserIndex(messages);
  if (lastUser >= head && lastUser < tail) tail = lastUser;
  while (tail > head && blocked[tail]) tail--;
  return { head, tail };
}

/**
 * Where the current tool round starts: the last message that is not a tool result (the assistant message
 * whose calls the trailing results answer, or the newest message itself). It is never compacted away: the
 * model has just asked for those results.
 */
export function currentRoundStart(messages: readonly BoundaryRow[]): number {
  let i = messages.length - 1;
  while (i > 0 && messages[i]!.role === "tool") i--;
  return Math.max(0, i);
}

/** The latest user message typed or injected as a turn (not a compaction summary). */
export function lastRealUserIndex(messages: readonly BoundaryRow[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user" && messages[i]!.kind === "message") return i;
  }
  return -1;
}

/**
 * `blocked[k]` is true when cutting between `messages[k-1]` and `messages[k]` is not allowed: `messages[k]` is
 * a tool result, or it lies inside the span from an assistant tool call to its last answering tool result.
 */
export function blockedCuts(messages: readonly BoundaryRow[]): boolean[] {
  const n = messages.length;
  const blocked = new Array<boolean>(n + 1).fill(false);
  const callOwner = new Map<string, number>();
  const spanEnd = new Int32Array(n).fill(-1);
  messages.forEach((m, i) => {
    for (const call of m.tool_calls ?? []) callOwner.set(call.id, i);
    if (m.role === "tool") {
      blocked[i] = i > 0;
      const owner = m.tool_call_id === undefined ? undefined : callOwner.get(m.tool_call_id);
      if (owner !== undefined && i > spanEnd[owner]!) spanEnd[owner] = i;
    }
  });
  let openUntil = -1;
  for (let i = 0; i < n; i++) {
    if (i > 0 && i <= openUntil) blocked[i] = true;
    if (spanEnd[i]! > openUntil) openUntil = spanEnd[i]!;
  }
  return blocked;
}
