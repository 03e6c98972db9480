/**
 * Where a compaction may cut: the protected head (system prompt + `protect_first`), the protected tail, and
 * the middle between them. The tail is walked backwards by tokens: it takes trailing messages while they fit
 * `tailBudget`, but never fewer than `protect_last` messages (a floor), and always reaches back to the latest
 * real user message. A cut never separates an assistant tool call from its tool results: the budget walk
 * stops short of a tool-call span it would split, the floor and the head move outward instead.
 */
import type { PlanRow } from "./rows.ts";

/** What boundary selection looks at: `StoredMessage` and `PlanRow` both fit. */
export type BoundaryRow = Pick<PlanRow, "role" | "kind" | "tool_calls" | "tool_call_id">;

export interface BoundaryOptions {
  protect_first: number;
  protect_last: number;
  /** Tokens the tail may take beyond the `protect_last` floor (absent: the floor alone). */
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
    while (start > head && used + options.tokens(start - 1) <= options.tailBudget) {
      used += options.tokens(--start);
    }
    // Inside a tool-call span, step forward to its end rather than split it (the budget is a ceiling).
    while (start < tail && blocked[start]) start++;
    tail = Math.min(tail, start);
  }
  const lastUser = lastRealUserIndex(messages);
  if (lastUser >= head && lastUser < tail) tail = lastUser;
  while (tail > head && blocked[tail]) tail--;
  return { head, tail };
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
