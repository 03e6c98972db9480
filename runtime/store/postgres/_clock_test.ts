import assert from "node:assert/strict";
import { ServerClock } from "./_clock.ts";
import type { Sql } from "./_db.ts";

/** A stand-in for the pool that answers the clock query with a server an hour ahead of this host. */
function serverAhead(ms: number): Sql {
  const query = () => Promise.resolve([{ ms: String(Date.now() + ms) }]);
  return query as unknown as Sql;
}

Deno.test("server clock: this host's time plus its measured offset from the server", async () => {
  const clock = new ServerClock(serverAhead(3_600_000));
  await clock.sync();
  const skew = clock.now() - Date.now() - 3_600_000;
  assert.ok(Math.abs(skew) < 50, `off by ${skew} ms`);
  assert.ok(Number.isInteger(clock.now()));
  await clock.settle();
});
