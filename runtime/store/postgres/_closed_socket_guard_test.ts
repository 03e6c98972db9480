import assert from "node:assert/strict";
import { setImmediate } from "node:timers";
import { guardClosedSocketWrites, isClosedSocketWrite } from "./_closed_socket_guard.ts";

/** The driver's shape: a queued write that runs once the connection nulled its socket. */
function queueWriteOnClosedSocket(): Promise<void> {
  const socket: { write(chunk: string): boolean } | null = null;
  return new Promise((done) => {
    setImmediate(function nextWrite() {
      setTimeout(done, 0);
      socket!.write("chunk");
    });
  });
}

Deno.test("closed-socket guard: the driver's write on a closed socket does not end the process", async () => {
  using _ = guardClosedSocketWrites();
  await queueWriteOnClosedSocket();
  await new Promise((r) => setTimeout(r, 10));
});

Deno.test("closed-socket guard: only that error is recognised", () => {
  const driver = new TypeError("Cannot read properties of null (reading 'write')");
  driver.stack =
    `${driver.message}\n    at Immediate.nextWrite (file:///x/postgres/3.4.9/src/connection.js:255:22)`;
  assert.equal(isClosedSocketWrite(driver), true);
  const elsewhere = new TypeError("Cannot read properties of null (reading 'write')");
  elsewhere.stack = `${elsewhere.message}\n    at flush (file:///x/runtime/tools/shell.ts:1:1)`;
  assert.equal(isClosedSocketWrite(elsewhere), false);
  assert.equal(isClosedSocketWrite(new TypeError("Cannot read properties of null (reading 'end')")), false);
  assert.equal(isClosedSocketWrite(new Error("Cannot read properties of null (reading 'write')")), false);
  assert.equal(isClosedSocketWrite("nextWrite"), false);
});
