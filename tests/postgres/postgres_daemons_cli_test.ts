/**
 * Several `hermes daemon` processes, each with its own host identity (HERMES_HOST_ID) and home, sharing one
 * schedule through one PostgreSQL store (docs/store.md). Needs HERMES_TEST_POSTGRES_URL (`.ci/run` sets it);
 * skipped with a visible reason without it, except under CI=true, where that is a failure.
 *
 * The acceptance run: three daemons serve jobs due every second for 30 s; one daemon is
 * SIGKILLed while it is in the middle of runs and restarted under the same host id. Two jobs share the run,
 * one per `schedule.on_crash` (docs/store.md), so one kill covers both: the winner of a second's claims takes
 * the slots of every job due then, so the daemon killed mid-run holds a slot of each.
 */
import assert from "node:assert/strict";
import { openPostgresStore, type PostgresStore } from "../../runtime/store/postgres/postgres_store.ts";
import { scratchDatabase } from "../../runtime/store/postgres/_testing.ts";
import { crashedNote } from "../../runtime/store/rules.ts";
import type { RunRow } from "../../runtime/store/store.ts";
import { hermes, MAIN, ROOT } from "../_testing/cli.ts";

const URL_VARIABLE = "HERMES_TEST_POSTGRES_URL";
const serverUrl = Deno.env.get(URL_VARIABLE);
const HOSTS = ["host-a", "host-b", "host-c"];
/** How long the schedule is served, from its first recorded slot to its last. */
const WINDOW_MS = 30_000;
/** The job of each `on_crash` mode. */
const JOBS = { skip: "tick-skip", rerun: "tick-rerun" } as const;
type Mode = keyof typeof JOBS;
const MODES = Object.keys(JOBS) as Mode[];
const job = (mode: Mode) =>
  `name: ${JOBS[mode]}
model: { provider: scripted, script: ./tick.replies.yaml }
prompt: tick
schedule: { cron: "* * * * * *", on_crash: ${mode} }
`;
// Long enough that a poll every 20 ms finds a daemon inside the model call, short of the next slot.
const REPLY_DELAY = "400ms";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

async function runsOf(store: PostgresStore, mode: Mode): Promise<RunRow[]> {
  return (await store.recentRuns(JOBS[mode], 1_000)).reverse();
}

/** Polls `probe` until it returns a value; the deadline only keeps a broken daemon from hanging the test. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 30_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`gave up waiting: ${what}`);
    await sleep(20);
  }
}

/** What the killed daemon was doing: per mode, the slot it held, the session of that run and its owner host. */
interface Killed {
  pid: number;
  slot: Record<Mode, number>;
  session: Record<Mode, string>;
  owner: Record<Mode, string | null>;
}

/**
 * A daemon in the middle of a run of every job: it holds a live claim of each and owns a `running` session
 * of each (created with its owner, so the model call is under way).
 */
async function midRun(store: PostgresStore, daemons: Daemon[]): Promise<Killed | undefined> {
  const claims = (await store.liveClaims()).filter((r) => r.status === "running");
  for (const { child: { pid } } of daemons) {
    const found: Partial<Record<Mode, { slot: number; session: string; owner: string | null }>> = {};
    for (const mode of MODES) {
      const held = claims.filter((r) => r.job === JOBS[mode] && r.holder_pid === pid);
      for (const s of await store.listSessions({ job: JOBS[mode], status: "running" })) {
        const row = await store.getSession(s.id);
        if (row?.owner_pid === pid && held.length === 1) {
          found[mode] = { slot: held[0]!.slot, session: s.id, owner: row.owner_host };
        }
      }
    }
    const { skip, rerun } = found;
    if (skip && rerun) {
      return {
        pid,
        slot: { skip: skip.slot, rerun: rerun.slot },
        session: { skip: skip.session, rerun: rerun.session },
        owner: { skip: skip.owner, rerun: rerun.owner },
      };
    }
  }
  return undefined;
}

