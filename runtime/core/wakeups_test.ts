import assert from "node:assert/strict";
import { Wakeups } from "./wakeups.ts";

Deno.test("Wakeups: notify aborts the signals watching its key, not another key's", () => {
  const wakeups = new Wakeups();
  const a1 = wakeups.watch("a");
  const a2 = wakeups.watch("a");
  const b = wakeups.watch("b");
  wakeups.notify("a");
  assert.equal(a1.signal.aborted, true);
  assert.equal(a2.signal.aborted, true);
  assert.equal(b.signal.aborted, false);
  a1.release();
  a2.release();
  b.release();
  assert.equal(wakeups.size, 0);
});

Deno.test("Wakeups: a notify before the watch does not abort it; a released watch is forgotten", () => {
  const wakeups = new Wakeups();
  wakeups.notify("a");
  const a = wakeups.watch("a");
  assert.equal(a.signal.aborted, false);
  a.release();
  assert.equal(wakeups.size, 0);
  wakeups.notify("a");
  assert.equal(a.signal.aborted, false, "released: not told any more");
});
