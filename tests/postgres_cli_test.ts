/**
 * The CLI on a PostgreSQL store (DESIGN §14), through real subprocesses and a real server named by
 * HERMES_TEST_POSTGRES_URL (`.ci/run` starts one). Each test gets a fresh database, dropped at the end.
 * Without the variable the server tests are skipped with a visible reason, except under CI=true.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { clientOptions, parsePostgresUrl } from "../runtime/store/postgres/_url.ts";
import { hermes, tempDir, writeFiles } from "./_cli.ts";

const URL_VARIABLE = "HERMES_TEST_POSTGRES_URL";
const serverUrl = Deno.env.get(URL_VARIABLE);

/** A fresh, empty database on the test server; its URL, and a function that drops it. */
async function freshDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `hermes_cli_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const admin = () => postgres({ ...clientOptions(parsePostgresUrl(url)), max: 1, onnotice: () => {} });
  const sql = admin();
  await sql.unsafe(`CREATE DATABASE ${name}`);
  await sql.end({ timeout: 5 });
  return {
    url: url.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/, `$1/${name}`),
    async drop() {
      const sql = admin();
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await sql.end({ timeout: 5 });
    },
  };
}

async function runJson(args: string[], home: string, env: Record<string, string> = {}) {
  const result = await hermes(args, { home, env });
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

function pgTest(name: string, fn: (url: string) => Promise<void>): void {
  if (serverUrl) {
    Deno.test(`postgres cli: ${name}`, async () => {
      const db = await freshDatabase(serverUrl);
      try {
        await fn(db.url);
      } finally {
        await db.drop();
      }
    });
  } else if (Deno.env.get("CI") === "true") {
    Deno.test(`postgres cli: ${name}`, () => {
      assert.fail(`${URL_VARIABLE} is not set, so this PostgreSQL test did not run; .ci/run sets it`);
    });
  } else {
    Deno.test({ name: `postgres cli: ${name} (skipped: ${URL_VARIABLE} is not set)`, ignore: true, fn() {} });
  }
}

if (!serverUrl) console.log(`postgres cli tests skipped: set ${URL_VARIABLE}=postgres://… to run them`);

pgTest("run --db postgres://…, then sessions show from another process shows every message", async (url) => {
  const home = await tempDir();
  const run = await runJson(["run", "examples/hello.yaml", "--db", url, "--output", "json"], home);
  assert.equal(run.status, "success");
  const shown = await runJson(["sessions", "show", run.session_id, "--db", url, "--json"], await tempDir());
  // Every message the run stored, in order: system, user, the tool call, its result, the answer.
  assert.deepEqual(shown.messages.map((m: { seq: number }) => m.seq), [1, 2, 3, 4, 5]);
  assert.deepEqual(shown.messages.map((m: { role: string }) => m.role), [
    "system",
    "user",
    "assistant",
    "tool",
    "assistant",
  ]);
  assert.match(shown.messages[1].content, /Greet world/);
  assert.equal(shown.messages[4].content, run.final);
  await assert.rejects(Deno.stat(`${home}/state.db`), Deno.errors.NotFound, "nothing written to SQLite");
  const info = await runJson(["store", "info", "--db", url, "--json"], home);
  assert.equal(info.backend, "postgres");
  assert.deepEqual([info.counts.sessions, info.counts.messages], [1, 5]);
});

pgTest(
  "HERMES_DATABASE_URL and config.yaml store.url choose PostgreSQL; --db wins over both",
  async (url) => {
    const home = await tempDir();
    const byEnv = await runJson(["run", "examples/hello.yaml", "--output", "json"], home, {
      HERMES_DATABASE_URL: url,
    });
    await writeFiles(home, { "config.yaml": `store:\n  url: "${url}"\n` });
    const byConfig = await runJson(["sessions", "list", "--json"], home);
    assert.deepEqual(byConfig.map((s: { id: string }) => s.id), [byEnv.session_id]);
    const local = await runJson(["sessions", "list", "--json", "--db", `${home}/local.db`], home, {
      HERMES_DATABASE_URL: url,
    });
    assert.deepEqual(local, [], "--db names another (empty SQLite) store");
    await assert.rejects(Deno.stat(`${home}/state.db`), Deno.errors.NotFound);
  },
);

pgTest(
  "store migrate round-trips the example sessions, verifies them, and copies nothing twice",
  async (url) => {
    const home = await tempDir();
    const ids: string[] = [];
    for (const job of ["examples/hello.yaml", "examples/repo-report.yaml"]) {
      const run = await hermes(["run", job, "--output", "json"], { home });
      ids.push(JSON.parse(run.stdout).session_id);
    }
    const first = await runJson(["store", "migrate", "--to", url, "--json"], home);
    assert.deepEqual(
      [first.sessions, first.copied, first.already_present, first.verified, first.mismatches],
      [2, 2, 0, 2, []],
    );
    const again = await runJson(["store", "migrate", "--to", url, "--json"], home);
    assert.deepEqual(
      [again.copied, again.already_present, again.verified, again.messages_copied],
      [0, 2, 2, 0],
    );
    for (const id of ids) {
      const sqlite = await hermes(["sessions", "show", id, "--all", "--json"], { home });
      const pg = await hermes(["sessions", "show", id, "--all", "--json", "--db", url], { home });
      assert.equal(sqlite.code, 0, sqlite.stderr);
      assert.equal(pg.stdout, sqlite.stdout);
      const text = await hermes(["sessions", "show", id, "--all"], { home });
      assert.equal(
        (await hermes(["sessions", "show", id, "--all", "--db", url], { home })).stdout,
        text.stdout,
      );
    }
    const [mine, theirs] = await Promise.all([
      runJson(["store", "info", "--json"], home),
      runJson(["store", "info", "--json", "--db", url], home),
    ]);
    assert.equal(theirs.counts.messages, mine.counts.messages);
    assert.equal(theirs.counts.sessions, mine.counts.sessions);
  },
);

Deno.test("postgres cli: an unreachable server is one exit-2 line naming the URL, password redacted", async () => {
  const home = await tempDir();
  const dir = await tempDir();
  const result = await hermes(["sessions", "list", "--db", `postgres://u:s3cret@/x?host=${dir}&port=5999`], {
    home,
  });
  assert.equal(result.code, 2);
  const lines = result.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0]!, /^hermes: Cannot connect to the store at postgres:\/\/u:\*\*\*@\/x\?host=/);
  assert.doesNotMatch(result.stderr, /s3cret/);
});

Deno.test("store migrate refuses a --to that is not a postgres:// URL, and store info shows SQLite", async () => {
  const home = await tempDir();
  const refused = await hermes(["store", "migrate", "--to", "/tmp/other.db"], { home });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--to must be a postgres:\/\/ URL/);
  const info = await runJson(["store", "info", "--json"], home);
  assert.equal(info.backend, "sqlite");
  assert.equal(info.location, `${home}/state.db`);
  assert.deepEqual(info.counts.sessions, 0);
});