/** `daemon status`'s run lines (`  SLOT  STATUS  by HOST:PID  session ID  (NOTE)`) of one job. */
function statusLines(stdout: string, name: string): { slot: number; status: string; holder: string }[] {
  const section = stdout.split("\n\n").find((s) => s.startsWith(`${name}  `));
  assert.ok(section, `daemon status shows no ${name}:\n${stdout}`);
  return section.split("\n").flatMap((line) => {
    const m = /^ {2}(\S+Z) {2}(\S+) {2}by (\S+)/.exec(line);
    return m ? [{ slot: Date.parse(m[1]!), status: m[2]!, holder: m[3]! }] : [];
  });
}

async function threeDaemonsOneKilled(url: string): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-pg-daemons-" });
  await Deno.mkdir(`${dir}/jobs`);
  for (const mode of MODES) await Deno.writeTextFile(`${dir}/jobs/${JOBS[mode]}.yaml`, job(mode));
  await Deno.writeTextFile(`${dir}/jobs/tick.replies.yaml`, `- content: tock\n  delay: ${REPLY_DELAY}\n`);
  const daemons: Daemon[] = HOSTS.map((host) => spawnDaemon(host, dir, url));
  const store = await openPostgresStore(url);
  const successes = async (mode: Mode) =>
    (await runsOf(store, mode)).filter((r) => r.status === "success").length;
  try {
    // A third of the window in, kill whichever daemon is in the middle of a run of both jobs, then
    // restart it under the same host identity: only a daemon of that host can prove the old one dead.
    await until("the daemons serve", async () => (await successes("skip")) >= 8 || undefined, 60_000);
    const killed = await until("a daemon mid-run of both jobs", () => midRun(store, daemons));
    const victim = daemons.find((d) => d.child.pid === killed.pid)!;
    victim.child.kill("SIGKILL");
    const restarted = spawnDaemon(victim.host, dir, url);
    daemons.push(restarted);

    // The restarted daemon settles the killed slots as each job's on_crash says.
    const settled = await until("the killed slots are settled", async () => {
      const [skip, rerun] = await Promise.all(MODES.map(async (mode) => {
        const rows = await runsOf(store, mode);
        return rows.find((r) => r.slot === killed.slot[mode]);
      }));
      return skip?.status === "crashed" && rerun?.status === "success" ? { skip, rerun } : undefined;
    });
    const who = `${victim.host}:${killed.pid}`;
    assert.equal(settled.skip.note, crashedNote(who));
    assert.equal(settled.skip.holder_pid, killed.pid, "a crashed slot names the holder that died");
    assert.equal(settled.skip.session_id, null);
    assert.equal(settled.rerun.note, `taken over from ${who}`);
    assert.equal(settled.rerun.holder_host, victim.host);
    assert.equal(settled.rerun.holder_pid, restarted.child.pid, "the restarted daemon ran the slot again");
    assert.notEqual(settled.rerun.session_id, killed.session.rerun);

    // Serve the whole window, then stop the daemons still alive.
    await until("the window is served", async () => {
      const spans = await Promise.all(MODES.map(async (mode) => {
        const rows = await runsOf(store, mode);
        return rows.length ? rows.at(-1)!.slot - rows[0]!.slot : 0;
      }));
      return spans.every((span) => span >= WINDOW_MS) || undefined;
    }, 60_000);
    for (const d of daemons) if (d !== victim) d.child.kill("SIGTERM");
    const outputs = await Promise.all(daemons.map((d) => d.output));
    for (const [i, out] of outputs.entries()) {
      if (daemons[i] === victim) assert.equal(out.signal, "SIGKILL");
      else assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    }

    const status = await hermes(["daemon", "status", `${dir}/jobs`, "--db", url], { home: `${dir}/host-a` });
    assert.equal(status.code, 0, status.stderr);
    for (const mode of MODES) {
      const rows = await runsOf(store, mode);
      const what = (r: RunRow) => `${JOBS[mode]} ${new Date(r.slot).toISOString()}: ${r.status} ${r.note}`;
      // Every slot from the first to the last has one record (the table allows no second): none missing.
      assert.ok(rows.length > WINDOW_MS / 1_000, `only ${rows.length} slots of ${JOBS[mode]} were recorded`);
      for (let i = 1; i < rows.length; i++) {
        assert.equal(
          rows[i]!.slot - rows[i - 1]!.slot,
          1_000,
          `a slot is missing after ${what(rows[i - 1]!)}`,
        );
      }
      for (const row of rows) assert.ok(HOSTS.includes(row.holder_host ?? ""), what(row));

      // `daemon status` shows which host (and pid) ran each of the latest slots, as the store has it.
      const shown = statusLines(status.stdout, JOBS[mode]);
      assert.ok(shown.length > 0, status.stdout);
      for (const line of shown) {
        const row = rows.find((r) => r.slot === line.slot);
        assert.ok(row, `status shows a slot the store does not have: ${JSON.stringify(line)}`);
        assert.deepEqual(line, {
          slot: row.slot,
          status: row.status,
          holder: `${row.holder_host}:${row.holder_pid}`,
        });
      }

      // The killed slot followed on_crash; every other slot ran, or was an overrun: it came due while an
      // earlier run of the job was really going (the killed claim, until its host proved it dead, or the
      // run that took it over), and was recorded skipped, naming that run's slot, and not run.
      const killedRow = rows.find((r) => r.slot === killed.slot[mode])!;
      assert.equal(killedRow.status, mode === "skip" ? "crashed" : "success", what(killedRow));
      for (const row of rows.filter((r) => r !== killedRow && r.status !== "success")) {
        assert.equal(row.status, "skipped", what(row));
        const running = /^overrun: the run of slot (\S+) is still going$/.exec(row.note ?? "")?.[1];
        const earlier = rows.find((r) => running !== undefined && r.slot === Date.parse(running));
        assert.ok(earlier && earlier.slot < row.slot, what(row));
        assert.ok(earlier.claimed_at <= row.claimed_at && earlier.finished_at! >= row.claimed_at, what(row));
      }
      const succeeded = rows.filter((r) => r.status === "success");
      assert.ok(succeeded.some((r) => r.slot > killed.slot[mode]), `${JOBS[mode]} went on after the kill`);

      // None run twice: one session per successful run, and besides them only the killed attempt's, which
      // the takeover marked interrupted. Under `rerun` that slot is run once more (its side effects may
      // repeat); under `skip` it never is.
      const sessions = await store.listSessions({ job: JOBS[mode] });
      const ran = succeeded.map((r) => r.session_id);
      assert.equal(new Set(ran).size, succeeded.length, "a session recorded for two slots");
      assert.deepEqual(
        new Set(sessions.filter((s) => s.status === "success").map((s) => s.id)),
        new Set(ran),
      );
      const unfinished = sessions.filter((s) => s.status !== "success");
      assert.deepEqual(unfinished.map((s) => s.id), [killed.session[mode]]);
      assert.equal(killed.owner[mode], victim.host, "a daemon's sessions are owned under its host id");
      const attempt = (await store.getSession(killed.session[mode]))!;
      assert.equal(attempt.status, "interrupted");
      assert.equal(attempt.terminal_reason, "holder_died");
      assert.equal(attempt.owner_pid, null);
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

const NAME = "3 daemons (distinct host ids) on one PostgreSQL, jobs every second for 30 s, one SIGKILLed " +
  "mid-run and restarted: every slot has one record, none run twice, the killed one per on_crash";
if (serverUrl) {
  Deno.test(`postgres daemons: ${NAME}`, async () => {
    await using db = await scratchDatabase(serverUrl, "hermes_daemons");
    await threeDaemonsOneKilled(db.url);
  });
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
