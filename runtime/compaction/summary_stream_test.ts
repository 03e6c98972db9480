/**
 * Summary calls stream when the model streams: the compactor's idle timeout is reset by
 * every streamed piece, so a slow but healthy summary model finishes; without streaming the same wait is idle.
 * The real OpenAI provider talks to a server that releases each piece of its answer when the test says so,
 * while the test moves a manual clock: no real time is measured.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { createOpenAIProvider } from "../providers/openai.ts";
import type { Provider } from "../providers/provider.ts";
import { compactorFor, fixture, SHORT_SUMMARY, transcript } from "./_testing.ts";
import { sseChunk } from "../../tests/_testing/openai_server.ts";

const PIECES = 6;

/** An OpenAI-compatible endpoint whose answer comes out one gated piece at a time. */
function gatedServer() {
  const gates = Array.from({ length: PIECES + 1 }, () => Promise.withResolvers<void>());
  const size = Math.floor(SHORT_SUMMARY.length / PIECES);
  const pieces = Array.from({ length: PIECES }, (_, i) => SHORT_SUMMARY.slice(i * size, (i + 1) * size));
  pieces[PIECES - 1] += SHORT_SUMMARY.slice(PIECES * size);
  const received = Promise.withResolvers<void>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (request) => {
    const body = await request.json();
    received.resolve();
    const encoder = new TextEncoder();
    if (!body.stream) {
      for (const gate of gates) await gate.promise;
      return Response.json({
        id: "c1",
        object: "chat.completion",
        created: 0,
        model: "m",
        choices: [{
          index: 0,
          message: { role: "assistant", content: SHORT_SUMMARY },
          finish_reason: "stop",
        }],
      });
    }
    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (i === 0) controller.enqueue(encoder.encode(sseChunk({ role: "assistant", content: "" })));
        await gates[i]!.promise;
        if (i < PIECES) controller.enqueue(encoder.encode(sseChunk({ content: pieces[i] })));
        else {
          controller.enqueue(encoder.encode(sseChunk({}, "stop") + "data: [DONE]\n\n"));
          controller.close();
        }
        i++;
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    gates,
    received: received.promise,
    close: () => server.shutdown(),
  };
}

/** The provider, with a way to wait for the next streamed piece to reach the compactor. */
function observed(inner: Provider) {
  let seen = Promise.withResolvers<void>();
  const provider: Provider = {
    name: inner.name,
    complete: (request, options = {}) =>
      inner.complete(request, {
        ...options,
        onDelta: (text) => {
          options.onDelta?.(text);
          seen.resolve();
        },
      }),
  };
  return {
    provider,
    nextDelta: async () => {
      await seen.promise;
      seen = Promise.withResolvers<void>();
    },
  };
}

for (const stream of [true, false]) {
  Deno.test(`summary call ${stream ? "streams: a slow, steady model finishes" : "does not stream: the same wait is idle"}`, async () => {
    const clock = new ManualClock();
    await using fx = await fixture(clock);
    await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
    const server = gatedServer();
    try {
      const inner = createOpenAIProvider({ model: "m", apiKey: "k", baseURL: server.url, stream, clock });
      const { provider, nextDelta } = observed(inner);
      const compactor = compactorFor(fx, {
        provider,
        summary_idle_timeout_ms: 1_000,
        summary_timeout_ms: 60_000,
      });
      const pending = compactor.compact(fx.sessionId, {});
      if (stream) {
        // Each piece comes 800 ms after the last: 4.8 s in all, never 1 s without progress.
        for (let i = 0; i < PIECES; i++) {
          server.gates[i]!.resolve();
          await nextDelta();
          await clock.advance(800);
        }
        server.gates[PIECES]!.resolve();
        const outcome = await pending;
        assert.equal(outcome.outcome, "committed", outcome.note);
        const summary = (await fx.store.activeMessages(fx.sessionId)).find((m) => m.kind === "summary")!;
        assert.ok(summary.content.endsWith(SHORT_SUMMARY));
      } else {
        // The request is in (the idle timer runs since the call started); the model thinks for 1 s.
        await server.received;
        await clock.advance(1_000);
        const outcome = await pending;
        assert.equal(outcome.outcome, "failed");
        assert.equal(outcome.note, "summary call failed: the summary call was idle for 1000 ms");
        for (const gate of server.gates) gate.resolve();
      }
    } finally {
      for (const gate of server.gates) gate.resolve();
      await server.close();
    }
  });
}
