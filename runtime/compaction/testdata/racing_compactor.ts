/**
 * A compacting process for the race tests: opens the store (a SQLite file, or a PostgreSQL URL and schema),
 * runs one forced compaction of the session and prints its outcome as one JSON line. Its summary model
 * prints "summarising" when it is called and answers once "go" arrives on stdin, so the test decides when
 * the summary returns. LEASE_MS is the lifetime of the compaction lease.
 * Usage: deno run -A racing_compactor.ts SESSION_ID LEASE_MS (DB | URL SCHEMA)
 */
import { type Clock, systemClock } from "../../core/clock.ts";
import { EventBus } from "../../core/events.ts";
import { noHooks } from "../../core/hooks.ts";
import { silentLogger } from "../../core/log.ts";
import type { Provider } from "../../providers/provider.ts";
import { openPostgresStore } from "../../store/postgres/postgres_store.ts";
import { openSqliteStore } from "../../store/sqlite/sqlite_store.ts";
import type { Store } from "../../store/store.ts";
import { createCompactor } from "../compactor.ts";

const [sessionId, leaseMs, location, schema] = Deno.args as [string, string, string, string?];
let store: Store;
let clock: Clock = systemClock;
if (schema === undefined) store = openSqliteStore(location);
else {
  const pg = await openPostgresStore(location, { schema, maxConnections: 2 });
  store = pg;
  clock = pg.clock; // leases are judged on the database's clock
}
const say = (line: string) => Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));

async function untilGo(): Promise<void> {
  let input = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    input += chunk;
    if (input.includes("go\n")) return;
  }
  throw new Error("stdin closed before go");
}

const provider: Provider = {
  name: "racing-test",
  async complete() {
    say("summarising");
    await untilGo();
    return {
      message: { role: "assistant", content: "## Goal\nwin the race\n## Progress\nnone" },
      usage: null,
      finish_reason: "stop",
    };
  },
};
const compactor = createCompactor({
  store,
  provider,
  model: "m",
  context_window: 4000,
  config: { prune_tool_results: false },
  events: new EventBus(clock),
  hooks: noHooks,
  clock,
  log: silentLogger,
  lease_ttl_ms: Number(leaseMs),
});
say(JSON.stringify(await compactor.compact(sessionId, {})));
await store.close();
