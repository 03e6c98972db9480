/** Behaviour every Clock must show; `drive` moves time forward for clocks that do not tick by themselves. */
import assert from "node:assert/strict";
import type { Clock } from "../../runtime/core/clock.ts";

export function clockContract(
  name: string,
  make: () => { clock: Clock; drive(ms: number): Promise<void> },
): void {
  Deno.test(`${name}: now() never goes backwards`, () => {
    const { clock } = make();
    const a = clock.now();
    const b = clock.now();
    assert.ok(Number.isFinite(a) && b >= a);
  });

  Deno.test(`${name}: sleep resolves once the time has passed`, async () => {
    const { clock, drive } = make();
    const start = clock.now();
    const slept = clock.sleep(20);
    await drive(20);
    await slept;
    assert.ok(clock.now() - start >= 19);
  });

  Deno.test(`${name}: sleep rejects with the abort reason`, async () => {
    const { clock } = make();
    const controller = new AbortController();
    const slept = clock.sleep(60_000, controller.signal);
    controller.abort(new Error("stop"));
    await assert.rejects(slept, /stop/);
    const already = AbortSignal.abort(new Error("before"));
    await assert.rejects(clock.sleep(10, already), /before/);
  });
}
