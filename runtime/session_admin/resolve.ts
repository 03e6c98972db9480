/** Turning what a user typed (ids, unique prefixes, `latest`) into session ids: all of them or none. */
import { NotFoundError } from "../core/errors.ts";
import type { Store } from "../store/store.ts";

export interface ResolveOptions {
  /** What the caller was about to do, for the error message: "delete sessions", "show session". */
  action: string;
  /** The operation changes the store: say that nothing was changed. */
  mutating?: boolean;
}

/**
 * Resolves every reference or throws one NotFoundError naming each unknown or ambiguous one.
 * Duplicates (the same session named twice) are returned once, in first-mention order.
 */
export function resolveSessionIds(store: Store, refs: readonly string[], options: ResolveOptions): string[] {
  const ids: string[] = [];
  const problems: string[] = [];
  for (const ref of refs) {
    const found = resolveOne(store, ref);
    if (typeof found === "string") {
      if (!ids.includes(found)) ids.push(found);
    } else problems.push(found.problem);
  }
  if (problems.length > 0) {
    const suffix = options.mutating ? "; nothing was changed" : "";
    throw new NotFoundError(`Cannot ${options.action}: ${problems.join(", ")}${suffix}`);
  }
  return ids;
}

function resolveOne(store: Store, ref: string): string | { problem: string } {
  if (ref === "latest") {
    const row = store.stmt(
      "SELECT id FROM sessions WHERE archived_at IS NULL ORDER BY created_at DESC, rowid DESC LIMIT 1",
    ).get();
    return row ? String(row.id) : { problem: `no session "latest": the store has no unarchived sessions` };
  }
  if (store.stmt("SELECT 1 FROM sessions WHERE id = ?").get(ref)) return ref;
  const matches = store.stmt("SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 3")
    .all(ref, ref + "\uffff").map((row) => String(row.id));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0 || ref === "") return { problem: `unknown session id "${ref}"` };
  return {
    problem: `ambiguous session id prefix "${ref}" (matches ${matches.join(", ")}${
      matches.length > 2 ? ", …" : ""
    })`,
  };
}
