/**
 * The active transcript of one session as the agent sees it: cached in memory and re-read only when
 * another writer (compaction, another process) changed it, so a turn does not re-read the whole session.
 */
import type { AppendMessage, Store } from "../store/store.ts";
import type { Message, StoredMessage } from "../core/types.ts";

const INTERRUPTED_TOOL_RESULT = "error: the tool call did not complete (the run was interrupted)";

export class Transcript {
  #store: Store;
  #sessionId: string;
  /**
   * Keyed by `store.transcriptVersion`: the count and highest id of active rows. `model` holds the rows as
   * the provider takes them, built once per row: re-mapping a long transcript before every call costs more
   * than the rest of the turn.
   */
  #cache:
    | { version: string; count: number; maxId: number; messages: StoredMessage[]; model: Message[] }
    | undefined;

  constructor(store: Store, sessionId: string) {
    this.#store = store;
    this.#sessionId = sessionId;
  }

  /** Appends (one transaction) and keeps the cache in step. */
  async append(messages: AppendMessage[]): Promise<void> {
    const stored = await this.#store.appendMessages(this.#sessionId, messages);
    const cache = this.#cache;
    if (!cache) return;
    cache.messages.push(...stored);
    cache.model.push(...stored.map(toMessage));
    cache.count += stored.length;
    cache.maxId = Math.max(cache.maxId, ...stored.map((m) => m.id));
    cache.version = `${cache.count}:${cache.maxId}`;
  }

  /** The active rows in prompt order. */
  async active(): Promise<StoredMessage[]> {
    // Both reads go through the partial index of active rows: their cost follows the transcript, not the
    // session's stored history.
    const version = await this.#store.transcriptVersion(this.#sessionId);
    if (this.#cache?.version === version) return this.#cache.messages;
    const messages = await this.#store.activeMessages(this.#sessionId);
    const maxId = messages.reduce((m, row) => Math.max(m, row.id), 0);
    this.#cache = { version, count: messages.length, maxId, messages, model: messages.map(toMessage) };
    return messages;
  }

  /** The active rows as the provider takes them: a fresh array (callers may replace entries) of shared rows. */
  async forModel(): Promise<Message[]> {
    await this.active();
    return this.#cache!.model.slice();
  }

  /** A killed run can leave a tool call without its result; providers reject that, so close it. */
  async closeDanglingToolCalls(): Promise<void> {
    const messages = await this.active();
    const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id));
    const missing: AppendMessage[] = [];
    for (const m of messages) {
      for (const call of m.tool_calls ?? []) {
        if (!answered.has(call.id)) {
          missing.push({
            role: "tool",
            tool_call_id: call.id,
            name: call.name,
            content: INTERRUPTED_TOOL_RESULT,
          });
        }
      }
    }
    if (missing.length) await this.append(missing);
  }
}

function toMessage(m: StoredMessage): Message {
  const message: Message = { role: m.role, content: m.content };
  if (m.tool_calls?.length) message.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) message.tool_call_id = m.tool_call_id;
  if (m.name !== undefined && m.role === "tool") message.name = m.name;
  return message;
}
