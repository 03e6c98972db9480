/**
 * `schedule.max_cost_usd_per_day` in a real `hermes daemon`: runs every second at $0.10 each under a $0.25
 * day; the third run gets the $0.05 left as its cost limit (it ends max_cost), and later slots are skipped
 * with a note, the day's spend read from the store.
 */
import assert from "node:assert/strict";
import { MAIN, ROOT } from "../../tests/_testing/cli.ts";
import { sqliteHandle } from "../../runtime/store/sqlite/_testing.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";

const JOB = `name: spender
model: { provider: scripted, script: ./replies.yaml, pricing: { input: 1000, output: 1000 } }
prompt: tick
schedule: { cron: "* * * * * *", timezone: UTC, max_cost_usd_per_day: 0.25 }
`;
// 100 prompt tokens at $1000 per million: $0.10 a run.
const REPLIES = "- content: tock\n  usage: { prompt_tokens: 100, completion_tokens: 0 }\n";

Deno.test("daemon: schedule.max_cost_usd_per_day caps a job's spend across runs, from the store", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-daily-budget-" });
  await Deno.mkdir(`${dir}/jobs`);
  await Deno.writeTextFile(`${dir}/jobs/spender.yaml`, JOB);
  await Deno.writeTextFile(`${dir}/jobs/replies.yaml`, REPLIES);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--home", `${dir}/home`, "daemon", `${dir}/jobs`],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  let store: ReturnType<typeof openSqliteStore> | undefined;
  try {
    const rows = () => {
      try {
        store ??= openSqliteStore(`${dir}/home/state.db`);
        return sqliteHandle(store).stmt(
          "SELECT slot, status, note FROM schedule_runs WHERE job = 'spender' AND finished_at IS NOT NULL ORDER BY slot",
        ).all() as { slot: number; status: string; note: string | null }[];
      } catch {
        return [];
      }
    };
    for (let i = 0; i < 1500 && rows().filter((r) => r.status === "skipped").length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill("SIGTERM");
    const { code, stderr } = await output;
    const log = new TextDecoder().decode(stderr);
    assert.equal(code, 0, log);
    const finished = rows();
    const statuses = finished.map((r) => r.status);
    assert.deepEqual(statuses.slice(0, 3), ["success", "success", "limit"], log);
    assert.ok(statuses.slice(3).length >= 2 && statuses.slice(3).every((s) => s === "skipped"), log);
    assert.match(
      finished[3]!.note ?? "",
      /^not run: the job spent \$0\.30 today, schedule\.max_cost_usd_per_day is \$0\.25$/,
    );
    const sessions = sqliteHandle(store!).stmt(
      "SELECT terminal_reason FROM sessions WHERE job = 'spender' ORDER BY created_at",
    ).all() as { terminal_reason: string }[];
    assert.deepEqual(sessions.map((s) => s.terminal_reason), ["completed", "completed", "max_cost"]);
    assert.ok(Math.abs((await store!.jobSpend("spender", 0)) - 0.3) < 1e-9, "three runs of $0.10 were spent");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await output;
    await store?.close();
    await Deno.remove(dir, { recursive: true });
  }
});
