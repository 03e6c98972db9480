/**
 * Several `hermes daemon` processes, each with its own host identity (HERMES_HOST_ID) and home, sharing one
 * schedule through one PostgreSQL store (DESIGN §14). Needs HERMES_TEST_POSTGRES_URL (`.ci/run` sets it);
 * skipped with a visible reason without it, except under CI=true, where that is a failure.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { openPostgresStore, type PostgresStore } from "../runtime/store/postgres/postgres_store.ts";
import { clientOptions, parsePostgresUrl } from "../runtime/store/postgres/_url.ts";
import type { RunRow } from "../runtime/store/store.ts";
import { hermes, MAIN, ROOT } from "./_cli.ts";

const URL_VARIABLE = "HERMES_TEST_POSTGRES_URL";
const serverUrl = Deno.env.get(URL_VARIABLE);
const HOSTS = ["host-a", "host-b", "host-c"];
const JOB = `name: tick
model: { provider: scripted, script: ./tick.replies.yaml }
prompt: tick
schedule: { cron: "* * * * * *" }
`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function withDatabase(url: string, fn: (url: string) => Promise<void>): Promise<void> {
  const name = `hermes_daemons_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = async (statement: string) => {
    const sql = postgres({ ...clientOptions(parsePostgresUrl(url)), max: 1, onnotice: () => {} });
    await sql.unsafe(statement);
    await sql.end({ timeout: 5 });
  };
  await admin(`CREATE DATABASE ${name}`);
  try {
    await fn(url.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/, `$1/${name}`));
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

interface Daemon {
  host: string;
  child: Deno.ChildProcess;
  output: Promise<Deno.CommandOutput>;
}

function spawnDaemon(host: string, dir: string, url: string): Daemon {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--home", `${dir}/${host}`, "--db", url, "daemon", `${dir}/jobs`],
    cwd: ROOT,
    env: { NO_COLOR: "1", HERMES_HOST_ID: host },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return { host, child, output: child.output() };
}

async function runsOf(store: PostgresStore): Promise<RunRow[]> {
  return (await store.recentRuns("tick", 1_000)).reverse();
}

async function threeDaemonsOneKilled(url: string): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-pg-daemons-" });
  await Deno.mkdir(`${dir}/jobs`);
  await Deno.writeTextFile(`${dir}/jobs/tick.yaml`, JOB);
  await Deno.writeTextFile(`${dir}/jobs/tick.replies.yaml`, "- content: tock\n  delay: 200ms\n");
  const daemons: Daemon[] = HOSTS.map((host) => spawnDaemon(host, dir, url));
  const store = await openPostgresStore(url);
  try {
    // Serving: a few slots have run.
    for (
      let i = 0;
      i < 1_500 && (await runsOf(store)).filter((r) => r.status === "success").length < 3;
      i++
    ) {
      await sleep(20);
    }
    // Kill whichever daemon is in the middle of a run, then restart it under the same host identity.
    let killed: { host: string; pid: number; slot: number } | undefined;
    for (let i = 0; i < 1_000 && killed === undefined; i++) {
      const live = (await store.liveClaims()).find((r) => r.status === "running");
      const daemon = live && daemons.find((d) => d.child.pid === live.holder_pid);
      if (live && daemon) {
        daemon.child.kill("SIGKILL");
        killed = { host: daemon.host, pid: daemon.child.pid, slot: live.slot };
        daemons.push(spawnDaemon(daemon.host, dir, url));
      } else await sleep(10);
    }
    assert.ok(killed, "no daemon was seen mid-run");
    const after = (await runsOf(store)).length;
    for (let i = 0; i < 1_500 && (await runsOf(store)).length < after + 5; i++) await sleep(20);

    const status = await hermes(["daemon", "status", `${dir}/jobs`, "--db", url], { home: `${dir}/host-a` });
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      /success {2}by host-[abc]:\d+ {2}session /,
      "status shows which host ran a slot",
    );

    for (const d of daemons) if (d.child.pid !== killed.pid) d.child.kill("SIGTERM");
    const outputs = await Promise.all(daemons.map((d) => d.output));
    for (const [i, out] of outputs.entries()) {
      if (daemons[i]!.child.pid === killed.pid) assert.equal(out.signal, "SIGKILL");
      else assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    }

    const rows = await runsOf(store);
    assert.ok(rows.length >= 8, `only ${rows.length} slots were recorded`);
    for (let i = 1; i < rows.length; i++) {
      assert.equal(rows[i]!.slot - rows[i - 1]!.slot, 1_000, `a slot is missing after ${rows[i - 1]!.slot}`);
    }
    for (const row of rows) {
      assert.ok(HOSTS.includes(row.holder_host ?? ""), `${row.slot}: ${row.holder_host}`);
    }
    const crashed = rows.find((r) => r.slot === killed!.slot)!;
    assert.equal(crashed.status, "crashed", "the killed slot is recorded crashed, never run again");
    // A slot that came due while an earlier run of the job was going, or looked so (the killed claim until
    // its host proved it dead), was an overrun: recorded skipped, naming that run's slot, and not run.
    for (const row of rows.filter((r) => r !== crashed && r.status !== "success")) {
      assert.equal(row.status, "skipped", `${row.slot}: ${row.status} ${row.note}`);
      const running = /^overrun: the run of slot (\S+) is still going$/.exec(row.note ?? "")?.[1];
      assert.ok(running !== undefined && Date.parse(running) < row.slot, `${row.slot}: ${row.note}`);
    }
    // One session per run, none twice; the killed attempt's session, if any, is interrupted, not running.
    const succeeded = rows.filter((r) => r.status === "success");
    assert.ok(succeeded.some((r) => r.slot > killed!.slot), "the schedule went on after the kill");
    const sessions = await store.listSessions({ job: "tick" });
    assert.deepEqual(
      new Set(sessions.filter((s) => s.status === "success").map((s) => s.id)),
      new Set(succeeded.map((r) => r.session_id)),
    );
    assert.equal(new Set(succeeded.map((r) => r.session_id)).size, succeeded.length);
    // The killed attempt may have died before its session was created. Known gap (reported): killed between
    // creating its session and recording itself as the owner, it leaves an unowned `running` session that
    // the takeover cannot attribute to it.
    const unfinished = sessions.filter((s) => s.status !== "success");
    assert.ok(unfinished.length <= 1, `unfinished sessions: ${unfinished.map((s) => s.status).join(", ")}`);
    for (const s of unfinished) {
      const row = (await store.getSession(s.id))!;
      if (row.status === "running") assert.equal(row.owner_pid, null, "a running session has no owner");
      else assert.equal(row.status, "interrupted");
    }
  } finally {
    for (const d of daemons) {
      try {
        d.child.kill("SIGKILL");
      } catch {
        // already exited
      }
    }
    await Promise.all(daemons.map((d) => d.output));
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const NAME =
  "3 daemons (distinct host ids) on one PostgreSQL, one SIGKILLed and restarted: no slot lost or run twice";
if (serverUrl) {
  Deno.test(`postgres daemons: ${NAME}`, () => withDatabase(serverUrl, threeDaemonsOneKilled));
} else if (Deno.env.get("CI") === "true") {
  Deno.test(`postgres daemons: ${NAME}`, () => {
    assert.fail(`${URL_VARIABLE} is not set, so this PostgreSQL test did not run; .ci/run sets it`);
  });
} else {
  console.log(`postgres daemon tests skipped: set ${URL_VARIABLE}=postgres://… to run them`);
  Deno.test({
    name: `postgres daemons: ${NAME} (skipped: ${URL_VARIABLE} is not set)`,
    ignore: true,
    fn() {},
  });
}
