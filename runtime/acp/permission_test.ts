import assert from "node:assert/strict";
import type { ResolvedJob } from "../config/job.ts";
import type { JobFile } from "../config/job_schema.ts";
import { builtinTools } from "../tools/builtin.ts";
import type { Tool, ToolContext } from "../tools/tool.ts";
import { askingTools, liftAllowLists, type PermissionRequest } from "./permission.ts";
import { withoutSandbox } from "../../tests/_sandbox.ts";

async function setup(answer: boolean | Error) {
  const dir = await Deno.makeTempDir({ prefix: "hermes-permission-" });
  const outside = await Deno.makeTempDir({ prefix: "hermes-outside-" });
  await Deno.writeTextFile(`${outside}/secret.txt`, "outside text");
  const spec = {
    name: "perm",
    tools: { shell: { allow: ["echo *"], deny: ["rm *"] }, read_file: { paths: ["."] } },
  } as JobFile;
  const job: ResolvedJob = { spec, path: null, dir, inputs: {}, env: {} };
  const asked: PermissionRequest[] = [];
  const tools = askingTools(builtinTools(spec.tools, { job_dir: dir }), {
    job,
    ask: (request) => {
      asked.push(request);
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  });
  const byName = new Map(tools.map((t) => [t.spec.name, t]));
  const context: ToolContext = {
    session_id: "s1",
    job_dir: dir,
    env: { PATH: "/usr/bin:/bin" },
    signal: new AbortController().signal,
  };
  const run = (name: string, args: Record<string, unknown>) => (byName.get(name) as Tool).run(args, context);
  const cleanup = async () => {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  };
  return { run, asked, outside, cleanup };
}

Deno.test({
  name: "askingTools: an allowed call runs without asking; one outside the allow-list runs once allowed",
  ignore: withoutSandbox,
}, async () => {
  const { run, asked, outside, cleanup } = await setup(true);
  try {
    assert.deepEqual(await run("shell", { command: "echo inside" }), { status: "ok", content: "inside\n" });
    assert.equal(asked.length, 0);
    assert.deepEqual(await run("shell", { command: "printf outside" }), { status: "ok", content: "outside" });
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.tool, "shell");
    assert.equal(asked[0]!.session_id, "s1");
    assert.deepEqual(asked[0]!.args, { command: "printf outside" });
    assert.match(asked[0]!.reason, /^denied: .*tools\.shell\.allow/);
    const read = await run("read_file", { path: `${outside}/secret.txt` });
    assert.equal(read.status, "ok");
    assert.match(read.content, /outside text/);
    assert.equal(asked.length, 2);
  } finally {
    await cleanup();
  }
});

Deno.test("askingTools: a rejected or failed question keeps the denial; the deny list is never asked about", async () => {
  const rejected = await setup(false);
  try {
    const outcome = await rejected.run("shell", { command: "printf nope" });
    assert.equal(outcome.status, "denied");
    assert.match(outcome.content, /the user rejected the call/);
    const denied = await rejected.run("shell", { command: "rm -rf /tmp/x" });
    assert.equal(denied.status, "denied");
    assert.equal(rejected.asked.length, 1, "rm matched tools.shell.deny: not asked");
  } finally {
    await rejected.cleanup();
  }
  const failing = await setup(new Error("client went away"));
  try {
    const outcome = await failing.run("shell", { command: "printf nope" });
    assert.equal(outcome.status, "denied");
    assert.equal(failing.asked.length, 1);
  } finally {
    await failing.cleanup();
  }
});

Deno.test("liftAllowLists: opens allow-lists only for the tools the job enables, keeps shell.deny", () => {
  assert.deepEqual(
    liftAllowLists({
      shell: { allow: ["git *"], deny: ["git push *"], timeout: "5s" },
      list_dir: { paths: ["./src"] },
      http_fetch: { hosts: ["api.github.com"] },
    }),
    {
      shell: { deny: ["git push *"], timeout: "5s" },
      list_dir: { paths: ["/"] },
      http_fetch: { hosts: ["*"] },
    },
  );
  assert.deepEqual(liftAllowLists(undefined), {});
});
