/** A session and its messages as `sessions show --json` (and RPC `session.get`) return them. */
import { NotFoundError } from "../core/errors.ts";
import type { AdminStore, SessionStore } from "../store/store.ts";
import { type MessageRecord, type SessionSummary, toMessageRecord } from "./records.ts";

export interface Transcript {
  session: SessionSummary;
  messages: MessageRecord[];
}

export interface TranscriptOptions {
  /** Include rows replaced by compaction (marked `active: false`). Default: only what the model sees. */
  all?: boolean;
}

/** `id` must be a resolved session id. Messages are in prompt order. */
export async function readTranscript(
  store: AdminStore & SessionStore,
  id: string,
  options: TranscriptOptions = {},
): Promise<Transcript> {
  const session = await store.getSessionSummary(id);
  if (!session) throw new NotFoundError(`Cannot show session: unknown session id "${id}"`);
  const messages = await (options.all ? store.allMessages(id) : store.activeMessages(id));
  return { session, messages: messages.map((m) => toMessageRecord(m)) };
}
