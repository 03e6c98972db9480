/**
 * A tool result larger than `max_tool_result` of the window is cut when it is stored: the model gets its head
 * and tail around a marker that says how much was cut and where the whole text is; the whole text is stored
 * too, archived (not in the active transcript), so `hermes sessions show ID --all` still shows it.
 */
import type { AppendMessage } from "../store/store.ts";
import { cutText } from "../core/cut_text.ts";

export { CUT_MARKER, cutText } from "../core/cut_text.ts";

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
