import assert from "node:assert/strict";
import { builtinTools } from "./builtin.ts";
import type { Tool, ToolContext } from "./tool.ts";
import { ToolsConfig } from "../config/job_schema.ts";
import { withoutSandbox } from "../../tests/_testing/sandbox.ts";
import { callTool } from "./_testing.ts";
import { probeOnce, probeOptions } from "../sandbox/probe.ts";

async function jobDir(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-builtin-" }));
}

function byName(tools: Tool[]): Map<string, Tool> {
  return new Map(tools.map((t) => [t.spec.name, t]));
}

/** A session's one sandbox probe. */
const probe = () => probeOnce(probeOptions({ PATH: "/usr/bin:/bin" }));

function context(dir: string): ToolContext {
  return {
    session_id: "s",
    job_dir: dir,
    env: { PATH: "/usr/bin:/bin" },
    host_env: { PATH: "/usr/bin:/bin" },
    signal: new AbortController().signal,
  };
}

Deno.test("builtinTools: only listed tools are offered; {} enables a tool with defaults", async () => {
  const dir = await jobDir();
  assert.deepEqual(await builtinTools(undefined, { job_dir: dir }), []);
  assert.deepEqual(await builtinTools({}, { job_dir: dir }), []);
  assert.deepEqual((await builtinTools({ read_file: {} }, { job_dir: dir })).map((t) => t.spec.name), [
    "read_file",
  ]);
  const all = await builtinTools(
    ToolsConfig.parse({ shell: {}, read_file: {}, write_file: {}, list_dir: {}, http_fetch: {} }),
    { job_dir: dir },
  );
  assert.deepEqual(all.map((t) => t.spec.name), [
    "shell",
    "read_file",
    "write_file",
    "list_dir",
    "http_fetch",
  ]);
  const argumentsOf = (t: Tool) => Object.keys((t.spec.parameters as { properties: object }).properties);
  assert.deepEqual(all.map(argumentsOf), [["command"], ["path"], ["path", "content"], ["path"], ["url"]]);
});

Deno.test({
  name: "builtinTools: defaults — job directory roots, 64KiB shell output, no hosts",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir();
  const tools = byName(
    await builtinTools({ shell: {}, write_file: {}, http_fetch: {} }, { job_dir: dir, probe: probe() }),
  );
  const shell = await callTool(tools.get("shell")!, { command: "pwd; seq 1 20000" }, context(dir));
  assert.equal(shell.status, "ok");
  assert.ok(shell.content.startsWith(`${dir}\n1\n`));
  assert.ok(shell.content.endsWith("\n[output truncated at 65536 bytes]"));
  const write = await callTool(tools.get("write_file")!, { path: "a/b.txt", content: "x" }, context(dir));
  assert.deepEqual(write, { status: "ok", content: "wrote 1 bytes to a/b.txt" });
  assert.equal(
    (await callTool(tools.get("write_file")!, { path: "../x", content: "x" }, context(dir))).status,
    "denied",
  );
  assert.equal(
    (await callTool(tools.get("http_fetch")!, { url: "http://127.0.0.1/" }, context(dir))).status,
    "denied",
  );
});

Deno.test({
  name: "builtinTools: config values resolve against the job directory and are applied",
  ignore: withoutSandbox,
}, async () => {
  const dir = await jobDir();
  await Deno.mkdir(`${dir}/work`);
  const fetched: string[] = [];
  const config = ToolsConfig.parse({
    shell: {
      allow: ["pwd", "echo *", "sleep *"],
      deny: ["echo secret *"],
      cwd: "./work",
      timeout: "1s",
      max_output: "1KiB",
    },
    write_file: { paths: ["./out"], max_bytes: "10B" },
    read_file: { paths: ["./out"], max_bytes: 4 },
    list_dir: { paths: ["."], max_entries: 1 },
    http_fetch: { hosts: ["api.example.com"] },
  });
  const tools = byName(
    await builtinTools(config, {
      job_dir: dir,
      probe: probe(),
      fetch: (input) => {
        fetched.push(String(input));
        return Promise.resolve(new Response("fine"));
      },
    }),
  );
  const run = (name: string, args: Record<string, unknown>) => callTool(tools.get(name)!, args, context(dir));

  assert.deepEqual(await run("shell", { command: "pwd" }), { status: "ok", content: `${dir}/work\n` });
  assert.equal((await run("shell", { command: "echo secret x" })).status, "denied");
  assert.equal((await run("shell", { command: "ls" })).status, "denied");
  assert.match((await run("shell", { command: "sleep 5" })).content, /^timed out after 1s/);

  assert.equal((await run("write_file", { path: "top.txt", content: "x" })).status, "denied");
  assert.equal((await run("write_file", { path: "out/long.txt", content: "12345678901" })).status, "error");
  assert.deepEqual(await run("write_file", { path: "out/r.txt", content: "123456" }), {
    status: "ok",
    content: "wrote 6 bytes to out/r.txt",
  });
  assert.deepEqual(await run("read_file", { path: "out/r.txt" }), {
    status: "ok",
    content: "1234\n[file truncated at 4 bytes of 6]",
  });
  assert.deepEqual(await run("list_dir", { path: "." }), {
    status: "ok",
    content: "out/\n[1 more entries not shown]",
  });
  assert.deepEqual(await run("http_fetch", { url: "https://api.example.com/x" }), {
    status: "ok",
    content: "HTTP 200\nfine",
  });
  assert.deepEqual(fetched, ["https://api.example.com/x"]);
});
