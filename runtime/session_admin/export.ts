/**
 * `hermes sessions export`: a whole session, compacted rows included, as JSON Lines (first line the session,
 * then one line per message in prompt order — enough to rebuild it) or as Markdown for people.
 */
import { NotFoundError } from "../core/errors.ts";
import type { AdminStore, MessageKey, SessionStore } from "../store/store.ts";
import { type MessageRecord, type SessionSummary, toMessageRecord } from "./records.ts";

export type ExportFormat = "jsonl" | "md";
export const EXPORT_FORMATS: readonly ExportFormat[] = ["jsonl", "md"];

/** The first JSONL line. `config` is the resolved job the session ran with (secrets redacted). */
export interface SessionHeader extends SessionSummary {
  type: "session";
  format: "hermes.session";
  version: 1;
  job_path: string | null;
  config: unknown;
  message_count: number;
}

export interface MessageLine extends MessageRecord {
  type: "message";
}

export interface ExportOptions {
  format: ExportFormat;
  /** Rows read from the store at a time (default 64): what the export holds at once, not the session. */
  pageSize?: number;
}

const PAGE_SIZE = 64;

/** Yields the export in chunks (each ends with a newline). `id` must be a resolved session id. */
export async function* exportSession(
  store: AdminStore & SessionStore,
  id: string,
  options: ExportOptions,
): AsyncGenerator<string> {
  const session = await store.getSession(id);
  const summary = await store.getSessionSummary(id);
  if (!session || !summary) throw new NotFoundError(`Cannot export session: unknown session id "${id}"`);
  // Counted first and read in pages: a session with large tool results is never held whole.
  const count = await store.messageCount(id);
  const header: SessionHeader = {
    type: "session",
    format: "hermes.session",
    version: 1,
    ...summary,
    job_path: session.job_path,
    config: parseJson(session.config_json),
    message_count: count,
  };
  const messages = pages(store, id, options.pageSize ?? PAGE_SIZE);
  if (options.format === "jsonl") {
    yield JSON.stringify(header) + "\n";
    for await (const message of messages) {
      yield JSON.stringify({ type: "message", ...message } satisfies MessageLine) + "\n";
    }
    return;
  }
  yield markdownHeader(header);
  for await (const message of messages) yield markdownMessage(message);
}

/** Every row of the session in prompt order, read `size` at a time. */
async function* pages(store: SessionStore, id: string, size: number): AsyncGenerator<MessageRecord> {
  let after: MessageKey | null = null;
  while (true) {
    const page = await store.messagePage(id, after, size);
    for (const message of page) yield toMessageRecord(message);
    if (page.length < size) return;
    const last = page.at(-1)!;
    after = { pos: last.pos, seq: last.seq };
  }
}

function markdownHeader(h: SessionHeader): string {
  const facts = [
    `- job: ${h.job}`,
    `- status: ${h.status}${h.terminal_reason ? ` (${h.terminal_reason})` : ""}`,
    `- created: ${h.created_at}`,
    ...(h.ended_at ? [`- ended: ${h.ended_at}`] : []),
    ...(h.model ? [`- model: ${h.model}`] : []),
    `- turns: ${h.turns}, tokens: ${h.prompt_tokens} prompt / ${h.completion_tokens} completion`,
    ...(h.archived_at ? [`- archived: ${h.archived_at}`] : []),
    ...(h.parent_id ? [`- parent: ${h.parent_id}`] : []),
  ];
  return `# Session ${h.id}\n\n${facts.join("\n")}\n`;
}

function markdownMessage(m: MessageRecord): string {
  const marks = [m.kind !== "message" ? `[${m.kind}]` : "", m.active ? "" : "[compacted]"].filter(Boolean);
  const who = m.role === "tool" ? `tool \`${m.name ?? "?"}\`` : m.role;
  const title = `## ${m.seq} · ${who}${m.tool_call_id ? ` (${m.tool_call_id})` : ""} ${marks.join(" ")}`
    .trimEnd();
  const body = m.content === "" ? "" : `\n${m.role === "tool" ? fenced(m.content, "") : `${m.content}\n`}`;
  const calls = (m.tool_calls ?? []).map((c) =>
    `\n**tool call** \`${c.name}\` (${c.id})\n\n${fenced(prettyJson(c.arguments), "json")}`
  );
  return `\n${title}\n${body}${calls.join("")}`;
}

/** A fence longer than any backtick run inside `text`, so the block cannot be closed early. */
function fenced(text: string, language: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}\n`;
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
