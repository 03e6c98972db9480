/**
 * Every slash-command step's output is kept (docs/slash-commands.md) — a `command` event, the transcript (the command
 * line as a user row, its output as an assistant row named `command`, so the role order stays valid) and
 * `final` when it is the last step; a `/loop` interval raised to its floor says so on stderr and in an event.
 */
import assert from "node:assert/strict";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

Deno.test("command steps: each output is an event and in the transcript; the last one is final", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml":
      "name: cmds\nmodel: { provider: scripted, script: ./r.yaml }\nsteps: [/status, /loop status]\n",
    "r.yaml": "- content: unused\n",
  });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  const commands = events.filter((e) => e.type === "command");
  assert.deepEqual(commands.map((e) => e.name), ["status", "loop"]);
  assert.match(String(commands[0]!.output), /^session \S+ \(cmds\)/);
  assert.equal(commands[1]!.output, "No loop in this session.");
  const result = events.at(-1)!;
  assert.equal(result.final, "No loop in this session.");
  const store = openSqliteStore(`${dir}/state.db`);
  try {
    const rows = await store.activeMessages(String(result.session_id));
    assert.deepEqual(rows.map((m) => [m.role, m.role === "user" ? m.content : m.name]), [
      ["user", "/status"],
      ["assistant", "command"],
      ["user", "/loop status"],
      ["assistant", "command"],
    ]);
    assert.match(rows[1]!.content, /^session \S+ \(cmds\)/, "the first step's output did not vanish");
  } finally {
    await store.close();
  }
});

Deno.test("command steps: a prompt after a command is sent with the command pair, roles alternating", async () => {
  const server = await startOpenAIServer([{ content: "Answered." }]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: mixed\nmodel: { name: m, base_url: "${server.url}", api_key_env: K }\n` +
        "steps: [/loop status, Now answer.]\n",
    });
    const { code, stderr, events } = await runEvents(dir, { env: { K: "k" } });
    assert.equal(code, 0, stderr);
    assert.equal(events.at(-1)!.final, "Answered.");
    const sent = server.requests[0]!.messages!.map((m) => [m.role, m.content]);
    assert.deepEqual(sent, [
      ["user", "/loop status"],
      ["assistant", "No loop in this session."],
      ["user", "Now answer."],
    ]);
  } finally {
    await server.close();
  }
});

Deno.test("/loop: an interval under loops.min_interval is raised, on stderr and as an event; one at the floor is not", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml":
      "name: lp\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: /loop 1s check --times 1\n" +
      "loops: { min_interval: 2s }\n",
    "r.yaml": "- content: checked\n- content: checked again\n",
  });
  const raised = await runEvents(dir);
  assert.equal(raised.code, 0, raised.stderr);
  assert.match(raised.stderr, /\/loop: interval 1s raised to 2s \(loops\.min_interval\)/);
  const event = raised.events.find((e) => e.type === "interval.raised");
  assert.deepEqual(
    event &&
      { command: event.command, setting: event.setting, from: event.requested_ms, to: event.interval_ms },
    { command: "loop", setting: "loops.min_interval", from: 1000, to: 2000 },
  );
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    (await Deno.readTextFile(`${dir}/job.yaml`)).replace("1s", "2s"),
  );
  const kept = await runEvents(dir);
  assert.equal(kept.code, 0, kept.stderr);
  assert.doesNotMatch(kept.stderr, /raised/);
  assert.equal(kept.events.some((e) => e.type === "interval.raised"), false);
});
