/**
 * Cron slots as queued runs, through real `hermes daemon` processes: two daemons serve a job due every second
 * whose concurrency group it shares with a submitted job; each slot is queued once (trigger `schedule`, a
 * key made of the job and the slot) whichever daemon claims it, its record names the run's session, and the
 * group's limit holds across the scheduled and the submitted runs, as the model server sees it.
 */
import assert from "node:assert/strict";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { slotRunKey } from "../../loops/daemon/slot_runs.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 60_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`gave up waiting: ${what}`);
    await sleep(100);
  }
}

Deno.test("schedule: each slot is one queued run (trigger schedule), held to its group with submitted runs", async () => {
  let inFlight = 0;
  let most = 0;
  const server = await startOpenAIServer({
    gate: async (body) => {
      inFlight++;
      most = Math.max(most, inFlight);
      const blocker = JSON.stringify(body.messages).includes("block");
      await sleep(blocker ? 2_500 : 200);
      inFlight--;
    },
    respond: () => ({ content: "ok" }),
  });
  const model = `model: { name: m, base_url: "${server.url}", api_key_env: K }`;
  const dir = await writeFiles(await tempDir("hermes-scheduled-runs-"), {
    "jobs/tick.yaml": `name: tick\n${model}\nconcurrency: { group: shared }\n` +
      `schedule: { cron: "* * * * * *" }\nprompt: tick\n`,
    "block.yaml": `name: block\n${model}\nconcurrency: { group: shared }\nprompt: block\n`,
  });
  const home = `${dir}/home`;
  await Deno.mkdir(home);
  const env = { K: "test-key" };
  const daemons = [0, 1].map(() => spawnHermes(["daemon", "jobs"], { cwd: dir, home, env }));
  const store = openSqliteStore(`${home}/state.db`);
  try {
    const scheduled = () => store.listRuns({ job: "tick" });
    await until("two scheduled runs ended", async () => {
      const ended = (await scheduled()).filter((r) => r.status === "success");
      return ended.length >= 2 || undefined;
    });
    const submitted = await hermes(["submit", "block.yaml", "--output", "json"], { cwd: dir, home, env });
    assert.equal(submitted.code, 0, submitted.stderr);
    const blockId = JSON.parse(submitted.stdout).run_id;
    await until("the submitted run ended", async () => {
      const run = await store.getRun(blockId);
      return run?.status === "success" || undefined;
    });
    await sleep(1_500);
    for (const child of daemons) child.kill("SIGTERM");
    for (const child of daemons) {
      const out = await child.output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    }

    // The group's limit (1) held across scheduled and submitted runs: never two model calls at once.
    assert.equal(most, 1, "at most one run of the group in a model call at once");
    const block = (await store.getRun(blockId))!;
    assert.equal(block.trigger, "cli");
    const runs = await scheduled();
    assert.ok(runs.length >= 3, `only ${runs.length} scheduled runs`);
    const slots = (await store.recentRuns("tick", 1_000)).filter((r) => r.status !== "skipped");
    for (const run of runs) {
      assert.equal(run.trigger, "schedule");
      assert.equal(run.group, "shared");
      assert.match(run.key ?? "", /^schedule:tick:\d{4}-.*Z$/);
    }
    // One run per slot, whichever daemon claimed it; the slot's record names the run's session.
    for (const slot of slots) {
      const matching = runs.filter((r) => r.key === slotRunKey("tick", slot.slot));
      assert.equal(matching.length, 1, `slot ${new Date(slot.slot).toISOString()} (${slot.status})`);
      const run = matching[0]!;
      assert.equal(slot.status, run.status, `slot ${new Date(slot.slot).toISOString()}`);
      assert.equal(slot.session_id, run.session_id);
      // The slot's holder ran it (the run is pinned to the daemon holding the slot's claim).
      assert.equal(run.holder?.pid, slot.holder_pid);
    }
    assert.equal(runs.length, slots.length, "every scheduled run belongs to a recorded slot");
  } finally {
    for (const child of daemons) {
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await child.status;
    }
    await store.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
