/**
 * `hermes daemon` as real processes on one store, running real sessions with a scripted model.
 */
import assert from "node:assert/strict";
import { hermes, MAIN, ROOT } from "../../tests/_testing/cli.ts";
import type { Store } from "../../runtime/store/store.ts";
import { sqliteHandle } from "../../runtime/store/sqlite/_testing.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";

const JOB = `name: tick
model: { provider: scripted, script: ./tick.replies.yaml }
prompt: tick
schedule: { cron: "* * * * * *" }
`;
const REPLIES = "- content: tock\n  delay: 200ms\n";

async function workspace(schedule = ""): Promise<{ dir: string; home: string; jobs: string }> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-daemon-cli-" });
  await Deno.mkdir(`${dir}/jobs`);
  await Deno.writeTextFile(
    `${dir}/jobs/tick.yaml`,
    JOB.replace('"* * * * * *" }', `"* * * * * *"${schedule} }`),
  );
  await Deno.writeTextFile(`${dir}/jobs/tick.replies.yaml`, REPLIES);
  return { dir, home: `${dir}/home`, jobs: `${dir}/jobs` };
}

function spawnDaemon(home: string, jobs: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--home", home, "daemon", jobs],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return { child, output: child.output() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const onCrash of ["skip", "rerun"] as const) {
  Deno.test(`two daemons on one store, one SIGKILLed mid-run (on_crash: ${onCrash}): no slot lost or run twice`, async () => {
    await killOneMidRun(onCrash);
  });
}

