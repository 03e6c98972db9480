/**
 * `prune_tool_results`: old tool results are replaced by a short placeholder that says how big they were and
 * how to read them again; the originals are archived. In the middle every tool result may go; in the protected
 * tail only those beyond the newest few (the newest ones that fit the tail budget, and always the very newest:
 * the model has just asked for it).
 */
import type { ReplacementRow } from "../store/store.ts";
import { type PlanRow, tokensOf } from "./rows.ts";

export interface PrunePlan {
  archive: number[];
  insert: ReplacementRow[];
  /** chars/4 tokens the placeholders save. */
  savedTokens: number;
}

export const PRUNED_PREFIX = "[tool result pruned by compaction:";

/** The placeholder names the command that shows the original (with the session id when it is known). */
export function placeholderFor(row: Pick<PlanRow, "chars" | "name">, sessionId?: string): string {
  return `${PRUNED_PREFIX} ${row.chars} characters from ${row.name ?? "a tool"}; ` +
    `the original is archived: hermes sessions show ${sessionId ?? "SESSION"} --all]`;
}

/** Tool results among `rows` that a placeholder would at least halve. */
export function planPrune(rows: readonly PlanRow[], sessionId?: string): PrunePlan {
  const plan: PrunePlan = { archive: [], insert: [], savedTokens: 0 };
  for (const row of rows) {
    if (row.role !== "tool" || row.kind !== "message") continue;
    const content = placeholderFor(row, sessionId);
    if (content.length * 2 > row.chars) continue;
    replaceToolResult(plan, row, content);
  }
  return plan;
}

/** Adds to `plan` the archiving of the tool result `row` and its replacement by `content`, in its place. */
export function replaceToolResult(plan: PrunePlan, row: PlanRow, content: string): void {
  plan.archive.push(row.id);
  plan.insert.push({
    role: "tool",
    content,
    kind: "pruned",
    pos: row.pos,
    ...(row.tool_call_id !== undefined ? { tool_call_id: row.tool_call_id } : {}),
    ...(row.name !== undefined ? { name: row.name } : {}),
  });
  plan.savedTokens += row.tokens - tokensOf(content.length);
}

/**
 * The tool results of `tail` beyond the newest few: walking back from the newest, results are kept whole
 * while together they fit `keepTokens` (the newest always); the older ones are returned, oldest first.
 */
export function tailBeyondNewest(
  tail: readonly PlanRow[],
  keepTokens: number,
  tokens: (row: PlanRow) => number,
): PlanRow[] {
  const older: PlanRow[] = [];
  let kept: number | null = null;
  for (let i = tail.length - 1; i >= 0; i--) {
    const row = tail[i]!;
    if (row.role !== "tool" || row.kind !== "message") continue;
    const cost = tokens(row);
    if (kept === null || (older.length === 0 && kept + cost <= keepTokens)) kept = (kept ?? 0) + cost;
    else older.push(row);
  }
  return older.reverse();
}

/** Two plans as one commit's worth of archive and insert rows. */
export function mergePlans(a: PrunePlan, b: PrunePlan): PrunePlan {
  return {
    archive: [...a.archive, ...b.archive],
    insert: [...a.insert, ...b.insert],
    savedTokens: a.savedTokens + b.savedTokens,
  };
}
