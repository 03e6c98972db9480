/**
 * The store contract against a real PostgreSQL server, named by HERMES_TEST_POSTGRES_URL (libpq URI form,
 * e.g. postgres://postgres@/postgres?host=/tmp/pg&port=5433; `.ci/run` starts a throwaway cluster and sets
 * it). Each store the contract opens lives in a fresh schema, dropped when the test ends. Without the
 * variable the tests are skipped with a visible reason, except under CI=true, where that is a failure.
 */
import assert from "node:assert/strict";
import { ValidationError } from "../../core/errors.ts";
import { type OpenStore, storeContract } from "../../../tests/contracts/store.ts";
import { liveHolder } from "../../../tests/contracts/store/_testing.ts";
import { migrations } from "./_migrations.ts";
import { admin, freshSchema, URL_VARIABLE } from "./_testing.ts";
import { isTransientPgError } from "./faults.ts";
import { openPostgresStore, type PostgresStore } from "./postgres_store.ts";

const url = Deno.env.get(URL_VARIABLE);
const APPENDER = new URL("./testdata/append_messages.ts", import.meta.url).pathname;

function pgStore(serverUrl: string): OpenStore {
  return async (options = {}) => {
    const schema = freshSchema();
    const stores: PostgresStore[] = [];
    const open = async () => {
      const store = await openPostgresStore(serverUrl, { ...options, schema });
      stores.push(store);
      return store;
    };
    const store = await open();
    return {
      store,
      connect: open,
      async appendFromProcess(sessionId, count, tag) {
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", APPENDER, serverUrl, schema, sessionId, String(count), tag],
          stdout: "null",
          stderr: "piped",
        }).output();
        assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      },
      async [Symbol.asyncDispose]() {
        for (const s of stores) await s.close();
        await admin(serverUrl, (sql) => sql`DROP SCHEMA ${sql(schema)} CASCADE`);
      },
    };
  };
}

if (url) {
  storeContract("postgres", pgStore(url));
  postgresTests(url);
} else if (Deno.env.get("CI") === "true") {
  Deno.test(`postgres: ${URL_VARIABLE} is set under CI`, () => {
    assert.fail(`${URL_VARIABLE} is not set, so the PostgreSQL store contract did not run; .ci/run sets it`);
  });
} else {
  console.log(`postgres store tests skipped: set ${URL_VARIABLE}=postgres://… to run them`);
  Deno.test({
    name: `postgres: store contract (skipped: ${URL_VARIABLE} is not set)`,
    ignore: true,
    fn() {},
  });
}

