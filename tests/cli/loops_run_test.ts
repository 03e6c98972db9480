/** /loop and /heartbeat inside real `hermes run` processes, with 1 s intervals. */
import assert from "node:assert/strict";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { hermes, runEvents, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";

const job = (step: string, extra = "") =>
  `name: looper
model: { provider: scripted, script: ./r.yaml }
prompt: start
steps: ["${step}"]
loops: { min_interval: 1s, self_paced_floor: 1s }
heartbeat: { min_interval: 1s }
${extra}`;

type Event = Record<string, unknown>;
const events = (stdout: string): Event[] => stdout.trim().split("\n").map((l) => JSON.parse(l));

Deno.test("/loop 1s --times 3 runs exactly 3 ticks and exits 0 with loop_done", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job("/loop 1s check CI --times 3"),
    "r.yaml": "- content: started\n- content: tick one\n- content: tick two\n- content: tick three\n",
  });
  const { code, stderr, events: all } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.equal(all.filter((e) => e.type === "loop.tick").length, 3);
  const end = all.find((e) => e.type === "loop.end")!;
  assert.equal(end.reason, "times");
  const result = all.at(-1)!;
  assert.equal(result.terminal_reason, "loop_done");
  assert.equal(result.final, "tick three");
});

Deno.test("LOOP_COMPLETE on its own line ends the loop; mid-sentence it does not", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job("/loop 1s watch the deploy"),
    "r.yaml": [
      "- content: started",
      "- content: LOOP_COMPLETE is near, keep going",
      '- content: "All green.\\nLOOP_COMPLETE"',
      "- content: never used",
    ].join("\n") + "\n",
  });
  const { code, stderr, events: all } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.equal(all.filter((e) => e.type === "loop.tick").length, 2);
  assert.equal(all.find((e) => e.type === "loop.end")!.reason, "complete");
  assert.equal(all.at(-1)!.terminal_reason, "loop_done");
});

Deno.test("loops.max_ticks pauses the loop and the run ends", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job("/loop 1s poll", "loops: { min_interval: 1s, max_ticks: 2 }\n").replace(
      "loops: { min_interval: 1s, self_paced_floor: 1s }\n",
      "",
    ),
    "r.yaml": "- content: started\n- content: one\n- content: two\n- content: never\n",
  });
  const { code, stderr, events: all } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.equal(all.filter((e) => e.type === "loop.tick").length, 2);
  const end = all.find((e) => e.type === "loop.end")!;
  assert.equal(end.status, "paused");
  assert.equal(end.reason, "max_ticks");
});

Deno.test("a loop killed mid-run resumes from its stored tick count", async () => {
  const replies = ["- content: started", ...Array.from({ length: 8 }, (_, i) => `- content: tick ${i + 1}`)];
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job("/loop 1s poll --times 4"),
    "r.yaml": replies.join("\n") + "\n",
  });
  const child = spawnHermes(["run", "job.yaml"], { cwd: dir, home: dir });
  let ticks = 0;
  for (let i = 0; i < 200 && ticks < 2; i++) {
    await new Promise((r) => setTimeout(r, 50));
    try {
      const store = openSqliteStore(`${dir}/state.db`);
      try {
        const [session] = await store.listSessions();
        ticks = session ? ((await store.getState<{ tick?: number }>(session.id, "loop"))?.tick ?? 0) : 0;
      } finally {
        await store.close();
      }
    } catch {
      // not created yet
    }
  }
  child.kill("SIGKILL");
  await child.output();
  assert.ok(ticks >= 2, `ticks before kill: ${ticks}`);
  const resumed = await hermes(["run", "--resume", "latest", "--output", "stream-json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(resumed.code, 0, resumed.stderr);
  const all = events(resumed.stdout);
  const tickNumbers = all.filter((e) => e.type === "loop.tick").map((e) => e.tick as number);
  assert.ok(tickNumbers.length >= 1 && tickNumbers.length <= 2, `resumed ticks ${tickNumbers}`);
  assert.equal(tickNumbers.at(-1), 4);
  assert.ok(tickNumbers[0]! > 2, `resumed at tick ${tickNumbers[0]}, not from the start`);
  assert.equal(all.at(-1)!.terminal_reason, "loop_done");
});

Deno.test("a heartbeat alone keeps the run going until limits.timeout (exit 3)", async () => {
  const replies = ["- content: started", ...Array.from({ length: 10 }, () => "- content: nothing to do")];
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": job("/heartbeat every 1s check the queue", "limits: { timeout: 3500ms }\n"),
    "r.yaml": replies.join("\n") + "\n",
  });
  const { code, events: all } = await runEvents(dir);
  assert.equal(code, 3);
  const beats = all.filter((e) => e.type === "heartbeat.tick").length;
  assert.ok(beats >= 2 && beats <= 4, `beats: ${beats}`);
  assert.equal(all.at(-1)!.terminal_reason, "timeout");
});
