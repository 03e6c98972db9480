/**
 * The session's ceiling on stored tool results (a policy's `sandbox_limits.max_session_output`,
 * `--untrusted`'s): each result's rows as they will be stored, cut to the bytes the session has left, all
 * calls and runs together. Past the ceiling the whole text is not archived (that would store it anyway) and a
 * result is stored as the marker alone, so the session grows by a line per call, not by what a tool returns.
 */
import { cutText } from "../core/cut_text.ts";
import type { AppendMessage, SessionStore } from "../store/store.ts";

const encoder = new TextEncoder();

/** The UTF-8 size of `text`, what the store holds. */
export const utf8Bytes = (text: string): number => encoder.encode(text).length;

export class StoredOutput {
  readonly #store: Pick<SessionStore, "toolOutputBytes">;
  readonly #sessionId: string;
  readonly #ceiling: number;
  /** What the session held when this run first stored a result: read once, shared by concurrent calls. */
  #before: Promise<number> | undefined;
  /** What this run stored since. */
  #added = 0;

  constructor(options: { store: Pick<SessionStore, "toolOutputBytes">; sessionId: string; ceiling: number }) {
    this.#store = options.store;
    this.#sessionId = options.sessionId;
    this.#ceiling = options.ceiling;
  }

  /**
   * The rows to store for `result`: `rows` (what compaction made of it) when they fit in what is left,
   * otherwise `result` alone, cut to what is left and no longer than the window allows.
   */
  async fit(result: AppendMessage, rows: AppendMessage[]): Promise<AppendMessage[]> {
    this.#before ??= this.#store.toolOutputBytes(this.#sessionId);
    const before = await this.#before;
    const left = Math.max(0, this.#ceiling - before - this.#added);
    const bytes = rows.reduce((sum, row) => sum + utf8Bytes(row.content), 0);
    if (bytes <= left) {
      this.#added += bytes;
      return rows;
    }
    const window = (rows.find((row) => row.active !== false) ?? result).content.length;
    const cut = (limit: number) =>
      cutText(result.content, limit, {
        why:
          `the session's stored tool results reached sandbox_limits.max_session_output, ${this.#ceiling} bytes`,
        sessionId: this.#sessionId,
        archived: false,
      });
    // Characters first, then scaled down while the bytes are over (a character is 1–4); the marker alone at 0.
    let limit = Math.min(left, window, result.content.length - 1);
    let content = cut(limit);
    for (let size = utf8Bytes(content); size > left && limit > 0; size = utf8Bytes(content)) {
      limit = Math.max(0, Math.min(limit - 1, Math.floor(limit * left / size)));
      content = cut(limit);
    }
    this.#added += utf8Bytes(content);
    return [{ ...result, content }];
  }
}