async function killOneMidRun(onCrash: "skip" | "rerun"): Promise<void> {
  // skip is the default: the job says nothing for it.
  const { dir, home, jobs } = await workspace(onCrash === "rerun" ? ", on_crash: rerun" : "");
  const first = spawnDaemon(home, jobs);
  const second = spawnDaemon(home, jobs);
  const daemons = new Map([[first.child.pid, first], [second.child.pid, second]]);
  let store: Store | undefined;
  try {
    // Both daemons up: each writes a record under HOME/daemons before serving.
    const records = () => {
      try {
        return [...Deno.readDirSync(`${home}/daemons`)].length;
      } catch {
        return 0;
      }
    };
    for (let i = 0; i < 500 && records() < 2; i++) await sleep(20);
    assert.equal(records(), 2, "both daemons started");
    store = openSqliteStore(`${home}/state.db`);
    await sleep(2_000);
    // Kill whichever daemon is in the middle of a run, right after it claimed the slot.
    let killed: number | undefined;
    let killedSlot: number | undefined;
    for (let i = 0; i < 500 && killed === undefined; i++) {
      const live = sqliteHandle(store).stmt(
        "SELECT slot, holder_pid FROM schedule_runs WHERE status = 'running'",
      ).get() as
        | { slot: number; holder_pid: number }
        | undefined;
      if (live && daemons.has(live.holder_pid)) {
        daemons.get(live.holder_pid)!.child.kill("SIGKILL");
        killed = live.holder_pid;
        killedSlot = live.slot;
      } else await sleep(10);
    }
    assert.ok(killed !== undefined, "no daemon was seen mid-run");
    const survivor = [...daemons.entries()].find(([pid]) => pid !== killed)![1];
    await sleep(6_000);
    survivor.child.kill("SIGTERM");
    const [survived, dead] = await Promise.all([survivor.output, daemons.get(killed)!.output]);
    const log = new TextDecoder().decode(survived.stderr);
    assert.equal(survived.code, 0, `the survivor exits 0 on SIGTERM:\n${log}`);
    assert.equal(dead.signal, "SIGKILL");

    const rows = sqliteHandle(store).stmt(
      "SELECT slot, status, session_id, note FROM schedule_runs WHERE job = 'tick' ORDER BY slot",
    )
      .all() as { slot: number; status: string; session_id: string | null; note: string | null }[];
    const slots = rows.map((r) => r.slot);
    assert.ok(rows.length >= 7, `only ${rows.length} slots ran`);
    for (let i = 1; i < slots.length; i++) {
      assert.equal(slots[i]! - slots[i - 1]!, 1000, `a slot is missing after ${slots[i - 1]}`);
    }
    const taken = rows.find((r) => r.slot === killedSlot)!;
    // A slot skipped because the previous run was still going (a loaded machine) is the overlap rule at
    // work, not a lost slot.
    const overrun = (r: { status: string; note: string | null }) =>
      r.status === "skipped" && /^overrun:/.test(r.note ?? "");
    if (onCrash === "rerun") {
      assert.deepEqual(
        rows.filter((r) => r.status !== "success" && !overrun(r)),
        [],
        "every slot succeeded or was skipped as an overrun",
      );
      assert.match(
        taken.note ?? "",
        new RegExp(`^taken over from .*:${killed}$`),
        "the killed run was taken over",
      );
      assert.match(log, /taking over slot/);
    } else {
      assert.deepEqual(
        rows.filter((r) => r.status !== "success" && !overrun(r)),
        [taken],
        "every other slot succeeded or was skipped as an overrun",
      );
      assert.equal(taken.status, "crashed", "the killed slot is recorded, never started twice");
      assert.match(taken.note ?? "", new RegExp(`^holder .*:${killed} died mid-run; not run again`));
      assert.doesNotMatch(log, /taking over slot/);
    }
    // One finished session per run. The killed attempt's session is interrupted, not left running; or, when
    // the kill came after its session ended and before its slot was recorded, it is a success that no slot
    // names. Either way there is at most one session besides the slots' own.
    const sessions = sqliteHandle(store).stmt("SELECT id, status FROM sessions WHERE job = 'tick'").all() as {
      id: string;
      status: string;
    }[];
    const slotSessions = new Set(rows.filter((r) => r.status === "success").map((r) => r.session_id));
    const succeeded = new Set(sessions.filter((s) => s.status === "success").map((s) => s.id));
    for (const id of slotSessions) {
      assert.ok(succeeded.has(id!), `slot session ${id} is not a stored success`);
    }
    const killedAttempt = sessions.filter((s) => !slotSessions.has(s.id));
    assert.ok(
      killedAttempt.length <= 1,
      `more than the killed attempt besides the slots' sessions: ${JSON.stringify(killedAttempt)}`,
    );
    assert.ok(
      killedAttempt.every((s) => s.status === "interrupted" || s.status === "success"),
      `the killed attempt's session is ${killedAttempt[0]?.status}`,
    );
  } finally {
    for (const { child } of daemons.values()) {
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
    }
    await Promise.all([...daemons.values()].map((d) => d.output));
    await store?.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("hermes daemon: a bad --concurrency or --grace is a usage error; status --json lists jobs and runs", async () => {
  const { dir, home, jobs } = await workspace();
  try {
    // Without job arguments a daemon works the run queue only (tests/queue/submit_cli_test.ts).
    const none = await hermes(["daemon", "--concurrency", "0"], { home });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /hermes daemon: invalid --concurrency "0": expected a positive integer/);
    const bad = await hermes(["daemon", "--grace", "soon", jobs], { home });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid --grace "soon": expected a duration/);
    const status = await hermes(["daemon", "status", "--json", jobs], { home });
    assert.equal(status.code, 0, status.stderr);
    const report = JSON.parse(status.stdout);
    assert.deepEqual(report.daemons, []);
    assert.equal(report.jobs[0].name, "tick");
    assert.equal(report.jobs[0].cron, "* * * * * *");
    assert.match(report.jobs[0].next_slot, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(report.jobs[0].last_runs, []);
    assert.equal(report.jobs[0].overlap, "skip");
    const text = await hermes(["daemon", "status", jobs], { home });
    assert.match(
      text.stdout,
      /^No daemon is running\.\n\ntick {2}\* \* \* \* \* \* {2}catch_up: one {2}overlap: skip/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
