import assert from "node:assert/strict";
import { CappedBytes, readCapped } from "./_capped.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("CappedBytes keeps up to the limit and notes truncation", () => {
  const exact = new CappedBytes(5);
  assert.equal(exact.push(bytes("abc")), false);
  assert.equal(exact.push(bytes("de")), false);
  assert.equal(exact.text(), "abcde");
  assert.equal(exact.push(bytes("f")), true);
  assert.equal(exact.text(), "abcde\n[output truncated at 5 bytes]");
});

Deno.test("readCapped stops early and cancels the stream when asked", async () => {
  let cancelled = false;
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      controller.enqueue(bytes("0123456789"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const into = new CappedBytes(25);
  await readCapped(stream, into, { stopWhenFull: true });
  assert.ok(cancelled);
  assert.ok(pulls <= 4);
  assert.equal(new TextDecoder().decode(into.bytes), "0123456789012345678901234");
});
