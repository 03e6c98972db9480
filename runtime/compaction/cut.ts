/**
 * A tool result larger than `max_tool_result` of the window is cut when it is stored: the model gets its head
 * and tail around a marker that says how much was cut and where the whole text is; the whole text is stored
 * too, archived (not in the active transcript), so `hermes sessions show ID --all` still shows it.
 */
import type { AppendMessage } from "../store/store.ts";

export const CUT_MARKER = "characters cut from this tool result";

/** The rows to append for a tool result: itself, or its full text archived followed by the cut copy. */
export function fitToolResult(
  message: AppendMessage,
  options: { maxTokens: number; sessionId: string },
): AppendMessage[] {
  const limit = options.maxTokens * 4;
  const { content } = message;
  if (content.length <= limit) return [message];
  const cut = cutText(content, limit, {
    why: "it was larger than compaction.max_tool_result",
    sessionId: options.sessionId,
  });
  return [{ ...message, active: false }, { ...message, content: cut }];
}

/**
 * `content` in at most `limit` characters (when it is longer): its head and end around a marker that says
 * how much was cut, why, and where the whole text is.
 */
export function cutText(content: string, limit: number, options: { why: string; sessionId: string }): string {
  if (content.length <= limit) return content;
  const marker = (omitted: number) =>
    `\n\n[… ${omitted} ${CUT_MARKER} (${options.why}); ` +
    `the full text is archived: hermes sessions show ${options.sessionId} --all …]\n\n`;
  // The marker's length depends on the count it prints; measure it with the largest count it can print.
  const keep = Math.max(0, limit - marker(content.length).length);
  const headChars = Math.ceil(keep / 2);
  const tailChars = keep - headChars;
  return content.slice(0, headChars) + marker(content.length - keep) +
    (tailChars > 0 ? content.slice(content.length - tailChars) : "");
}