function postgresTests(serverUrl: string): void {
  Deno.test("postgres: reopening does not re-migrate; a newer schema version is refused", async () => {
    const schema = freshSchema();
    try {
      const first = await openPostgresStore(serverUrl, { schema });
      const id = (await first.createSession({ job: "j" })).id;
      await first.close();
      const second = await openPostgresStore(serverUrl, { schema });
      assert.equal((await second.getSession(id))?.job, "j");
      await second.close();
      await admin(serverUrl, async (sql) => {
        const rows = await sql`SELECT version FROM ${sql(schema)}.schema_version ORDER BY version`;
        assert.deepEqual(rows.map((r) => Number(r.version)), migrations.map((_, i) => i + 1));
        await sql`INSERT INTO ${sql(schema)}.schema_version VALUES (${migrations.length + 1}, 0)`;
      });
      await assert.rejects(openPostgresStore(serverUrl, { schema }), (error: Error) => {
        assert.ok(error instanceof ValidationError);
        assert.equal(error.exitCode, 2);
        assert.match(
          error.message,
          new RegExp(`its schema version is ${migrations.length + 1}, newer than this Hermes supports`),
        );
        return true;
      });
    } finally {
      await admin(serverUrl, (sql) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`);
    }
  });

  Deno.test("postgres: processes opening a new store at once migrate it once", async () => {
    const schema = freshSchema();
    try {
      const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(serverUrl, { schema })));
      for (const store of stores) await store.close();
      await admin(serverUrl, async (sql) => {
        const rows = await sql`SELECT count(*) AS n FROM ${sql(schema)}.schema_version`;
        assert.equal(Number(rows[0]!.n), migrations.length);
      });
    } finally {
      await admin(serverUrl, (sql) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`);
    }
  });

  Deno.test("postgres: rows are stamped by the database's clock unless a clock is given", async () => {
    await using fx = await pgStore(serverUrl)();
    const store = fx.store as PostgresStore;
    const before = Date.now();
    const session = await store.createSession({ job: "j" });
    // One machine, so the server's clock is this one, give or take the offset's measurement.
    assert.ok(Math.abs(session.created_at - before) < 1_000, `${session.created_at} vs ${before}`);
    assert.ok(Math.abs(store.clock.now() - Date.now()) < 1_000);
  });

  Deno.test("postgres: eight connections racing for the same slots: one run per job, never two live", async () => {
    await using fx = await pgStore(serverUrl)();
    const stores = [fx.store, ...await Promise.all(Array.from({ length: 7 }, () => fx.connect()))];
    const lease = { now: Date.now(), lease_ms: 60_000 };
    const jobs = Array.from({ length: 20 }, (_, k) => `job-${k}`);
    // Claimer i claims slot i of every job: only one slot of a job may start, whoever gets there first.
    const outcomes = await Promise.all(
      stores.map((store, i) => store.claimSlots(jobs.map((job) => ({ job, slot: i })), liveHolder(), lease)),
    );
    for (const [k, job] of jobs.entries()) {
      const mine = outcomes.map((batch) => batch[k]!.outcome);
      assert.equal(mine.filter((o) => o === "claimed").length, 1, `${job}: ${mine.join(", ")}`);
      assert.equal(mine.filter((o) => o === "overrun").length, 7, `${job}: ${mine.join(", ")}`);
    }
    const live = await fx.store.liveClaims();
    assert.deepEqual(live.map((r) => r.job).sort(), [...jobs].sort());
    // And the same slot from every connection at once: claimed once.
    const again = await Promise.all(
      stores.map((store) => store.claimSlots([{ job: "one", slot: 7 }], liveHolder(), lease)),
    );
    assert.deepEqual(again.map(([o]) => o!.outcome).sort(), ["claimed", ...Array(7).fill("taken")]);
  });

  Deno.test("postgres: eight connections racing for one compaction lease: one holder", async () => {
    await using fx = await pgStore(serverUrl)();
    const stores = [fx.store, ...await Promise.all(Array.from({ length: 7 }, () => fx.connect()))];
    const { id } = await fx.store.createSession({ job: "j" });
    const now = Date.now();
    const results = await Promise.all(
      stores.map((store) => store.acquireLease({ sessionId: id, holder: liveHolder(), now, ttlMs: 60_000 })),
    );
    const winners = results.filter((r) => r.acquired);
    assert.equal(winners.length, 1);
    const holder = winners[0]!.acquired ? winners[0]!.lease.holder.nonce : "";
    for (const r of results) if (!r.acquired) assert.equal(r.current.holder.nonce, holder);
  });

  Deno.test("postgres: a NUL in message text is stored as U+FFFD (PostgreSQL text cannot hold it)", async () => {
    await using fx = await pgStore(serverUrl)();
    const { store } = fx;
    const { id } = await store.createSession({ job: "j" });
    const [row] = await store.appendMessages(id, [{ role: "tool", content: "a\0b", tool_call_id: "c" }]);
    assert.equal(row!.content, "a\uFFFDb");
    assert.deepEqual((await store.activeMessages(id)).map((m) => m.content), ["a\uFFFDb"]);
    await assert.rejects(
      store.appendMessages("missing", [{ role: "user", content: "x" }]),
      /no such session/,
    );
  });
}

Deno.test("postgres: an unreachable server rejects with its transient fault, for the caller to wait out", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const target = `postgres://hermes:s3cret@/hermes?host=${dir}&port=5999`;
    await assert.rejects(openPostgresStore(target), (error: Error) => {
      // Not a ValidationError: a server that is restarting looks like this, and is waited out (retry.ts).
      assert.ok(!(error instanceof ValidationError));
      assert.ok(isTransientPgError(error), String(error));
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
