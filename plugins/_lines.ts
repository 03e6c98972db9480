/** Line splitting for the plugin protocol's pipes. */

/** A line longer than this is not a protocol message; the sender is misbehaving. */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;

/** Calls `onLine` for each line `reader` reads; `onOverflow` fires (and the overlong line is dropped). */
export async function readLines(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  onLine: (line: string) => void,
  onOverflow: () => void,
): Promise<void> {
  // A reader loop, not `for await`: per-message overhead matters for the hook round trip.
  const decoder = new TextDecoder();
  let buffered = "";
  let scanned = 0; // no newline before this offset: a long line is not rescanned for every chunk
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf("\n", scanned)) >= 0) {
      onLine(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      scanned = 0;
    }
    scanned = buffered.length;
    if (buffered.length > MAX_LINE_CHARS) {
      onOverflow();
      buffered = "";
      scanned = 0;
    }
  }
  if (buffered) onLine(buffered);
}
