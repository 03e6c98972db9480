/**
 * The CLI on a PostgreSQL store (docs/store.md), through real subprocesses and a real server named by
 * HERMES_TEST_POSTGRES_URL (`.ci/run` starts one). Each test gets a fresh database, dropped at the end.
 * Without the variable the server tests are skipped with a visible reason, except under CI=true.
 */
import assert from "node:assert/strict";
import { admin, scratchDatabase } from "../../runtime/store/postgres/_testing.ts";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";

const URL_VARIABLE = "HERMES_TEST_POSTGRES_URL";
const serverUrl = Deno.env.get(URL_VARIABLE);

/** A fresh, empty database on the test server; its URL, and a function that drops it. */
async function runJson(args: string[], home: string, env: Record<string, string> = {}, cwd?: string) {
  const result = await hermes(args, { home, env, ...(cwd ? { cwd } : {}) });
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

function pgTest(name: string, fn: (url: string) => Promise<void>): void {
  if (serverUrl) {
    Deno.test(`postgres cli: ${name}`, async () => {
      await using db = await scratchDatabase(serverUrl, "hermes_cli");
      await fn(db.url);
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

const COUNTER_PLUGIN = `export function register(ctx) {
  ctx.registerCommand("count", {
    description: "counts in the plugin's own state",
    handler: async () => {
      const n = ((await ctx.state.get("n")) ?? 0) + 1;
      await ctx.state.set("n", n);
      return "count " + n;
    },
  });
}
`;

/** A `store migrate` report of `rows` rows of one kind, `copied` of them now, all verified. */
const verified = (rows: number, copied: number) => ({
  rows,
  copied,
  already_present: rows - copied,
  verified: rows,
  mismatches: [],
});

/** Runs `hermes daemon` on the SQLite store in `home` until it has finished `runs` slots, then stops it. */
async function daemonRuns(home: string, jobs: string, runs: number): Promise<void> {
  const daemon = spawnHermes(["daemon", jobs], { home });
  try {
    for (let i = 0;; i++) {
      const status = await runJson(["daemon", "status", jobs, "--json"], home);
      const done = status.jobs[0].last_runs.filter((r: { status: string }) => r.status === "success");
      if (done.length >= runs) break;
      if (i === 100) assert.fail(`the daemon finished ${done.length} of ${runs} runs in time`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    daemon.kill("SIGTERM");
    const { code, stderr } = await daemon.output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
  }
}

pgTest(
  "store migrate round-trips sessions, schedule history, plugin state, model calls, the run queue and API tokens, verifies them, and copies nothing twice",
  async (url) => {
    const home = await tempDir();
    const ids: string[] = [];
    for (const job of ["examples/hello.yaml", "examples/repo-report.yaml"]) {
      const run = await hermes(["run", job, "--output", "json"], { home });
      ids.push(JSON.parse(run.stdout).session_id);
    }
    assert.equal((await hermes(["sessions", "archive", ids[1]!], { home })).code, 0);
    const dir = await writeFiles(await tempDir(), {
      "r.yaml": "- content: tick done\n",
      "counter.ts": COUNTER_PLUGIN,
      "count.yaml": "name: count\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n" +
        "plugins: [{ path: ./counter.ts }]\n",
      "jobs/tick.yaml": `name: tick
model: { provider: scripted, script: ../r.yaml }
prompt: tick
schedule: { cron: "* * * * * *" }
`,
    });
    const count = async (db: string[]) => {
      const run = await runJson(
        ["run", "count.yaml", "-p", "/count", "--output", "json", ...db],
        home,
        {},
        dir,
      );
      return run.final;
    };
    assert.deepEqual([await count([]), await count([])], ["count 1", "count 2"]);
    await daemonRuns(home, `${dir}/jobs`, 2);
    const token = await hermes(["tokens", "create", "--scope", "runs:read", "--name", "ci"], { home });
    assert.equal(token.code, 0, token.stderr);

    const first = await runJson(["store", "migrate", "--to", url, "--json"], home);
    const sessions = (await runJson(["store", "info", "--json"], home)).counts.sessions;
    assert.deepEqual(
      [first.sessions, first.copied, first.already_present, first.verified, first.mismatches],
      [sessions, sessions, 0, sessions, []],
    );
    const runs = first.schedule_runs.rows;
    assert.ok(runs >= 2, `${runs} schedule runs`);
    assert.deepEqual([first.schedule_runs, first.plugin_state], [verified(runs, runs), verified(1, 1)]);

    const again = await runJson(["store", "migrate", "--to", url, "--json"], home);
    assert.deepEqual(
      [again.copied, again.already_present, again.verified, again.messages_copied],
      [0, sessions, sessions, 0],
    );
    assert.deepEqual([again.schedule_runs, again.plugin_state], [verified(runs, 0), verified(1, 0)]);
    // The daemon's slots were queued runs: they, their events and the token (its hash) went along.
    const queued = first.runs.rows;
    assert.ok(queued >= 2, `${queued} queued runs`);
    const events = first.run_events.rows;
    assert.ok(events > queued, `${events} run events`);
    assert.deepEqual(
      [first.runs, first.run_events, first.api_tokens, again.runs, again.run_events, again.api_tokens],
      [
        verified(queued, queued),
        verified(events, events),
        verified(1, 1),
        verified(queued, 0),
        verified(events, 0),
        verified(1, 0),
      ],
    );
    const runsOf = (db: string[]) => runJson(["runs", "list", "--json", ...db], home);
    assert.deepEqual(await runsOf(["--db", url]), await runsOf([]));
    const tokens = await hermes(["tokens", "list", "--db", url], { home });
    assert.match(tokens.stdout, /\tci\truns:read\t/);
    const calls = first.model_calls.rows;
    assert.ok(calls >= 4, `${calls} model calls`);
    assert.deepEqual([first.model_calls, again.model_calls], [verified(calls, calls), verified(calls, 0)]);
    const text = await hermes(["store", "migrate", "--to", url], { home });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^nothing new to copy to postgres:\/\/.*: it holds everything already\n/);
    assert.match(
      text.stdout,
      new RegExp(`\\n  schedule runs  0 of ${runs}; ${runs} already there; ${runs} verified\\n`),
    );

    for (const id of ids) {
      const sqlite = await hermes(["sessions", "show", id, "--all", "--json"], { home });
      const pg = await hermes(["sessions", "show", id, "--all", "--json", "--db", url], { home });
      assert.equal(sqlite.code, 0, sqlite.stderr);
      assert.equal(pg.stdout, sqlite.stdout);
      const shown = await hermes(["sessions", "show", id, "--all"], { home });
      assert.equal(
        (await hermes(["sessions", "show", id, "--all", "--db", url], { home })).stdout,
        shown.stdout,
      );
    }
    // What the runs spent reads the same from PostgreSQL.
    const cost = (db: string[]) => runJson(["cost", "--json", "--by", "job", "--by", "model", ...db], home);
    assert.deepEqual(await cost(["--db", url]), await cost([]));
    const archived = await runJson(["sessions", "list", "--archived", "--json", "--db", url], home);
    assert.deepEqual(archived.map((s: { id: string }) => s.id), [ids[1]]);
    // The schedule history reads the same from PostgreSQL, and the plugin goes on counting from its state.
    const history = async (db: string[]) =>
      (await runJson(["daemon", "status", `${dir}/jobs`, "--json", ...db], home)).jobs[0].last_runs;
    assert.deepEqual(await history(["--db", url]), await history([]));
    assert.equal(await count(["--db", url]), "count 3");
    assert.equal(await count([]), "count 3", "the SQLite store is left as it was");
    const [mine, theirs] = await Promise.all([
      runJson(["store", "info", "--json"], home),
      runJson(["store", "info", "--json", "--db", url], home),
    ]);
    assert.deepEqual(theirs.counts, mine.counts);
    // A value that changed here since it was copied is named, and the target keeps its copy.
    assert.equal(await count([]), "count 4");
    const changed = await hermes(["store", "migrate", "--to", url, "--json"], { home });
    assert.equal(changed.code, 1, changed.stderr);
    const { plugin_state, schedule_runs } = JSON.parse(changed.stdout);
    assert.deepEqual(plugin_state.mismatches, [{
      plugin: `path:${dir}/counter.ts`,
      key: "n",
      problem: "value is 4 here, 3 in the target (copied before it changed?)",
    }]);
    assert.deepEqual([plugin_state.verified, schedule_runs.verified], [0, runs]);
    const told = await hermes(["store", "migrate", "--to", url], { home });
    assert.equal(told.code, 1);
    assert.equal(
      told.stderr,
      `hermes store migrate: plugin path:${dir}/counter.ts, key n: value is 4 here, 3 in the target ` +
        "(copied before it changed?)\n",
    );
    assert.equal(await count(["--db", url]), "count 4", "the target went on from its own value, 3");
  },
);

pgTest(
  "a store whose schema is newer than this Hermes is one exit-2 line; the current one opens",
  async (url) => {
    const home = await tempDir();
    const info = await runJson(["store", "info", "--db", url, "--json"], home);
    const version = Number(info.schema_version);
    await admin(url, (sql) => sql`INSERT INTO schema_version VALUES (${version + 1}, 0)`);
    const refused = await hermes(["sessions", "list", "--db", url], { home });
    assert.equal(refused.code, 2);
    const lines = refused.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, refused.stderr);
    assert.match(lines[0]!, new RegExp(`schema version is ${version + 1}, newer than this Hermes supports`));
  },
);

Deno.test("postgres cli: an unreachable server is waited out for store.retry, then one exit-1 line naming the URL, password redacted", async () => {
  const home = await tempDir();
  await writeFiles(home, { "config.yaml": "store: { retry: 1s }\n" });
  const dir = await tempDir();
  const result = await hermes(["sessions", "list", "--db", `postgres://u:s3cret@/x?host=${dir}&port=5999`], {
    home,
  });
  assert.equal(result.code, 1);
  const lines = result.stderr.trimEnd().split("\n");
  assert.ok(lines.length >= 2, result.stderr);
  for (const line of lines.slice(0, -1)) {
    assert.match(line, /^hermes warn: store unavailable \(.+\); retrying connect in /);
  }
  assert.match(
    lines.at(-1)!,
    /^hermes: Cannot use the store postgres:\/\/u:\*\*\*@\/x\?host=.*: .* store\.retry is 1s\)$/,
  );
  assert.doesNotMatch(result.stderr, /s3cret|internal error/);
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
