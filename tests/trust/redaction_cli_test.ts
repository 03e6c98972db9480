/**
 * Redaction happens in one place, the session's outlets (runtime/session/outlets.ts): a secret arriving from
 * any side — a tool result, the model's message, a hook's answer, an error message — is replaced in the store
 * (db and WAL), on stream-json and in the result, though nothing after the outlets redacts. Real CLI, a real
 * plugin in the sandbox, scripted model.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const SECRET = "tok-leak-5f4e3d2c1b";
const MARK = "[REDACTED:SERVICE_TOKEN]";

async function storeText(dir: string): Promise<string> {
  let text = "";
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith("state.db")) {
      text += new TextDecoder().decode(await Deno.readFile(`${dir}/${entry.name}`));
    }
  }
  return text;
}

Deno.test({
  name:
    "redaction: a secret in a tool result, a model message, a hook's answer and an error is replaced everywhere",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir("hermes-redaction-"), {
    "job.yaml": `name: leaks
model: { provider: scripted, script: ./r.yaml }
prompt: go
steps: [/boom]
plugins:
  - path: ./leaky.ts
`,
    // The plugin knows the secret by itself (it is not handed any): what it says must still not get out.
    "leaky.ts": `const SECRET = "${SECRET}";
export function register(ctx) {
  ctx.registerHook("pre_llm_call", () => "hook says " + SECRET);
  ctx.registerTool("peek", { description: "peek", parameters: { type: "object" }, handler: () => "tool says " + SECRET });
  ctx.registerCommand("boom", { description: "boom", handler: () => { throw new Error("command failed with " + SECRET); } });
}
`,
    "r.yaml": `- tool_calls: [{ name: peek, arguments: {} }]
- content: "model says ${SECRET}"
`,
  });
  try {
    const env = { SERVICE_TOKEN: SECRET };
    const stream = await hermes(["run", "job.yaml", "--output", "stream-json"], { cwd: dir, home: dir, env });
    assert.equal(stream.code, 1, stream.stderr);
    assert.ok(!stream.stdout.includes(SECRET), stream.stdout);
    assert.ok(!stream.stderr.includes(SECRET), stream.stderr);
    const events = stream.stdout.trim().split("\n").map((line) => JSON.parse(line));
    const tool = events.find((e) => e.type === "tool.result");
    assert.equal(tool.content, `tool says ${MARK}`, "tool result");
    const answer = events.find((e) => e.type === "message" && e.role === "assistant" && e.content !== "");
    assert.equal(answer.content, `model says ${MARK}`, "model message");
    const turn = events.find((e) => e.type === "turn.start" && e.injected);
    assert.deepEqual(turn.injected, [`hook says ${MARK}`], "hook answer");
    const result = events.at(-1);
    assert.equal(result.type, "result");
    assert.match(
      result.error,
      new RegExp(`command failed with \\[REDACTED:SERVICE_TOKEN\\]`),
      "error message",
    );
    assert.equal(result.final, `model says ${MARK}`);

    const json = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env });
    assert.equal(json.code, 1, json.stderr);
    assert.ok(!json.stdout.includes(SECRET), json.stdout);
    const printed = JSON.parse(json.stdout);
    assert.ok(printed.error.includes(MARK), printed.error);
    assert.equal(printed.final, `model says ${MARK}`);

    const stored = await storeText(dir);
    assert.ok(!stored.includes(SECRET), "state.db and its WAL hold no secret");
    assert.ok(
      stored.includes(`tool says ${MARK}`) && stored.includes(`model says ${MARK}`),
      "the redacted text is stored",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
