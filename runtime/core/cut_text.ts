/**
 * A text cut to a size with its head and tail kept around a marker saying how much was cut, why, and where
 * the whole text is: how a tool result too large for the window (compaction) or for the session's storage
 * ceiling (the agent) is stored.
 */

export const CUT_MARKER = "characters cut from this tool result";

/**
 * `content` in at most `limit` characters (when it is longer): its head and end around a marker that says
 * how much was cut, why, and where the whole text is (`archived: false`: that it was not kept). The marker
 * alone when `limit` has no room for more.
 */
export function cutText(
  content: string,
  limit: number,
  options: { why: string; sessionId: string; archived?: boolean },
): string {
  if (content.length <= limit) return content;
  const where = options.archived === false
    ? "the rest was not stored"
    : `the full text is archived: hermes sessions show ${options.sessionId} --all`;
  const marker = (omitted: number) => `\n\n[… ${omitted} ${CUT_MARKER} (${options.why}); ${where} …]\n\n`;
  // The marker's length depends on the count it prints; measure it with the largest count it can print.
  const keep = Math.max(0, limit - marker(content.length).length);
  const headChars = Math.ceil(keep / 2);
  const tailChars = keep - headChars;
  return content.slice(0, headChars) + marker(content.length - keep) +
    (tailChars > 0 ? content.slice(content.length - tailChars) : "");
}
