import assert from "node:assert/strict";
import { untilAborted } from "./stall.ts";

Deno.test("untilAborted: an abort ends a stream whose next item never comes; an unaborted stream yields every item", async () => {
  // A read that never settles: an aborted fetch whose body read the abort missed, keep-alives yielding nothing.
  const stuck: AsyncIterable<number> = {
    [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<number>>(() => {}) }),
  };
  const controller = new AbortController();
  const seen: number[] = [];
  const reading = (async () => {
    for await (const item of untilAborted(stuck, controller.signal)) seen.push(item);
  })();
  controller.abort(new Error("request_timeout"));
  await assert.rejects(reading, /request_timeout/);
  assert.deepEqual(seen, []);
  // The allowed neighbour: a stream that ends is read to its end, and closed.
  let closed = false;
  async function* items() {
    try {
      yield 1;
      yield 2;
    } finally {
      closed = true;
    }
  }
  const all: number[] = [];
  for await (const item of untilAborted(items(), new AbortController().signal)) all.push(item);
  assert.deepEqual(all, [1, 2]);
  assert.ok(closed);
});
