/**
 * Steps are idempotent under SIGKILL, on PostgreSQL: the double-kill sequence and random kill schedules over
 * many seeds (tests/_testing/kill_cases.ts), each run in a fresh database on the test server. Without
 * HERMES_TEST_POSTGRES_URL it is skipped with a visible reason, except under CI=true.
 */
import assert from "node:assert/strict";
import { openPostgresStore } from "../../runtime/store/postgres/postgres_store.ts";
import { scratchDatabase, URL_VARIABLE } from "../../runtime/store/postgres/_testing.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { type Backend, doubleKill, killSchedules } from "../_testing/kill_cases.ts";

const serverUrl = Deno.env.get(URL_VARIABLE);

function pgTest(name: string, fn: (backend: Backend) => Promise<void>): void {
  const full = `kills (postgres): ${name}`;
  if (serverUrl) {
    Deno.test({
      name: full,
      ignore: withoutSandbox,
      fn: async () => {
        // One database per run: `--resume latest` names the run's own session.
        const databases: AsyncDisposable[] = [];
        try {
          await fn({
            name: "postgres",
            fresh: async () => {
              const db = await scratchDatabase(serverUrl, "hermes_kills");
              databases.push(db);
              return { storeArgs: ["--db", db.url], openStore: () => openPostgresStore(db.url) };
            },
          });
        } finally {
          for (const db of databases) await db[Symbol.asyncDispose]();
        }
      },
    });
  } else if (Deno.env.get("CI") === "true") {
    Deno.test(full, () => {
      assert.fail(`${URL_VARIABLE} is not set, so this PostgreSQL test did not run; .ci/run sets it`);
    });
  } else {
    Deno.test({ name: `${full} (skipped: ${URL_VARIABLE} is not set)`, ignore: true, fn() {} });
  }
}

pgTest(
  "killed twice in one step's model call, the step is stored and sent once, its tools run once",
  doubleKill,
);
pgTest(
  "random kill schedules (1–3 per step) keep every step once and every tool call answered",
  killSchedules,
);
