/**
 * Notes of repeated reads ("unchanged since message #N", runtime/agent/read_dedup.ts) stand for the result they
 * point at. A pass that archives that result (prunes, cuts, summarises or drops it) would leave each note
 * pointing at content no longer above, so the same commit replaces those notes by a placeholder saying where
 * the content went, at their positions. The original always precedes its notes, so the pass already rewrites
 * the prompt from there on and this re-bills nothing more; protecting the original instead would keep a large,
 * often re-read result in every request. The placeholder is a pruned row: a later read of the file finds no
 * verbatim result and returns the content again.
 */
import { NOTE_HEAD_CHARS, noteTarget } from "../agent/read_dedup.ts";
import type { ReplacementRow, SessionStore } from "../store/store.ts";
import type { Plan } from "./plan.ts";
import { PRUNED_PREFIX } from "./prune.ts";
import type { PlanRow } from "./rows.ts";

type Commit = Extract<Plan, { type: "commit" }>;

/** `plan` with every active note whose original it archives (or that lost it before) replaced too. */
export async function withNotesFollowed(
  store: Pick<SessionStore, "messageContents">,
  sessionId: string,
  rows: readonly PlanRow[],
  plan: Commit,
): Promise<Commit> {
  const archived = new Set(plan.archive);
  const kept = new Set(
    rows.filter((r) => !archived.has(r.id) && r.role === "tool" && r.kind === "message").map((r) => r.seq),
  );
  const candidates = rows.filter((r) =>
    !archived.has(r.id) && r.role === "tool" && r.name === "read_file" && r.kind === "message"
  );
  if (candidates.length === 0) return plan;
  const heads = await store.messageContents(candidates.map((r) => r.id), NOTE_HEAD_CHARS);
  const stale = candidates.filter((r) => {
    const target = noteTarget(heads.get(r.id) ?? "");
    return target !== null && !kept.has(target);
  });
  if (stale.length === 0) return plan;
  const insert: ReplacementRow[] = stale.map((r) => ({
    role: "tool",
    content: orphanedNote(noteTarget(heads.get(r.id)!)!, sessionId),
    kind: "pruned",
    pos: r.pos,
    ...(r.tool_call_id !== undefined ? { tool_call_id: r.tool_call_id } : {}),
    ...(r.name !== undefined ? { name: r.name } : {}),
  }));
  return {
    ...plan,
    archive: [...plan.archive, ...stale.map((r) => r.id)],
    insert: [...plan.insert, ...insert],
    absorbed: [...plan.absorbed, ...stale],
    detail: { ...plan.detail, notes_followed: stale.length },
  };
}

/**
 * What a note says once the result it pointed at is archived: no longer than the note, since every pass from
 * then on carries it (a later read of the file returns its content anyway).
 */
export function orphanedNote(seq: number, sessionId: string): string {
  return `${PRUNED_PREFIX} same content as message #${seq}, archived: hermes sessions show ${sessionId} --all]`;
}
