/**
 * The console's live streams: a live part's HTML as Server-Sent Events, sent again when a run's news wakes the
 * stream (not before); each stream counts in its token's cap (one more is 429, the neighbour under the cap is
 * served); the page's scope is needed; a token revoked while its stream is open ends the stream with a
 * sign-out event.
 */
import assert from "node:assert/strict";
import { ANY_RUN, Wakeups } from "../../core/wakeups.ts";
import { consoleFixture } from "./_testing.ts";

/** Reads SSE events (`event` and `data`) from a response body, one at a time. */
function events(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    async next(): Promise<{ event: string; data: string }> {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith(":")) continue;
          const lines = block.split("\n");
          const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "message";
          const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          return { event, data };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("the stream ended");
        buffer += value;
      }
    },
    cancel: () => reader.cancel(),
  };
}

const submit = (fx: Awaited<ReturnType<typeof consoleFixture>>, job: string) =>
  fx.store.submitRun({ job, job_path: null, job_snapshot: "{}", inputs: {}, now: fx.clock.now() });

Deno.test("console live: the runs list streams its rows again when a run's news wakes it", async () => {
  const wakeups = new Wakeups();
  await using fx = await consoleFixture({ runEvents: wakeups });
  const { cookie } = await fx.session("runs:read");
  await submit(fx, "first");
  const response = await fx.open("/runs/stream", { cookie });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /text\/event-stream/);
  const stream = events(response);
  try {
    const first = await stream.next();
    assert.equal(first.event, "html");
    assert.match(first.data, /^<tbody id="runs-rows"/);
    assert.match(first.data, />first</);
    const { run } = await submit(fx, "second");
    // Nothing was sent yet: the manual clock has not moved, so only the wake-up makes the stream look.
    wakeups.notify(ANY_RUN);
    const second = await stream.next();
    assert.equal(second.event, "html");
    assert.match(second.data, new RegExp(`data-run="${run.id}"`));
  } finally {
    await stream.cancel();
  }
});

Deno.test("console live: streams count in the token's cap; the page's scope is needed; a revoked token is signed out", async () => {
  await using fx = await consoleFixture({ maxStreams: 2 });
  const reader = await fx.session("runs:read");
  const open = [];
  try {
    for (let i = 0; i < 2; i++) {
      const response = await fx.open("/runs/stream", { cookie: reader.cookie });
      assert.equal(response.status, 200, "under the cap");
      const stream = events(response);
      open.push(stream);
      assert.equal((await stream.next()).event, "html");
    }
    const over = await fx.fetchPage("/runs/stream", { cookie: reader.cookie });
    assert.equal(over.response.status, 429);
    assert.equal(over.response.headers.get("retry-after"), "1");
    assert.equal(over.response.headers.get("content-type"), "application/problem+json");
    // Another token has a cap of its own.
    const other = await fx.session("runs:read");
    const theirs = await fx.open("/runs/stream", { cookie: other.cookie });
    assert.equal(theirs.status, 200);
    await theirs.body?.cancel();

    const approver = await fx.session("approvals");
    const refused = await fx.fetchPage("/runs/stream", { cookie: approver.cookie });
    assert.equal(refused.response.status, 403);

    await fx.app.revokeToken(reader.tokenId);
    await fx.clock.advance(60_000);
    const last = await open[0]!.next();
    assert.equal(last.event, "signout");
    assert.match(last.data, /^\/signin\?reason=the%20token%20is%20revoked/);
  } finally {
    for (const stream of open) await stream.cancel();
  }
});
