/**
 * runtime/store/open.ts: the backend a location names, opened with its fault classifier — a SQLite file
 * (its directory created) or a postgres:// URL (the real server of HERMES_TEST_POSTGRES_URL; skipped with
 * the reason without it, except under CI).
 */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { ExitCode, RunError, ValidationError } from "../core/errors.ts";
import { openStore, storeFailure } from "./open.ts";
import { scratchDatabase, URL_VARIABLE } from "./postgres/_testing.ts";
import { StoreUnavailableError } from "./retry.ts";

const serverUrl = Deno.env.get(URL_VARIABLE);

Deno.test("openStore: a file path is a SQLite store, its directory created private, on the clock given", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-open-" });
  try {
    const clock = new ManualClock(Date.UTC(2026, 0, 5));
    const store = await openStore(`${dir}/home/state.db`, { clock, host: "h" });
    try {
      assert.equal(store.clock, clock);
      const session = await store.createSession({ job: "j" });
      assert.equal((await store.getSession(session.id))?.created_at, clock.now());
      assert.equal((await Deno.stat(`${dir}/home`)).mode! & 0o777, 0o700);
    } finally {
      await store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openStore: a file that is not SQLite is bad input naming it; storeFailure says the same", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-open-" });
  try {
    const path = `${dir}/state.db`;
    await Deno.writeTextFile(
      path,
      "not a database, only text that is long enough to be read as a header\n".repeat(20),
    );
    const error = await openStore(path, { clock: new ManualClock(0), host: "h" }).then(
      () => assert.fail("expected the store to be refused"),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof ValidationError, String(error));
    assert.equal(error.exitCode, ExitCode.invalid);
    assert.match(error.message, new RegExp(`^Cannot use the store ${path}: it is not a SQLite database`));
    assert.equal(storeFailure(new Error("other"), path), null);
    assert.equal(storeFailure(error.cause, `postgres://u@h/db`), null);
    assert.ok(storeFailure(error.cause, path) instanceof ValidationError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openStore: an unreachable postgres:// URL is waited out with its classifier, then unavailable", async () => {
  const notices: string[] = [];
  const error = await openStore("postgres://hermes:secret@/postgres?host=/nonexistent-hermes-socket&port=1", {
    clock: new ManualClock(0),
    host: "h",
    retry: { budgetMs: 300, onRetry: (notice) => notices.push(`${notice.operation}: ${notice.error}`) },
  }).then(() => assert.fail("expected no store"), (caught: unknown) => caught);
  // A missing socket is a transient fault of PostgreSQL (a server restarting), so it was retried.
  assert.ok(error instanceof StoreUnavailableError, String(error));
  assert.ok(error instanceof RunError);
  assert.ok(notices.length >= 1, "at least one retry was announced");
  assert.ok(!error.message.includes("secret") && !notices.join("").includes("secret"), error.message);
});

if (serverUrl) {
  Deno.test("openStore: a postgres:// URL is a PostgreSQL store on the database's clock", async () => {
    await using db = await scratchDatabase(serverUrl, "hermes_open");
    const given = new ManualClock(0);
    const store = await openStore(db.url, { clock: given, host: "h" });
    try {
      assert.notEqual(store.clock, given);
      // The database's clock, not the frozen one given: within a day of this host's.
      assert.ok(Math.abs(store.clock.now() - Date.now()) < 86_400_000);
      const session = await store.createSession({ job: "j" });
      assert.equal((await store.getSession(session.id))?.job, "j");
    } finally {
      await store.close();
    }
  });
} else if (Deno.env.get("CI") === "true") {
  Deno.test(`openStore: ${URL_VARIABLE} is set under CI`, () => {
    assert.fail(`${URL_VARIABLE} is not set, so the PostgreSQL half of openStore did not run`);
  });
} else {
  Deno.test({ name: `openStore: PostgreSQL (skipped: ${URL_VARIABLE} is not set)`, ignore: true, fn() {} });
}
