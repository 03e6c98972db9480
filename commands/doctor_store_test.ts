/**
 * `hermes doctor` checks the store without changing it: a good SQLite store passes; a page-corrupted, a
 * truncated and a foreign file fail naming the problem (exit 1), as does a schema newer than this Hermes;
 * `--full` runs the full integrity_check. A PostgreSQL store is probed: reachable with its schema version,
 * or the connection failure named.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { hermes, tempDir, writeFiles } from "../tests/_testing/cli.ts";
import { scratchDatabase } from "../runtime/store/postgres/_testing.ts";
import { migrations } from "../runtime/store/_migrations.ts";

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  hint?: string;
}

async function storeCheck(home: string, db: string, extra: string[] = []) {
  const r = await hermes(["doctor", "--json", "--db", db, ...extra], { home });
  const report = JSON.parse(r.stdout) as { checks: Check[] };
  return { code: r.code, stderr: r.stderr, store: report.checks.find((c) => c.name === "store")! };
}

/** A store with a few sessions, written by the real CLI. */
async function goodStore(): Promise<{ home: string; db: string }> {
  const home = await tempDir();
  await writeFiles(home, {
    "r.yaml": "- content: an answer\n",
    "config.yaml": `model: { provider: scripted, script: ${home}/r.yaml }\n`,
  });
  for (let i = 0; i < 3; i++) {
    const run = await hermes(["run", "-p", `prompt ${i} ${"x".repeat(20_000)}`], { home });
    assert.equal(run.code, 0, run.stderr);
  }
  return { home, db: `${home}/state.db` };
}

Deno.test("doctor: a good store passes; corrupted, truncated, foreign and too-new stores fail naming the problem", async () => {
  const { home, db } = await goodStore();
  const good = await storeCheck(home, db);
  assert.equal(good.store.ok, true, good.store.detail);
  assert.match(
    good.store.detail,
    new RegExp(`state\\.db passes quick_check; schema version ${migrations.length}; writable$`),
  );
  const full = await storeCheck(home, db, ["--full"]);
  assert.equal(full.store.ok, true);
  assert.match(full.store.detail, /passes integrity_check/);

  const bytes = await Deno.readFile(db);
  const corrupted = `${home}/corrupted.db`;
  const damaged = bytes.slice();
  damaged.set(new Uint8Array(64).fill(0x5a), 2 * 4096); // the header of page 3: a b-tree page
  await Deno.writeFile(corrupted, damaged);
  const truncated = `${home}/truncated.db`;
  await Deno.writeFile(truncated, bytes.slice(0, 8192));
  const foreign = `${home}/notes.txt`;
  await Deno.writeTextFile(foreign, "meeting notes\n".repeat(200));
  const newer = `${home}/newer.db`;
  await Deno.copyFile(db, newer);
  const raw = new DatabaseSync(newer);
  raw.exec(`PRAGMA user_version = ${migrations.length + 1}`);
  raw.close();

  for (
    const [file, problem, extra] of [
      [corrupted, /corrupted\.db is damaged: quick_check found .*page 3/, []],
      [corrupted, /corrupted\.db is damaged: integrity_check/, ["--full"]],
      [truncated, /truncated\.db is damaged: quick_check failed: database disk image is malformed/, []],
      [foreign, /notes\.txt is not a SQLite database/, []],
      [newer, new RegExp(`schema version ${migrations.length + 1} is newer than this Hermes supports`), []],
    ] as const
  ) {
    const before = await Deno.readFile(file);
    const { code, store } = await storeCheck(home, file, [...extra]);
    assert.equal(code, 1, `${file}: ${store.detail}`);
    assert.equal(store.ok, false);
    assert.match(store.detail, problem);
    assert.ok(store.hint, store.detail);
    assert.doesNotMatch(store.detail, /\n/);
    // The check changed nothing.
    assert.deepEqual(await Deno.readFile(file), before);
  }
  const text = await hermes(["doctor", "--db", foreign], { home });
  assert.equal(text.code, 1);
  assert.match(
    text.stdout,
    /^store +FAIL .*notes\.txt is not a SQLite database .*\(.*move the file aside.*\)$/m,
  );
});

const serverUrl = Deno.env.get("HERMES_TEST_POSTGRES_URL");
Deno.test({
  name: `doctor: a PostgreSQL store is probed (reachable, schema version) or its connection failure named${
    serverUrl ? "" : " (skipped: HERMES_TEST_POSTGRES_URL is not set)"
  }`,
  ignore: !serverUrl && Deno.env.get("CI") !== "true",
  fn: async () => {
    assert.ok(serverUrl, "HERMES_TEST_POSTGRES_URL is not set, so this PostgreSQL test did not run");
    const home = await tempDir();
    await using db = await scratchDatabase(serverUrl, "hermes_doctor");
    const empty = await storeCheck(home, db.url);
    assert.equal(empty.store.ok, true, empty.store.detail);
    assert.match(empty.store.detail, /reachable; no Hermes store there yet/);
    const list = await hermes(["sessions", "list", "--db", db.url], { home });
    assert.equal(list.code, 0, list.stderr);
    const used = await storeCheck(home, db.url);
    assert.equal(used.store.ok, true, used.store.detail);
    assert.match(used.store.detail, /reachable; schema version \d+$/);
    const dir = await tempDir();
    const down = await storeCheck(home, `postgres://u:s3cret@/x?host=${dir}&port=5999`);
    assert.equal(down.code, 1);
    assert.equal(down.store.ok, false);
    assert.match(
      down.store.detail,
      /^Cannot connect to the store at postgres:\/\/u:\*\*\*@\/x\?host=.*ENOENT/,
    );
    assert.doesNotMatch(JSON.stringify(down.store), /s3cret/);
  },
});
