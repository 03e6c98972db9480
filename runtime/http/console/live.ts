/**
 * The console's live parts as Server-Sent Events: a page's live element opens one stream (static/console.js),
 * and the server sends the element's HTML again whenever it changed, which the page merges into what it shows
 * (an open <details> stays open, new transcript items are appended). The server looks when the run's news
 * wakes it (its own worker; on PostgreSQL any server's, by NOTIFY) and otherwise every `pollMs`; the browser
 * never polls while the stream holds. Each stream counts in its token's cap of open event streams, checks the
 * token again at every look (a revoked token ends it at once), and ends when the server stops.
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { Wakeups } from "../../core/wakeups.ts";
export { ANY_RUN } from "../../core/wakeups.ts";
import type { OpenStreams } from "../streams.ts";
import { problem } from "../problem.ts";
import type { ConsoleEnv, PageKit } from "./page.ts";

export interface LiveOptions {
  /** The event streams open in this server (shared with the API's: one cap per token). */
  streams: OpenStreams;
  /** Event streams open at once per token; one more is 429. */
  maxStreams: number;
  /** Notified with a run's id (and ANY_RUN) when a run changed. */
  wakeups?: Wakeups;
  /** Aborted when the server stops: streams end. */
  signal: AbortSignal;
  /** A stream with nothing to send for this long sends a comment, so proxies keep it open (ms). */
  pingMs: number;
}

/**
 * Streams `render()`'s HTML as `html` events while it changes; `ended()` after a look ends the stream with
 * an `end` event (the page then shows what it has).
 */
export function liveStream(
  c: Context<ConsoleEnv>,
  kit: PageKit,
  live: LiveOptions,
  part: { key: string; render(): Promise<{ html: string; ended: boolean }> },
): Response {
  const token = c.get("token");
  const session = c.get("session");
  const open = live.streams.count(token.id);
  if (open >= live.maxStreams) {
    // As the API's event streams answer: problem+json, for the page's EventSource or any client.
    return problem(429, `Token ${token.id} has ${open} event streams open, the most it may`, {
      headers: { "retry-after": "1" },
    });
  }
  live.streams.open(token.id);
  return streamSSE(c, async (stream) => {
    const done = new AbortController();
    stream.onAbort(() => done.abort());
    const stop = AbortSignal.any([done.signal, live.signal]);
    let sent: string | undefined;
    let lastWrite = kit.clock.now();
    try {
      while (!stop.aborted) {
        // Watched before the look, so news stored between the look and the sleep still wakes it.
        const news = live.wakeups?.watch(part.key);
        try {
          const check = await kit.app.authenticate(session.token);
          if (!check.ok) {
            await stream.writeSSE({
              event: "signout",
              data: `/signin?reason=${encodeURIComponent(`the token is ${check.reason}`)}`,
            });
            return;
          }
          const { html, ended } = await part.render();
          if (html !== sent) {
            await stream.writeSSE({ event: "html", data: html });
            sent = html;
            lastWrite = kit.clock.now();
          }
          if (ended) {
            await stream.writeSSE({ event: "end", data: "" });
            return;
          }
          if (kit.clock.now() - lastWrite >= live.pingMs) {
            await stream.write(": ping\n\n");
            lastWrite = kit.clock.now();
          }
          const wake = news ? AbortSignal.any([stop, news.signal]) : stop;
          if (!wake.aborted) await kit.clock.sleep(kit.pollMs, wake).catch(() => {});
        } finally {
          news?.release();
        }
      }
    } finally {
      live.streams.close(token.id);
    }
  });
}
