/** Plugins inside real `hermes run` processes: the seed scenario, a hanging plugin, commands as steps. */
import assert from "node:assert/strict";
import { hermes, ROOT, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const RULES = "RULE-42: never push to main";

Deno.test({
  name: "seed: memory plugin rules reach the model again after a compaction",
  ignore: withoutSandbox,
}, async () => {
  const long = "Here is a very detailed answer. ".repeat(80);
  const server = await startOpenAIServer([
    { content: long },
    { content: "second answer" },
    { content: "Goal: triage. Progress: two answers given." }, // the /compress summary call
    { content: "third answer" },
  ]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: seed
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY }
prompt: first question
steps: [second question, /compress, third question]
compaction: { protect_first: 1, protect_last: 2 }
plugins:
  - path: ${ROOT}/examples/plugins/memory
    permissions: { read: ["./notes"] }
    config: { rules: "${RULES}", every_turn: false }
`,
    });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr);
    assert.equal(events.filter((e) => e.type === "compaction").length, 1);
    const lastUser = (i: number) => {
      const messages = server.requests[i]!.messages as { role: string; content: string }[];
      return messages.filter((m) => m.role === "user").at(-1)!.content;
    };
    assert.equal(server.requests.length, 4);
    assert.match(lastUser(0), /RULE-42/); // first call of the session
    assert.doesNotMatch(lastUser(1), /RULE-42/); // every_turn: false
    assert.match(lastUser(3), /RULE-42/); // re-injected after post_compaction
    assert.match(lastUser(3), /^third question/);
    const third = server.requests[3]!.messages as { content: string }[];
    assert.ok(third.some((m) => m.content.startsWith("[Hermes compaction summary]")));
    assert.ok(!third.some((m) => m.content === long), "the long answer was summarised away");
  } finally {
    await server.close();
  }
});

Deno.test({
  name: "a plugin whose hook hangs is killed at hook_timeout and the run still exits 0",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: hang
model: { provider: scripted, script: ./r.yaml }
prompt: hello
plugins:
  - { path: ./hang.ts, hook_timeout: 1s }
`,
    "r.yaml": "- content: still here\n",
    "hang.ts": `export function register(ctx) {
  ctx.registerHook("pre_llm_call", () => { while (true) {} });
}
`,
  });
  const started = performance.now();
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.ok(performance.now() - started < 20_000);
  const error = events.find((e) => e.type === "plugin.error");
  assert.ok(error, "a plugin.error event");
  assert.match(String(error.error), /timed out|timeout|did not answer/i, String(error.error));
  assert.equal(events.at(-1)!.final, "still here");
});

Deno.test({
  name: "plugin commands work as job steps and with run -p; an unknown command is exit 2",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: who
model: { provider: scripted, script: ./r.yaml }
prompt: hi
steps: [/whoami]
plugins:
  - path: ${ROOT}/examples/plugins/whoami.ts
`,
    "r.yaml": "- content: hello\n",
  });
  const step = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(step.code, 0, step.stderr);
  const result = JSON.parse(step.stdout);
  assert.match(result.final, new RegExp(`session ${result.session_id}.*job`));
  const oneShot = await hermes(["run", "job.yaml", "-p", "/whoami", "--output", "json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(oneShot.code, 0, oneShot.stderr);
  assert.match(JSON.parse(oneShot.stdout).final, /cli/);
  const unknown = await hermes(["run", "job.yaml", "-p", "/nosuch"], { cwd: dir, home: dir });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "\/nosuch"/);
});

Deno.test({
  name:
    "a plugin tool that never answers is bounded by hook_timeout: the model gets an error, the run goes on",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: hangtool
model: { provider: scripted, script: ./r.yaml }
prompt: look it up
plugins:
  - { path: ./hang.ts, hook_timeout: 1s }
`,
    "r.yaml": `- tool_calls: [{ name: lookup, arguments: {} }]
- content: answered without it
`,
    "hang.ts": `export function register(ctx) {
  ctx.registerTool("lookup", { description: "never answers", parameters: { type: "object" },
    handler: () => new Promise(() => {}) });
}
`,
  });
  const started = performance.now();
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.ok(performance.now() - started < 30_000, "bounded, not hung");
  const result = events.find((e) => e.type === "tool.result");
  assert.equal(result?.status, "error");
  assert.match(String(result?.content), /did not answer tool lookup within 1s/);
  assert.equal(events.at(-1)!.final, "answered without it");
});
