import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { Clock } from "../core/clock.ts";
import { backoffDelay, type RetryNotice, StoreUnavailableError, withRetry } from "./retry.ts";
import { retryingStore, retryScope } from "./retrying_store.ts";
import { openSqliteStore } from "./sqlite/sqlite_store.ts";
import { isTransientSqliteError } from "./sqlite/faults.ts";
import { isTransientPgError } from "./postgres/faults.ts";

/** A clock whose sleeps pass at once, moving its time: the retry schedule runs in no real time. */
function instantClock(): Clock & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: (ms) => {
      slept.push(ms);
      now += ms;
      return Promise.resolve();
    },
  };
}

const transient = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });

Deno.test("backoff doubles from the base up to the cap, each delay between half and all of it", () => {
  for (
    const [random, expected] of [[0, [50, 100, 200, 400, 2500, 2500]], [0.999, [100, 200, 400, 800, 4998]]]
  ) {
    const policy = { budgetMs: 60_000, clock: instantClock(), random: () => random as number };
    const delays = [1, 2, 3, 4, 7, 12].map((attempt) => backoffDelay(attempt, policy));
    assert.deepEqual(delays.slice(0, (expected as number[]).length), expected);
  }
});

Deno.test("a transient fault is retried until the operation succeeds, each retry noticed", async () => {
  const clock = instantClock();
  const notices: RetryNotice[] = [];
  let calls = 0;
  const value = await withRetry("appendMessages", () => {
    calls++;
    return calls < 4 ? Promise.reject(transient) : Promise.resolve("stored");
  }, {
    policy: { budgetMs: 60_000, clock, random: () => 0.5 },
    transient: isTransientPgError,
    where: "db",
    onRetry: (n) => notices.push(n),
  });
  assert.equal(value, "stored");
  assert.equal(calls, 4);
  assert.deepEqual(notices.map((n) => [n.operation, n.attempt, n.delay_ms]), [
    ["appendMessages", 1, 75],
    ["appendMessages", 2, 150],
    ["appendMessages", 3, 300],
  ]);
  assert.deepEqual(clock.slept, [75, 150, 300]);
  assert.match(notices[0]!.error, /ECONNREFUSED/);
});

Deno.test("past the budget the store is unavailable; a fault that is not transient is not retried", async () => {
  const clock = instantClock();
  const options = {
    policy: { budgetMs: 10_000, clock },
    transient: isTransientPgError,
    where: "postgres://h/db",
  };
  const failed = await withRetry("getSession", () => Promise.reject(transient), options).catch((e) => e);
  assert.ok(failed instanceof StoreUnavailableError);
  assert.equal(failed.reason, "store_unavailable");
  assert.equal(failed.exitCode, 1);
  assert.match(
    failed.message,
    /^Cannot use the store postgres:\/\/h\/db: connect ECONNREFUSED .* store\.retry is 10s\)$/,
  );
  // It waited out the whole budget, never more.
  assert.equal(clock.now(), 10_000);

  const auth = Object.assign(new Error("password authentication failed"), { code: "28P01" });
  let calls = 0;
  const refused = await withRetry("connect", () => {
    calls++;
    return Promise.reject(auth);
  }, options).catch((e) => e);
  assert.equal(refused, auth);
  assert.equal(calls, 1);

  // store.retry 0s: the first fault is final.
  let once = 0;
  const none = await withRetry("x", () => {
    once++;
    return Promise.reject(transient);
  }, { ...options, policy: { budgetMs: 0, clock } }).catch((e) => e);
  assert.ok(none instanceof StoreUnavailableError);
  assert.equal(once, 1);
});

Deno.test("PostgreSQL faults: restart, starting up, lost connections and rollbacks are transient; bad input is not", () => {
  for (
    const code of [
      "57P01",
      "57P03",
      "40001",
      "40P01",
      "ECONNREFUSED",
      "ECONNRESET",
      "ENOENT",
      "CONNECTION_CLOSED",
    ]
  ) {
    assert.ok(isTransientPgError(Object.assign(new Error(code), { code })), code);
  }
  for (const code of ["28P01", "3D000", "42P01", "23505", "ENOTFOUND", "CONNECTION_ENDED"]) {
    assert.ok(!isTransientPgError(Object.assign(new Error(code), { code })), code);
  }
});

Deno.test("SQLite busy past its timeout is waited out by the retrying store; the write happens once", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/state.db`;
  const notices: RetryNotice[] = [];
  const inner = openSqliteStore(path, { busyTimeoutMs: 20 });
  const store = retryingStore(inner, {
    policy: {
      budgetMs: 30_000,
      clock: { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
    },
    transient: isTransientSqliteError,
    where: path,
    onRetry: (n) => notices.push(n),
  });
  const session = await store.createSession({ job: "j" });
  // Another process holds the write lock for a while.
  const other = new DatabaseSync(path);
  other.exec("BEGIN IMMEDIATE");
  const released = new Promise<void>((resolve) =>
    setTimeout(() => {
      other.exec("COMMIT");
      other.close();
      resolve();
    }, 400)
  );
  const scoped: RetryNotice[] = [];
  const view = retryScope(store, { onRetry: (n) => scoped.push(n) });
  const stored = await view.appendMessages(session.id, [{ role: "user", content: "hello" }]);
  await released;
  assert.equal(stored.length, 1);
  assert.ok(notices.length >= 1, "the busy store was retried");
  assert.equal(scoped.length, notices.length, "a scoped view tells its own listener too");
  assert.ok(notices.every((n) => n.operation === "appendMessages" && /locked/.test(n.error)));
  assert.deepEqual((await store.allMessages(session.id)).map((m) => m.content), ["hello"]);

  // A scope with a budget of 0 gives up at the first busy fault.
  const again = new DatabaseSync(path);
  again.exec("BEGIN IMMEDIATE");
  const impatient = retryScope(store, { budgetMs: 0 });
  const failed = await impatient.appendMessages(session.id, [{ role: "user", content: "x" }]).catch((e) => e);
  assert.ok(failed instanceof StoreUnavailableError, String(failed));
  // Once an operation gave up, the store counts as down: the next one (whatever its budget) tries once.
  const started = Date.now();
  const down = await store.appendMessages(session.id, [{ role: "user", content: "y" }]).catch((e) => e);
  assert.ok(down instanceof StoreUnavailableError, String(down));
  assert.match(down.message, /still unavailable since an earlier operation waited out store\.retry/);
  assert.ok(Date.now() - started < 10_000);
  again.exec("ROLLBACK");
  again.close();
  // Back: the next operation succeeds, and the store is up again.
  await store.appendMessages(session.id, [{ role: "user", content: "z" }]);
  assert.deepEqual((await store.allMessages(session.id)).map((m) => m.content), ["hello", "z"]);
  await store.close();
  await Deno.remove(dir, { recursive: true });
});
