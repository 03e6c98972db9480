/**
 * The request of a session whose compaction lease another process holds (a concurrent `hermes sessions
 * compact`, another run) while its stored transcript is over the window: the ladder is planned as a pass would
 * plan it — prune, else the deterministic fallback, no summary call — but nothing is written. The plan is
 * applied to the active rows in memory and that view is sent instead, so no request goes out over the window
 * and the lease holder's commit is not raced. The next request reads the store again, compacted by then.
 */
import type { StoredMessage } from "../core/types.ts";
import { measure } from "./estimate.ts";
import { planHard } from "./hard.ts";
import type { Plan } from "./plan.ts";
import { loadPlanRows } from "./rows.ts";
import { withNotesFollowed } from "./read_notes.ts";
import type { PassDeps } from "./pass_outcome.ts";
import { scaledTo } from "./settings.ts";
import type { CompactionReason } from "../agent/seams.ts";

/** The active rows with the fallback plan applied, prompt order; null when the ladder has nothing to change. */
export async function fallbackView(
  deps: PassDeps,
  sessionId: string,
  options: { overheadTokens: number; holder: string; reason: CompactionReason },
): Promise<StoredMessage[] | null> {
  const { store } = deps;
  const rows = await loadPlanRows(store, sessionId);
  const ratio = await deps.calibration.ratioOf(sessionId);
  const before = measure(rows, ratio);
  const plan = await planHard({
    sessionId,
    store,
    overheadTokens: Math.ceil(options.overheadTokens * ratio),
    summaryBlocked: { reason: "lease_held", note: options.holder },
    rows,
    ratio,
    // As for a pass: after an overflow the request that was too long bounds the real window.
    settings: options.reason === "overflow" ? scaledTo(deps.settings, before) : deps.settings,
    reason: options.reason,
    before,
    summarise: () => Promise.reject(new Error("Cannot summarise without the compaction lease")),
  });
  if (plan.type !== "commit") return null;
  return applied(
    await store.activeMessages(sessionId),
    await withNotesFollowed(store, sessionId, rows, plan),
  );
}

/** `active` with `plan`'s rows archived and its replacements in their places, as the store would order them. */
function applied(active: readonly StoredMessage[], plan: Extract<Plan, { type: "commit" }>): StoredMessage[] {
  const archived = new Set(plan.archive);
  const template = active[0]!;
  const inserted = plan.insert.map((row, i): StoredMessage => ({
    id: -(i + 1),
    session_id: template.session_id,
    // Replacements sort before what follows at their position, as a commit's fresh rows would after them.
    seq: Number.MAX_SAFE_INTEGER - plan.insert.length + i,
    pos: row.pos,
    role: row.role,
    content: row.content,
    kind: row.kind,
    active: true,
    prompt_tokens: null,
    completion_tokens: null,
    created_at: template.created_at,
    ...(row.tool_call_id !== undefined ? { tool_call_id: row.tool_call_id } : {}),
    ...(row.name !== undefined ? { name: row.name } : {}),
  }));
  return [...active.filter((m) => !archived.has(m.id)), ...inserted]
    .sort((a, b) => a.pos - b.pos || a.seq - b.seq);
}
