/**
 * Repeated reads: a `read_file` of a file whose latest result is still verbatim in the active transcript,
 * with the same content, is answered by a short note pointing at that result instead of a second copy. A
 * tool-heavy session re-reads the same log or module many times, and each copy costs its size on every later
 * request. Only the latest active result for the path counts, compared by content as it would be stored
 * (after the cut of oversized results): a changed file, a result compaction pruned or summarised away, or a
 * path read only before the last compaction is read in full again. A compaction pass that archives a result
 * replaces the notes pointing at it (runtime/compaction/read_notes.ts), so no note outlives its original.
 */
import { isAbsolute, join, normalize } from "../core/path.ts";
import type { StoredMessage } from "../core/types.ts";

export interface EarlierRead {
  /** The earlier result's message number (`seq`, as `hermes sessions show` lists it). */
  seq: number;
  tool_call_id: string;
}

/** The path a read_file call names, resolved against the job directory; null when it names none. */
export function readKey(args: Record<string, unknown>, jobDir: string): string | null {
  const path = args.path;
  if (typeof path !== "string" || path === "") return null;
  return normalize(isAbsolute(path) ? path : join(jobDir, path));
}

/**
 * The latest active `read_file` result for `key` in `active`, when it is verbatim (not a placeholder, not a
 * note of this module) and equal to `content`; else null.
 */
export function unchangedRead(
  active: readonly StoredMessage[],
  key: string,
  content: string,
  jobDir: string,
): EarlierRead | null {
  const paths = new Map<string, string | null>();
  for (const m of active) {
    for (const call of m.tool_calls ?? []) {
      if (call.name === "read_file") paths.set(call.id, readKey(parseArgs(call.arguments), jobDir));
    }
  }
  for (let i = active.length - 1; i >= 0; i--) {
    const m = active[i]!;
    if (m.role !== "tool" || m.name !== "read_file" || !m.tool_call_id) continue;
    if (paths.get(m.tool_call_id) !== key) continue;
    if (m.content.startsWith(NOTE_PREFIX)) continue;
    if (m.kind !== "message" || m.content !== content) return null;
    return { seq: m.seq, tool_call_id: m.tool_call_id };
  }
  return null;
}

const NOTE_PREFIX = "unchanged since message #";
/** Characters of a note that name the message it points at (the prefix and a message number). */
export const NOTE_HEAD_CHARS = NOTE_PREFIX.length + 20;

/** The message number a note points at (its start is enough: `NOTE_HEAD_CHARS`); null for any other text. */
export function noteTarget(content: string): number | null {
  const match = /^unchanged since message #(\d+):/.exec(content);
  return match ? Number(match[1]) : null;
}

/** The result given instead of the content. */
export function unchangedNote(path: string, earlier: EarlierRead): string {
  return `${NOTE_PREFIX}${earlier.seq}: ${path} has the same content as the read_file result of call ` +
    `${earlier.tool_call_id}, which is still above; it is not repeated.`;
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}
