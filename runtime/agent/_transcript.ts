/**
 * The active transcript of one session as the agent sees it: cached in memory and re-read only when
 * another writer (compaction, another process) changed it, so a turn does not re-read the whole session.
 */
import type { AppendMessage, SessionStore } from "../store/store.ts";
import type { Message, StoredMessage } from "../core/types.ts";

/**
 * Tools of one round run one after another and each result is stored as it comes, so of a round's calls
 * without results only the first may have started: its effects may have happened. The others never ran.
 */
const INTERRUPTED_TOOL_RESULT =
  "error: interrupted, may have run: the run stopped while this tool call was running and its result was " +
  "lost; check its effects before calling it again";
const NOT_STARTED_TOOL_RESULT =
  "error: the tool call did not run (the run was interrupted before it started)";

export class Transcript {
  #store: SessionStore;
  #sessionId: string;
  /**
   * Keyed by `store.transcriptVersion`: the count and highest id of active rows. `model` holds the rows as
   * the provider takes them, built once per row: re-mapping a long transcript before every call costs more
   * than the rest of the turn.
   */
  #cache:
    | { version: string; count: number; maxId: number; messages: StoredMessage[]; model: Message[] }
    | undefined;

  /** Rows the next `active()` takes as they are, without asking the store (see the constructor). */
  #written: boolean;

  /**
   * `created`: the whole active transcript of a session this process has just created, as it wrote it. No
   * other writer can have changed it before its first turn (turns are claimed; compaction has nothing to
   * fold), so the first read takes it as it is; every later one asks the store for its version as usual.
   */
  constructor(store: SessionStore, sessionId: string, created?: readonly StoredMessage[]) {
    this.#store = store;
    this.#sessionId = sessionId;
    this.#written = created !== undefined;
    if (created) {
      const messages = created.filter((m) => m.active);
      const maxId = messages.reduce((m, row) => Math.max(m, row.id), 0);
      this.#cache = {
        version: `${messages.length}:${maxId}`,
        count: messages.length,
        maxId,
        messages,
        model: messages.map(toMessage),
      };
    }
  }

  /** Appends (one transaction) and keeps the cache in step. */
  async append(messages: AppendMessage[]): Promise<void> {
    // Rows appended archived (the full text of a cut tool result) are not part of the active transcript.
    this.#cached((await this.#store.appendMessages(this.#sessionId, messages)).filter((m) => m.active));
  }

  /** Appends a step's user turn unless it was sent already (store.sendStep); true when it was appended now. */
  async sendStep(step: number, message: AppendMessage): Promise<boolean> {
    const stored = await this.#store.sendStep(this.#sessionId, step, message);
    if (stored) this.#cached([stored]);
    return stored !== null;
  }

  #cached(stored: StoredMessage[]): void {
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
    if (this.#written) {
      this.#written = false;
      return this.#cache!.messages;
    }
    // Both reads go through the partial index of active rows: their cost follows the transcript, not the
    // session's stored history.
    const version = await this.#store.transcriptVersion(this.#sessionId);
    if (this.#cache?.version === version) return this.#cache.messages;
    const messages = await this.#store.activeMessages(this.#sessionId);
    const maxId = messages.reduce((m, row) => Math.max(m, row.id), 0);
    this.#cache = { version, count: messages.length, maxId, messages, model: messages.map(toMessage) };
    return messages;
  }

  /**
   * The active rows as the provider takes them: a fresh array (callers may replace entries) of shared rows.
   * Neighbours of one role (other than tool results) are joined into one message, contents in order: strict
   * chat templates (llama.cpp, vLLM) reject `user, user`, and micro-compaction leaves user messages next to
   * each other by design (it never absorbs them).
   */
  async forModel(): Promise<Message[]> {
    await this.active();
    return joinSameRole(pairToolResults(this.#cache!.model));
  }

  /** Rows other than the stored ones (compaction's uncommitted view) as the provider takes them. */
  viewForModel(rows: readonly StoredMessage[]): Message[] {
    return joinSameRole(pairToolResults(rows.map(toMessage)));
  }

  /**
   * A killed run can leave a tool call without its result; providers reject that, so close it. `messages`:
   * the active rows as the caller has just read them.
   */
  async closeDanglingToolCalls(messages?: readonly StoredMessage[]): Promise<void> {
    messages ??= await this.active();
    const answered = new Set(messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id));
    const missing: AppendMessage[] = [];
    for (const m of messages) {
      let started = false;
      for (const call of m.tool_calls ?? []) {
        if (answered.has(call.id)) continue;
        missing.push({
          role: "tool",
          tool_call_id: call.id,
          name: call.name,
          content: started ? NOT_STARTED_TOOL_RESULT : INTERRUPTED_TOOL_RESULT,
        });
        started = true;
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
  if (m.reasoning?.length) message.reasoning = m.reasoning;
  return message;
}

/**
 * Each assistant tool call followed by its results, as providers require. Two writers that interleaved one
 * session (before turns were claimed per process) left `assistant(c5), assistant(c6), tool(c5), tool(c6)`:
 * each result moves up behind its call, so such a transcript is usable again. In order already: unchanged.
 */
export function pairToolResults(messages: readonly Message[]): readonly Message[] {
  if (inPairs(messages)) return messages;
  const results = new Map<string, Message>();
  for (const m of messages) if (m.role === "tool" && m.tool_call_id) results.set(m.tool_call_id, m);
  const placed = new Set<Message>();
  const out: Message[] = [];
  for (const m of messages) {
    if (m.role === "tool") {
      if (!placed.has(m)) { // a result before or without its call stays where it was
        out.push(m);
        placed.add(m);
      }
      continue;
    }
    out.push(m);
    for (const call of m.tool_calls ?? []) {
      const result = results.get(call.id);
      if (result && !placed.has(result)) {
        out.push(result);
        placed.add(result);
      }
    }
  }
  return out;
}

/** Every tool call's result follows it directly (after the other results of its round). */
function inPairs(messages: readonly Message[]): boolean {
  let open = new Set<string>();
  for (const m of messages) {
    if (m.role === "tool") {
      if (m.tool_call_id !== undefined) open.delete(m.tool_call_id);
      continue;
    }
    if (open.size > 0) return false;
    open = new Set((m.tool_calls ?? []).map((c) => c.id));
  }
  return true;
}

function joinSameRole(messages: readonly Message[]): Message[] {
  const joined: Message[] = [];
  for (const m of messages) {
    const last = joined.at(-1);
    if (!last || last.role !== m.role || m.role === "tool" || last.tool_calls?.length) {
      joined.push(m);
      continue;
    }
    const content = [last.content, m.content].filter((c) => c !== "").join("\n\n");
    joined[joined.length - 1] = { ...m, content };
  }
  return joined;
}
