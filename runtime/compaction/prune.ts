/** `prune_tool_results`: old tool results in the middle are replaced by a short placeholder (originals archived). */
import type { ReplacementRow } from "../store/store.ts";
import { type PlanRow, tokensOf } from "./rows.ts";

export interface PrunePlan {
  archive: number[];
  insert: ReplacementRow[];
  /** chars/4 tokens the placeholders save. */
  savedTokens: number;
}

export function placeholderFor(row: Pick<PlanRow, "chars" | "name">): string {
  return `[tool result pruned by compaction: ${row.chars} characters from ${row.name ?? "a tool"}; ` +
    `the original is archived in the session store]`;
}

/** Tool results in `middle` that a placeholder would at least halve. */
export function planPrune(middle: readonly PlanRow[]): PrunePlan {
  const plan: PrunePlan = { archive: [], insert: [], savedTokens: 0 };
  for (const row of middle) {
    if (row.role !== "tool" || row.kind !== "message") continue;
    const content = placeholderFor(row);
    if (content.length * 2 > row.chars) continue;
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
  return plan;
}
