import assert from "node:assert/strict";
import { ManualClock } from "../../runtime/core/_testing.ts";
import { createLogger } from "../../runtime/core/log.ts";
import { currentProcess, type ProcessIdentity } from "../../runtime/core/process_identity.ts";
import type { Store } from "../../runtime/store/store.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { advance, advanceUntil } from "../_testing.ts";
import { deadHolder, ownedBy } from "../../tests/contracts/store/_testing.ts";
import { Daemon, type ScheduledRun, type ScheduledRunner } from "./daemon.ts";
import { loadScheduledJobs } from "./jobs.ts";

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0); // a Monday, on a whole minute
const S = 1000;

interface Harness {
  dir: string;
  clock: ManualClock;
  store: Store;
  runs: (ScheduledRun & { at: number })[];
  logs: string[];
  daemon(
    options?: { runner?: ScheduledRunner; identity?: ProcessIdentity; graceMs?: number; watch?: boolean },
  ): Daemon;
  rows(
    job: string,
  ): Promise<{ slot: number; status: string; note: string | null; session_id: string | null }[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function harness(files: Record<string, string>, start = T0 + 500): Promise<Harness> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-daemon-" });
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(`${dir}/${name}`, text);
  const clock = new ManualClock(start);
  const store = openSqliteStore(`${dir}/state.db`, { clock });
  const runs: (ScheduledRun & { at: number })[] = [];
  const logs: string[] = [];
  const log = createLogger({ level: "debug", write: (line) => logs.push(line) });
  const record: ScheduledRunner = (run) => {
    runs.push({ ...run, at: clock.now() });
    return Promise.resolve({ session_id: `S-${run.slot - T0}`, status: "success" });
  };
  return {
    dir,
    clock,
    store,
    runs,
    logs,
    daemon: (o = {}) =>
      new Daemon({
        store,
        clock,
        log,
        paths: [dir],
        runner: o.runner ?? record,
        watch: o.watch ?? false,
        ...(o.identity ? { identity: o.identity } : {}),
        ...(o.graceMs !== undefined ? { graceMs: o.graceMs } : {}),
      }),
    rows: async (job) =>
      (await store.recentRuns(job, 1000)).reverse().map((r) => ({
        slot: r.slot - T0,
        status: r.status,
        note: r.note,
        session_id: r.session_id,
      })),
    async [Symbol.asyncDispose]() {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const job = (name: string, schedule: string, extra = "") =>
  `name: ${name}\nprompt: go\nschedule: ${schedule}\n${extra}`;

async function serve(daemon: Daemon, clock: ManualClock, ms: number, step = 100): Promise<void> {
  const controller = new AbortController();
  const running = daemon.run(controller.signal);
  await advance(clock, ms, step);
  controller.abort();
  await advanceUntil(clock, running, { stepMs: step });
}

Deno.test("every due slot runs once, on time, as recorded rows; one timer serves all jobs", async () => {
  await using h = await harness({
    "a.yaml": job("a", '{ cron: "* * * * * *" }'),
    "b.yaml": job("b", '{ cron: "*/2 * * * * *" }'),
    "notes.yaml": "name: notes\nprompt: not scheduled\n",
    "README.md": "not a job",
  });
  const daemon = h.daemon();
  assert.deepEqual(daemon.jobs().map((j) => j.job.name), ["a", "b"]);
  await serve(daemon, h.clock, 5_000);
  const slots = (name: string) => h.runs.filter((r) => r.job === name).map((r) => r.slot - T0);
  assert.deepEqual(slots("a"), [1, 2, 3, 4, 5].map((s) => s * S));
  assert.deepEqual(slots("b"), [2, 4].map((s) => s * S));
  for (const run of h.runs) assert.ok(run.at - run.slot < 100, `slot ${run.slot - T0} started late`);
  assert.deepEqual(
    (await h.rows("a")).map((r) => [r.status, r.session_id]),
    [1, 2, 3, 4, 5].map((s) => ["success", `S-${s * S}`]),
  );
});

Deno.test("two daemons on one store: each slot runs exactly once in total", async () => {
  await using h = await harness({ "a.yaml": job("a", '{ cron: "* * * * * *" }') });
  const other = openSqliteStore(`${h.dir}/state.db`, { clock: h.clock });
  try {
    const runsOf = new Map<string, number[]>();
    const runner = (who: string): ScheduledRunner => (run) => {
      runsOf.set(who, [...(runsOf.get(who) ?? []), run.slot - T0]);
      return Promise.resolve({ session_id: null, status: "success" });
    };
    const first = h.daemon({ runner: runner("first"), identity: { ...currentProcess(), nonce: "first" } });
    const second = new Daemon({
      store: other,
      clock: h.clock,
      log: createLogger({ write: () => {} }),
      paths: [h.dir],
      runner: runner("second"),
      identity: { ...currentProcess(), nonce: "second" },
      watch: false,
    });
    const controller = new AbortController();
    const both = Promise.all([first.run(controller.signal), second.run(controller.signal)]);
    await advance(h.clock, 6_000, 100);
    controller.abort();
    await both;
    const all = [...runsOf.values()].flat().sort((a, b) => a - b);
    assert.deepEqual(all, [1, 2, 3, 4, 5, 6].map((s) => s * S));
    assert.equal((await h.rows("a")).length, 6);
  } finally {
    await other.close();
  }
});

Deno.test("overrun: slots that come due while the previous run goes on are skipped and recorded", async () => {
  await using h = await harness({ "a.yaml": job("a", '{ cron: "* * * * * *" }') });
  const runner: ScheduledRunner = async (run, { signal }) => {
    h.runs.push({ ...run, at: h.clock.now() });
    await h.clock.sleep(2_500, signal);
    return { session_id: null, status: "success" };
  };
  await serve(h.daemon({ runner }), h.clock, 4_400);
  assert.deepEqual(h.runs.map((r) => r.slot - T0), [1_000, 4_000]);
  assert.deepEqual((await h.rows("a")).map((r) => [r.slot, r.status]), [
    [1_000, "success"],
    [2_000, "skipped"],
    [3_000, "skipped"],
    [4_000, "success"],
  ]);
  assert.match(
    (await h.rows("a"))[1]!.note!,
    /^overrun: the run of slot 2026-01-05T09:00:01.000Z is still going$/,
  );
});

Deno.test("overlap queue: a slot due while the previous run goes on waits and runs when it ends; one at most", async () => {
  await using h = await harness({ "a.yaml": job("a", '{ cron: "* * * * * *", overlap: queue }') });
  const ends: number[] = [];
  const runner: ScheduledRunner = async (run, { signal }) => {
    h.runs.push({ ...run, at: h.clock.now() });
    await h.clock.sleep(2_500, signal);
    ends.push(h.clock.now());
    return { session_id: null, status: "success" };
  };
  await serve(h.daemon({ runner }), h.clock, 4_400);
  // Slot 2 waited for slot 1 (1 s → 3.5 s) and started as it ended; never two at once.
  assert.deepEqual(h.runs.map((r) => r.slot - T0), [1_000, 2_000]);
  assert.ok(h.runs[1]!.at >= ends[0]!, "the queued run started after the previous one ended");
  assert.ok(h.runs[1]!.at - ends[0]! <= 300, `it started ${h.runs[1]!.at - ends[0]!} ms after`);
  const rows = await h.rows("a");
  assert.deepEqual(rows.map((r) => [r.slot, r.status]), [
    [1_000, "success"],
    [2_000, "success"],
    [3_000, "skipped"],
    [4_000, "skipped"],
  ]);
  assert.equal(rows[1]!.note, "queued (schedule.overlap: queue); started when the previous run ended");
  assert.match(
    rows[2]!.note!,
    /^overrun: slot 2026-01-05T09:00:02.000Z is already queued \(schedule.overlap: queue\)$/,
  );
  // Slot 4 was queued behind slot 2, and the daemon stopped before it could start: the history says so.
  assert.match(rows[3]!.note!, /^skipped: the daemon stopped before the queued slot could start/);
});

Deno.test("overlap cancel_previous: each new slot interrupts the running one, recorded cancelled", async () => {
  await using h = await harness({ "a.yaml": job("a", '{ cron: "* * * * * *", overlap: cancel_previous }') });
  const stopped: { slot: number; at: number; why: string }[] = [];
  const runner: ScheduledRunner = async (run, { signal }) => {
    h.runs.push({ ...run, at: h.clock.now() });
    try {
      await h.clock.sleep(2_500, signal);
    } catch (error) {
      stopped.push({ slot: run.slot - T0, at: h.clock.now() - T0, why: String((error as Error).message) });
      throw error;
    }
    return { session_id: null, status: "success" };
  };
  await serve(h.daemon({ runner }), h.clock, 4_400);
  assert.deepEqual(h.runs.map((r) => r.slot - T0), [1_000, 2_000, 3_000, 4_000]);
  // Each run was interrupted when the next slot came due (the last one finished during the stop's grace).
  assert.deepEqual(stopped.map((s) => [s.slot, s.at]), [[1_000, 2_000], [2_000, 3_000], [3_000, 4_000]]);
  assert.match(stopped[0]!.why, /cancelled: a newer slot replaced it/);
  const rows = await h.rows("a");
  assert.deepEqual(rows.map((r) => [r.slot, r.status]), [
    [1_000, "cancelled"],
    [2_000, "cancelled"],
    [3_000, "cancelled"],
    [4_000, "success"],
  ]);
  assert.equal(
    rows[0]!.note,
    "cancelled: slot 2026-01-05T09:00:02.000Z came due while it ran (schedule.overlap: cancel_previous)",
  );
});

Deno.test("overlap cancel_previous across two daemons: the other daemon's run is interrupted at its renewal", async () => {
  // One job, seen by each daemon with its own copy: the first daemon's slot is second 5, the other's second 10,
  // so the slot at 10 s is claimed by the other daemon while the first one's run of 5 s still goes on.
  await using h = await harness({});
  const copy = (dir: string, cron: string) =>
    Deno.mkdir(`${h.dir}/${dir}`).then(() =>
      Deno.writeTextFile(`${h.dir}/${dir}/a.yaml`, job("a", `{ cron: "${cron}", overlap: cancel_previous }`))
    );
  await copy("first", "5 * * * * *");
  await copy("second", "10 * * * * *");
  const other = openSqliteStore(`${h.dir}/state.db`, { clock: h.clock });
  try {
    const interrupted: { who: string; at: number }[] = [];
    const runner = (who: string): ScheduledRunner => async (run, { signal }) => {
      h.runs.push({ ...run, at: h.clock.now() });
      try {
        await h.clock.sleep(60_000, signal);
      } catch (error) {
        interrupted.push({ who, at: h.clock.now() - T0 });
        throw error;
      }
      return { session_id: null, status: "success" };
    };
    const daemon = (who: string, store: Store) =>
      new Daemon({
        store,
        clock: h.clock,
        log: createLogger({ write: () => {} }),
        paths: [`${h.dir}/${who}`],
        runner: runner(who),
        identity: { ...currentProcess(), nonce: who },
        watch: false,
        graceMs: 1_000,
      });
    const [first, second] = [daemon("first", h.store), daemon("second", other)];
    const stop = new AbortController();
    const running = [first.run(stop.signal), second.run(stop.signal)];
    await advance(h.clock, 30_000);
    stop.abort();
    await advanceUntil(h.clock, Promise.all(running));
    assert.deepEqual(h.runs.map((r) => r.slot - T0), [5_000, 10_000]);
    // The first daemon's renewal (a third of the 60 s lease after its run started) found the claim gone.
    assert.deepEqual(interrupted.map((i) => i.who), ["first", "second"]);
    assert.equal(interrupted[0]!.at, 25_000);
    const rows = await h.rows("a");
    assert.deepEqual(rows.map((r) => [r.slot, r.status]), [
      [5_000, "cancelled"],
      [10_000, "interrupted"],
    ]);
  } finally {
    await other.close();
  }
});

Deno.test("catch_up: one runs the most recent missed slot once at start-up; none records it as skipped", async () => {
  const files = {
    "one.yaml": job("one", '{ cron: "* * * * *" }'),
    "none.yaml": job("none", '{ cron: "* * * * *", catch_up: none }'),
    "fresh.yaml": job("fresh", '{ cron: "* * * * *" }'),
  };
  await using h = await harness(files, T0 + 10 * 60_000 + 30_000); // down from 09:00 to 09:10:30
  const before: ProcessIdentity = { ...currentProcess(), nonce: "before" };
  for (const name of ["one", "none"]) {
    await h.store.claimSlots([{ job: name, slot: T0 }], before, { now: T0, lease_ms: 60_000 });
    await h.store.finishRuns([{
      claim: { job: name, slot: T0 },
      holder: before,
      outcome: { status: "success", session_id: "old", now: T0 + 5_000 },
    }]);
  }
  await serve(h.daemon(), h.clock, 40_000, 1_000);
  const runs = h.runs.map((r) => [r.job, (r.slot - T0) / 60_000, r.at - T0].join(" ")).sort();
  assert.deepEqual(runs, [
    "fresh 11 660000", // a job without history starts at its next slot
    "none 11 660000",
    "one 10 630000", // the catch-up, at start
    "one 11 660000",
  ]);
  assert.deepEqual((await h.rows("one")).map((r) => [r.slot / 60_000, r.status, r.note]), [
    [0, "success", null],
    [10, "success", "catch-up"],
    [11, "success", null],
  ]);
  assert.deepEqual((await h.rows("none")).map((r) => [r.slot / 60_000, r.status, r.note]), [
    [0, "success", null],
    [10, "skipped", "missed while no daemon was running (catch_up: none)"],
    [11, "success", null],
  ]);
});

Deno.test("on_crash: skip (default): a slot whose holder died is recorded crashed and not run; its session is interrupted", async () => {
  await using h = await harness({ "a.yaml": job("a", '{ cron: "* * * * *" }') }, T0 + 30_000);
  const dead = await deadHolder();
  await h.store.claimSlots([{ job: "a", slot: T0 }], dead, { now: T0, lease_ms: 60_000 });
  const session = await h.store.createSession({ job: "a" });
  await h.store.updateSession(session.id, ownedBy(dead));
  await serve(h.daemon(), h.clock, 1_000);
  assert.deepEqual(h.runs, [], "never started twice");
  const [a] = await h.rows("a");
  assert.equal(a!.status, "crashed");
  assert.match(a!.note!, /died mid-run; not run again \(schedule\.on_crash: skip\)/);
  const after = (await h.store.getSession(session.id))!;
  assert.deepEqual([after.status, after.terminal_reason, after.owner_pid], [
    "interrupted",
    "holder_died",
    null,
  ]);
  assert.ok(h.logs.some((l) => l.includes("not run again (on_crash: skip)")));
});

Deno.test("a restarted daemon settles its predecessor's dead claim by on_crash before catching up a newer slot", async () => {
  // A minute after the dead claim: catch-up would claim the newer slot, which would supersede (abandon) it.
  await using h = await harness({ "a.yaml": job("a", '{ cron: "* * * * *" }') }, T0 + 60_500);
  const dead = await deadHolder();
  await h.store.claimSlots([{ job: "a", slot: T0 }], dead, { now: T0, lease_ms: 120_000 });
  await serve(h.daemon(), h.clock, 1_000);
  assert.deepEqual((await h.rows("a")).map((r) => [r.slot / 60_000, r.status]), [
    [0, "crashed"],
    [1, "success"],
  ]);
  assert.deepEqual(h.runs.map((r) => (r.slot - T0) / 60_000), [1]);
});

Deno.test("on_crash: rerun: a slot whose holder died is taken over once and run; a live holder's slot is left alone", async () => {
  await using h = await harness({
    "a.yaml": job("a", '{ cron: "* * * * *", on_crash: rerun }'),
    "b.yaml": job("b", '{ cron: "* * * * *", on_crash: rerun }'),
  }, T0 + 30_000);
  const dead = await deadHolder();
  const alive: ProcessIdentity = { ...currentProcess(), nonce: "alive" };
  await h.store.claimSlots([{ job: "a", slot: T0 }], dead, { now: T0, lease_ms: 60_000 });
  await h.store.claimSlots([{ job: "b", slot: T0 }], alive, { now: T0, lease_ms: 60_000 });
  await serve(h.daemon(), h.clock, 1_000);
  assert.deepEqual(h.runs.map((r) => [r.job, r.slot - T0]), [["a", 0]]);
  const [a] = await h.rows("a");
  assert.equal(a!.status, "success");
  assert.match(a!.note!, new RegExp(`^taken over from ${Deno.hostname()}:${dead.pid}$`));
  assert.equal((await h.rows("b"))[0]!.status, "running");
  assert.ok(h.logs.some((l) => l.includes(`a: taking over slot 2026-01-05T09:00:00.000Z from`)));
});

Deno.test("stop: a run that ends within the grace period finishes; a longer one is interrupted", async () => {
  await using h = await harness({ "a.yaml": job("a", '{ cron: "0 * * * * *" }') }, T0 + 59_500);
  const slow = (ms: number): ScheduledRunner => async (run, { signal }) => {
    h.runs.push({ ...run, at: h.clock.now() });
    await h.clock.sleep(ms, signal);
    return { session_id: "S", status: "success" };
  };
  const controller = new AbortController();
  const running = h.daemon({ runner: slow(2_000), graceMs: 5_000 }).run(controller.signal);
  await advance(h.clock, 1_000);
  controller.abort();
  await advance(h.clock, 2_000);
  await running;
  assert.deepEqual((await h.rows("a")).map((r) => r.status), ["success"]);

  const again = new AbortController();
  const second = h.daemon({ runner: slow(60_000), graceMs: 1_000 }).run(again.signal);
  await advance(h.clock, 60_000, 1_000);
  again.abort();
  await advance(h.clock, 2_000);
  await second;
  assert.deepEqual((await h.rows("a")).map((r) => [r.status, r.note]), [
    ["success", null],
    ["interrupted", "the daemon is stopping"],
  ]);
});

Deno.test("edited job files are reloaded: new schedule, broken edit keeps the old one, removal stops it", async () => {
  await using h = await harness({ "a.yaml": job("a", '{ cron: "0 0 1 1 *" }') });
  const controller = new AbortController();
  const daemon = h.daemon({ watch: true });
  const running = daemon.run(controller.signal);
  const until = async (what: string, check: () => boolean) => {
    for (let i = 0; i < 100 && !check(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await advance(h.clock, 100);
    }
    assert.ok(check(), what);
  };
  try {
    await Deno.writeTextFile(`${h.dir}/a.yaml`, job("a", '{ cron: "* * * * * *" }'));
    await until("the new schedule is loaded", () => daemon.jobs()[0]?.job.schedule.cron === "* * * * * *");
    await until("the job runs every second", () => h.runs.length >= 2);
    await Deno.writeTextFile(`${h.dir}/a.yaml`, "name: a\nschedule: { cron: [oops\n");
    await until(
      "the broken edit is reported",
      () => h.logs.some((l) => l.includes("keeping the previous version")),
    );
    assert.equal(daemon.jobs()[0]?.job.schedule.cron, "* * * * * *");
    await Deno.writeTextFile(`${h.dir}/b.yaml`, job("b", '{ cron: "0 0 1 1 *" }'));
    await until("a new file is loaded", () => daemon.jobs().some((j) => j.job.name === "b"));
    await Deno.remove(`${h.dir}/a.yaml`);
    await until(
      "a removed file is no longer scheduled",
      () => !daemon.jobs().some((j) => j.job.name === "a"),
    );
  } finally {
    controller.abort();
    await running;
  }
});

Deno.test("job loading: bad schedules name file:line:col; unscheduled named files and duplicate names are errors", async () => {
  await using h = await harness({
    "bad.yaml": 'name: bad\nprompt: x\nschedule:\n  cron: "61 * * * *"\n',
    "tz.yaml": 'name: tz\nprompt: x\nschedule: { cron: "0 9 * * *", timezone: Mars/Olympus }\n',
  });
  assert.throws(() => loadScheduledJobs([`${h.dir}/bad.yaml`]), {
    name: "ValidationError",
    message: new RegExp(`^${h.dir}/bad\\.yaml:4:9: schedule\\.cron: invalid cron "61 \\* \\* \\* \\*"`),
  });
  assert.throws(() => loadScheduledJobs([`${h.dir}/tz.yaml`]), {
    name: "ValidationError",
    message: new RegExp(`^${h.dir}/tz\\.yaml:3:42: schedule\\.timezone: unknown time zone "Mars/Olympus"`),
  });
  await Deno.writeTextFile(`${h.dir}/plain.yaml`, "name: plain\nprompt: x\n");
  assert.throws(() => loadScheduledJobs([`${h.dir}/plain.yaml`]), { message: /job "plain" has no schedule/ });
  await Deno.mkdir(`${h.dir}/dir`);
  await Deno.writeTextFile(`${h.dir}/dir/one.yml`, job("same", '{ cron: "* * * * *" }'));
  await Deno.writeTextFile(`${h.dir}/dir/two.yaml`, job("same", '{ cron: "* * * * *" }'));
  await Deno.writeTextFile(`${h.dir}/dir/plain.yaml`, "name: plain\nprompt: x\n");
  assert.throws(() => loadScheduledJobs([`${h.dir}/dir`]), {
    message: /two\.yaml: job name "same" is also used by .*one\.yml/,
  });
  await Deno.remove(`${h.dir}/dir/two.yaml`);
  assert.deepEqual(loadScheduledJobs([`${h.dir}/dir`]).map((j) => j.name), ["same"]);
  assert.throws(() => loadScheduledJobs([`${h.dir}/missing`]), {
    message: /Cannot read ".*missing": no such file/,
  });
});

Deno.test("a served job's session whose loop outlived its process is adopted by one daemon and resumed", async () => {
  await using h = await harness({ "a.yaml": job("a", '{ cron: "0 0 1 1 *" }') });
  const dead = ownedBy(await deadHolder());
  const me = currentProcess();
  const session = async (jobName: string, owner: typeof dead, loop: "active" | "done") => {
    const id = (await h.store.createSession({ job: jobName })).id;
    await h.store.updateSession(id, { status: "running", ...owner });
    await h.store.setState(id, "loop", { status: loop });
    return id;
  };
  const orphan = await session("a", dead, "active");
  await session("a", { owner_host: me.host, owner_pid: me.pid, owner_started: me.started }, "active"); // still owned
  await session("a", dead, "done"); // nothing left to drive
  await session("other", dead, "active"); // not served here
  const resumed: string[] = [];
  const resumer = (who: string) => (s: { session_id: string; path: string }) => {
    resumed.push(`${who} ${s.session_id} ${s.path.endsWith("/a.yaml")}`);
    return Promise.resolve({ session_id: s.session_id, status: "success" });
  };
  const daemon = (who: string) =>
    new Daemon({
      store: h.store,
      clock: h.clock,
      log: createLogger({ write: () => {} }),
      paths: [h.dir],
      runner: () => Promise.resolve({ session_id: null, status: "success" }),
      resumer: resumer(who),
      identity: { ...me, nonce: who },
      watch: false,
    });
  const controller = new AbortController();
  const both = Promise.all([daemon("first").run(controller.signal), daemon("second").run(controller.signal)]);
  await advance(h.clock, 1_000);
  controller.abort();
  await both;
  assert.deepEqual(resumed, [`first ${orphan} true`]);
  assert.equal((await h.store.getSession(orphan))!.owner_pid, Deno.pid);
});
