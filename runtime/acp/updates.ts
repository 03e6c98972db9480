/**
 * Events (docs/events.md) and stored messages as ACP `session/update` payloads: assistant text → `agent_message_chunk`,
 * a tool call → `tool_call`, its result → `tool_call_update`, a user turn that did not come from the editor
 * (a loop tick, a heartbeat) → `user_message_chunk`.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { HermesEvent } from "../core/events.ts";
import type { StoredMessage } from "../core/types.ts";
import { visibleLine } from "../core/visible.ts";

const KINDS: Record<string, acp.ToolKind> = {
  shell: "execute",
  read_file: "read",
  write_file: "edit",
  list_dir: "search",
  http_fetch: "fetch",
};

export function toolKind(tool: string): acp.ToolKind {
  return KINDS[tool] ?? "other";
}

/** Longest title; a longer one keeps its head and its tail (visibleLine). */
const TITLE_MAX = 240;

/**
 * A one-line title a person judges: `shell: git status`, `read_file: src/a.ts`, and where the call leads
 * when that differs from what it names (`read_file: out/a.txt → /home/u/.hermes/config.yaml`). Control,
 * escape and bidirectional characters are shown as escapes; a long one is never cut at its end.
 */
export function toolTitle(tool: string, args: Record<string, unknown>, subject?: string): string {
  const main = args.command ?? args.path ?? args.url;
  const detail = typeof main === "string" ? main : JSON.stringify(args);
  const leads = subject !== undefined && subject !== main ? ` → ${subject}` : "";
  return visibleLine(`${tool}: ${detail}${leads}`, TITLE_MAX);
}

const text = (value: string): acp.ContentBlock => ({ type: "text", text: value });

function toolCallUpdate(
  id: string,
  tool: string,
  args: Record<string, unknown>,
  status: acp.ToolCallStatus,
): acp.SessionUpdate {
  return {
    sessionUpdate: "tool_call",
    toolCallId: id,
    title: toolTitle(tool, args),
    kind: toolKind(tool),
    status,
    rawInput: args,
  };
}

function toolResultUpdate(id: string, ok: boolean, content: string): acp.SessionUpdate {
  return {
    sessionUpdate: "tool_call_update",
    toolCallId: id,
    status: ok ? "completed" : "failed",
    content: [{ type: "content", content: text(content) }],
    rawOutput: { content },
  };
}

function agentText(value: string): acp.SessionUpdate {
  return { sessionUpdate: "agent_message_chunk", content: text(value) };
}

/**
 * The update for a live event, or null when the event has no ACP form. `streamed` says whether the
 * assistant text of a `message` event was already sent as deltas.
 */
export function eventUpdate(event: HermesEvent, streamed: boolean): acp.SessionUpdate | null {
  switch (event.type) {
    case "message": {
      const { content } = event;
      if (event.role === "assistant") return content && !streamed ? agentText(content) : null;
      if (event.source !== "acp" && content) {
        return { sessionUpdate: "user_message_chunk", content: text(content) };
      }
      return null;
    }
    case "tool.call":
      return toolCallUpdate(event.tool_call_id, event.tool, event.args, "in_progress");
    case "tool.result":
      return toolResultUpdate(event.tool_call_id, event.status === "ok", event.content);
    default:
      return null;
  }
}

/** The stored transcript as the updates that rebuild it in the editor (`session/load`). */
export function historyUpdates(messages: readonly StoredMessage[]): acp.SessionUpdate[] {
  const updates: acp.SessionUpdate[] = [];
  const calls = new Map<string, string>();
  for (const m of messages) {
    if (m.role === "user" && m.content) {
      updates.push({ sessionUpdate: "user_message_chunk", content: text(m.content) });
    }
    if (m.role === "assistant") {
      if (m.content) updates.push(agentText(m.content));
      for (const call of m.tool_calls ?? []) {
        calls.set(call.id, call.name);
        updates.push(toolCallUpdate(call.id, call.name, parseArgs(call.arguments), "pending"));
      }
    }
    if (m.role === "tool" && m.tool_call_id !== undefined && calls.has(m.tool_call_id)) {
      updates.push(toolResultUpdate(m.tool_call_id, !/^(error|denied|blocked):/.test(m.content), m.content));
    }
  }
  return updates;
}

export function commandsUpdate(
  commands: readonly { name: string; description: string }[],
): acp.SessionUpdate {
  return {
    sessionUpdate: "available_commands_update",
    availableCommands: commands.map((c) => {
      // A description that spells the usage ("…: /loop [every] INTERVAL PROMPT") yields the input hint.
      const usage = new RegExp(`/${c.name}\\s+(.+)$`).exec(c.description)?.[1];
      return { name: c.name, description: c.description, ...(usage ? { input: { hint: usage } } : {}) };
    }),
  };
}

function asArgs(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
}

function parseArgs(raw: string): Record<string, unknown> {
  try {
    return asArgs(JSON.parse(raw));
  } catch {
    return {};
  }
}
