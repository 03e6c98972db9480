/**
 * `hermes run --resume` after a run was killed mid-step: the step whose user turn is stored is finished, not
 * sent again (its prompt is stored once, its tools are not re-run), and the tool call that was running is
 * reported to the model as "interrupted, may have run". Real CLI processes, SIGKILL, the scripted model.
 */
import assert from "node:assert/strict";
import { sqliteHandle } from "../../runtime/store/sqlite/_testing.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const JOB = `name: steps
model: { provider: scripted, script: ./r.yaml }
steps: [step one, step two]
tools:
  shell: { allow: ["sleep *"], timeout: 60s }
`;

async function waitForMessages(dbPath: string, count: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    try {
      const store = openSqliteStore(dbPath);
      try {
        const row = sqliteHandle(store).db.prepare("SELECT count(*) AS n FROM messages").get() as {
          n: number;
        };
        if (Number(row.n) >= count) return;
      } finally {
        await store.close();
      }
    } catch {
      // the store may not exist yet
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`store never reached ${count} messages`);
}

Deno.test({
  name:
    "resume: a step killed during its tool call is finished, not re-sent; the tool is reported as may have run",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": JOB,
    "r.yaml": `- { match: step one, tool_calls: [{ name: shell, arguments: { command: "sleep 3" } }] }\n`,
  });
  const child = spawnHermes(["run", "job.yaml"], { cwd: dir, home: dir });
  await waitForMessages(`${dir}/state.db`, 2); // user "step one", the assistant's tool call
  child.kill("SIGKILL");
  await child.output();

  // The model of the resumed run answers step one from the transcript, then step two.
  await Deno.writeTextFile(
    `${dir}/r.yaml`,
    "- { match: step one, content: step one recovered }\n- { match: step two, content: step two done }\n",
  );
  const resumed = await hermes(["run", "--resume", "latest", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(resumed.code, 0, resumed.stderr);
  const result = JSON.parse(resumed.stdout);
  assert.equal(result.final, "step two done");
  assert.equal(result.turns, 2, "one model call finishes step one, one answers step two");

  const store = openSqliteStore(`${dir}/state.db`);
  try {
    const rows = await store.allMessages(result.session_id);
    assert.deepEqual(rows.map((m) => [m.role, m.role === "tool" ? "tool" : m.content]), [
      ["user", "step one"],
      ["assistant", ""],
      ["tool", "tool"],
      ["assistant", "step one recovered"],
      ["user", "step two"],
      ["assistant", "step two done"],
    ]);
    assert.match(rows[2]!.content, /^error: interrupted, may have run/);
  } finally {
    await store.close();
  }
});

Deno.test({
  name: "resume: a run killed between steps goes on with the next one, each prompt sent once",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": JOB,
    "r.yaml": "- { match: step one, content: one done }\n- { match: step two, content: never, delay: 60s }\n",
  });
  const child = spawnHermes(["run", "job.yaml"], { cwd: dir, home: dir });
  await waitForMessages(`${dir}/state.db`, 3); // step one answered, step two sent
  child.kill("SIGKILL");
  await child.output();
  await Deno.writeTextFile(`${dir}/r.yaml`, "- { match: step two, content: two done }\n");
  const resumed = await hermes(["run", "--resume", "latest", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(resumed.code, 0, resumed.stderr);
  const result = JSON.parse(resumed.stdout);
  assert.equal(result.final, "two done");
  const store = openSqliteStore(`${dir}/state.db`);
  try {
    const users = (await store.allMessages(result.session_id)).filter((m) => m.role === "user");
    assert.deepEqual(users.map((m) => m.content), ["step one", "step two"]);
  } finally {
    await store.close();
  }
});
