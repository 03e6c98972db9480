/**
 * MCP servers as tool providers (docs/mcp.md) through real `hermes run` processes: the official reference
 * servers from npm (installed once into a shared cache, see runtime/mcp/_testing.ts), run in the OS sandbox,
 * plus a server that exits mid-call and one that never answers `initialize`.
 */
import assert from "node:assert/strict";
import { hermes, ROOT, runEvents, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import { httpEverything, referenceServers } from "../../runtime/mcp/_testing.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const TESTDATA = `${ROOT}/runtime/mcp/testdata`;
type Event = Record<string, unknown>;

function byType(events: Event[], type: string): Event[] {
  return events.filter((e) => e.type === type);
}

function resultOf(events: Event[], tool: string, index = 0): Event {
  const result = events.filter((e) => e.type === "tool.result" && e.tool === tool)[index];
  assert.ok(result, `a tool.result of ${tool} #${index}`);
  return result;
}

Deno.test({
  name: "mcp: server-everything tools through hermes run: results, errors, progress, env, hooks",
  ignore: withoutSandbox,
}, async () => {
  const { everything } = await referenceServers();
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: everything
model: { provider: scripted, script: ./r.yaml }
prompt: hi
mcp_servers:
  everything:
    command: ${everything}
    env: [LISTED_VAR, ECHO_TOKEN]
    tools: { deny: ["toggle-*"] }
  slow:
    command: ${everything}
    timeout: 1s
    tools: { allow: ["trigger-long-running-operation"] }
plugins:
  - path: ./block.ts
`,
    "block.ts": `export function register(ctx) {
  ctx.registerHook("pre_tool_call", (e) =>
    e.tool_name === "mcp__everything__get-annotated-message" ? { action: "block", message: "not today" } : undefined);
}
`,
    "r.yaml": `- tool_calls: [{ name: mcp__everything__echo, arguments: { message: hello mcp } }]
- tool_calls: [{ name: mcp__everything__get-sum, arguments: { a: 2, b: 40 } }]
- tool_calls: [{ name: mcp__everything__get-sum, arguments: { a: "x" } }]
- tool_calls: [{ name: mcp__everything__trigger-long-running-operation, arguments: { duration: 1, steps: 4 } }]
- tool_calls: [{ name: mcp__everything__get-tiny-image, arguments: {} }]
- tool_calls: [{ name: mcp__everything__get-resource-reference, arguments: { resourceType: Text, resourceId: 2 } }]
- tool_calls: [{ name: mcp__everything__get-structured-content, arguments: { location: Chicago } }]
- tool_calls: [{ name: mcp__everything__get-env, arguments: {} }]
- tool_calls: [{ name: mcp__everything__echo, arguments: { message: "token tok-9f8e7d6c5b4a" } }]
- tool_calls: [{ name: mcp__everything__get-annotated-message, arguments: { messageType: success } }]
- tool_calls: [{ name: mcp__everything__toggle-simulated-logging, arguments: {} }]
- tool_calls: [{ name: mcp__slow__trigger-long-running-operation, arguments: { duration: 60, steps: 2 } }]
- tool_calls: [{ name: mcp__slow__trigger-long-running-operation, arguments: { duration: 0.1, steps: 1 } }]
- content: done
`,
  });
  const { code, stderr, events } = await runEvents(dir, {
    env: { LISTED_VAR: "listed-value", UNLISTED_SECRET: "host-secret-value", ECHO_TOKEN: "tok-9f8e7d6c5b4a" },
  });
  assert.equal(code, 0, stderr);
  const call = byType(events, "tool.call")[0]!;
  assert.equal(call.tool, "mcp__everything__echo");
  assert.equal(call.server, "everything");
  const echo = resultOf(events, "mcp__everything__echo");
  assert.deepEqual([echo.status, echo.content, echo.server], ["ok", "Echo: hello mcp", "everything"]);
  assert.match(String(resultOf(events, "mcp__everything__get-sum").content), /42/);
  const invalid = resultOf(events, "mcp__everything__get-sum", 1);
  assert.equal(invalid.status, "error");
  assert.match(String(invalid.content), /^error: .*(Invalid|validation)/i);

  const progress = byType(events, "tool.progress");
  assert.ok(progress.length >= 1, "progress notifications become events");
  assert.equal(progress[0]!.server, "everything");
  assert.equal(progress[0]!.total, 4);
  assert.equal(progress[0]!.tool_call_id, byType(events, "tool.call")[3]!.tool_call_id);
  assert.match(
    String(resultOf(events, "mcp__everything__trigger-long-running-operation").content),
    /completed/,
  );

  assert.match(
    String(resultOf(events, "mcp__everything__get-tiny-image").content),
    /\[image: image\/png, \d+ bytes/,
  );
  const resource = String(resultOf(events, "mcp__everything__get-resource-reference").content);
  assert.match(resource, /\[resource demo:\/\/resource\/dynamic\/text\/2 \(text\/plain\)\]\nResource 2:/);
  assert.deepEqual(JSON.parse(String(resultOf(events, "mcp__everything__get-structured-content").content)), {
    temperature: 36,
    conditions: "Light rain / drizzle",
    humidity: 82,
  });

  const env = JSON.parse(String(resultOf(events, "mcp__everything__get-env").content));
  assert.equal(env.LISTED_VAR, "listed-value");
  assert.equal(env.UNLISTED_SECRET, undefined, "an unlisted variable does not reach the server");
  // The base the SDK always passes, the listed names, and PWD (set by the sandbox's --chdir): nothing else.
  const allowed = ["ECHO_TOKEN", "HOME", "LISTED_VAR", "LOGNAME", "PATH", "PWD", "SHELL", "TERM", "USER"];
  assert.deepEqual(Object.keys(env).filter((name) => !allowed.includes(name)), []);

  const secret = resultOf(events, "mcp__everything__echo", 1);
  assert.equal(secret.status, "ok");
  assert.ok(!JSON.stringify(events).includes("tok-9f8e7d6c5b4a"), "a secret in an MCP result is redacted");

  const blocked = byType(events, "tool.denied")[0]!;
  assert.deepEqual([blocked.tool, blocked.server], ["mcp__everything__get-annotated-message", "everything"]);
  assert.match(String(blocked.reason), /not today/);
  // The server's tools.deny is a rule of the tool gate: not offered, and a call is denied naming the rule.
  const filtered = resultOf(events, "mcp__everything__toggle-simulated-logging");
  assert.equal(filtered.status, "denied");
  assert.match(
    String(filtered.content),
    /^denied: mcp__everything__toggle-simulated-logging is denied by mcp_servers\.everything\.tools\.deny "toggle-\*"$/,
  );
  const gateDenied = byType(events, "tool.denied").find((e) =>
    e.tool === "mcp__everything__toggle-simulated-logging"
  );
  assert.equal(gateDenied?.server, "everything");

  const late = resultOf(events, "mcp__slow__trigger-long-running-operation");
  assert.equal(late.status, "error");
  assert.match(String(late.content), /took longer than 1s; the request was cancelled/);
  assert.equal(late.server, "slow");
  const next = resultOf(events, "mcp__slow__trigger-long-running-operation", 1);
  assert.equal(next.status, "ok", "the server answers the next call");
});

Deno.test({
  name: "mcp: server-filesystem offers only allowed tools and refuses a path outside its directory",
  ignore: withoutSandbox,
}, async () => {
  const { filesystem } = await referenceServers();
  const dir = await tempDir();
  const model = await startOpenAIServer([
    { tool_calls: [{ name: "mcp__fs__read_text_file", arguments: { path: `${dir}/docs/notes.md` } }] },
    { tool_calls: [{ name: "mcp__fs__read_text_file", arguments: { path: "/etc/hostname" } }] },
    { content: "done" },
  ]);
  try {
    await writeFiles(dir, {
      "job.yaml": `name: fs
model: { name: m, base_url: "${model.url}", api_key_env: TEST_KEY }
prompt: read the notes
mcp_servers:
  fs:
    command: ${filesystem}
    args: [./docs]
    tools: { allow: ["read_*", "list_*", "write_*"], deny: ["write_*"] }
    required: true
`,
      "docs/notes.md": "MCP notes: hello from docs\n",
    });
    const { code, stderr, events } = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(code, 0, stderr);
    const offered = (model.requests[0]!.tools ?? []).map((t) =>
      (t as { function: { name: string } }).function.name
    );
    assert.ok(offered.includes("mcp__fs__read_text_file"), offered.join(","));
    assert.ok(offered.includes("mcp__fs__list_directory"), offered.join(","));
    assert.ok(!offered.includes("mcp__fs__write_file"), "a denied write tool is not offered");
    assert.ok(
      !offered.some((name) => name.includes("edit_file") || name.includes("move_file")),
      "not allowed",
    );
    const schema = (model.requests[0]!.tools ?? []).map((t) =>
      t as { function: { name: string; parameters: unknown } }
    )
      .find((t) => t.function.name === "mcp__fs__read_text_file")!.function.parameters as {
        required?: string[];
      };
    assert.deepEqual(schema.required, ["path"], "the server's input schema reaches the model");
    const read = resultOf(events, "mcp__fs__read_text_file");
    assert.deepEqual([read.status, read.content], ["ok", "MCP notes: hello from docs\n"]);
    const outside = resultOf(events, "mcp__fs__read_text_file", 1);
    assert.equal(outside.status, "error", "isError goes back to the model as a tool error");
    assert.match(String(outside.content), /^error: .*(denied|outside)/i);
  } finally {
    await model.close();
  }
});

Deno.test({
  name: "mcp: a server that exits mid-call is a tool error, restarted once at most, and the run goes on",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: crash
model: { provider: scripted, script: ./r.yaml }
prompt: go
mcp_servers:
  crashy: { command: node, args: ["${TESTDATA}/exit_server.mjs"] }
`,
    "r.yaml": `- tool_calls: [{ name: mcp__crashy__ping }]
- tool_calls: [{ name: mcp__crashy__die }]
- tool_calls: [{ name: mcp__crashy__ping }]
- tool_calls: [{ name: mcp__crashy__die }]
- tool_calls: [{ name: mcp__crashy__ping }]
- content: survived
`,
  });
  const { code, stderr, events } = await runEvents(dir);
  assert.equal(code, 0, stderr);
  assert.equal(events.at(-1)!.final, "survived");
  const first = resultOf(events, "mcp__crashy__ping");
  assert.match(String(first.content), /^pong \d+$/);
  const died = resultOf(events, "mcp__crashy__die");
  assert.equal(died.status, "error");
  assert.match(String(died.content), /exited during the call/);
  const again = resultOf(events, "mcp__crashy__ping", 1);
  assert.equal(again.status, "ok", "restarted once");
  assert.match(String(again.content), /^pong \d+$/);
  assert.equal(resultOf(events, "mcp__crashy__die", 1).status, "error");
  const gone = resultOf(events, "mcp__crashy__ping", 2);
  assert.equal(gone.status, "error");
  assert.match(String(gone.content), /already restarted once/);
});

Deno.test({
  name:
    "mcp: a server that never answers initialize: required is exit 2 before any model call, else a warning",
  ignore: withoutSandbox,
}, async () => {
  const model = await startOpenAIServer([{ content: "went on without it" }]);
  try {
    const job = (required: boolean) =>
      `name: silent
model: { name: m, base_url: "${model.url}", api_key_env: TEST_KEY }
prompt: hi
mcp_servers:
  mute: { command: node, args: ["${TESTDATA}/silent_server.mjs"], startup_timeout: 1s, required: ${required} }
`;
    const dir = await writeFiles(await tempDir(), { "job.yaml": job(true) });
    const refused = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /Cannot start required MCP server "mute": it did not answer initialize within 1s/,
    );
    assert.equal(model.requests.length, 0, "no model call");

    await Deno.writeTextFile(`${dir}/job.yaml`, job(false));
    const warned = await runEvents(dir, { env: { TEST_KEY: "k" } });
    assert.equal(warned.code, 0, warned.stderr);
    const error = byType(warned.events, "mcp.error")[0]!;
    assert.equal(error.server, "mute");
    assert.match(String(error.error), /did not answer initialize/);
    assert.equal(warned.events.at(-1)!.final, "went on without it");
  } finally {
    await model.close();
  }
});

/** Host processes whose argv contains `marker` (the sandboxed server and its bwrap). */
async function processesWith(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (cmdline.includes(marker)) pids.push(Number(entry.name));
  }
  return pids;
}

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

for (const signal of ["SIGTERM", "SIGKILL"] as const) {
  Deno.test({
    name: `mcp: the stdio server dies with hermes on ${signal} (no orphan)`,
    ignore: withoutSandbox,
  }, async () => {
    const dir = await tempDir();
    const marker = `${dir}/marker`;
    await Deno.mkdir(marker);
    await writeFiles(dir, {
      "job.yaml": `name: orphan
model: { provider: scripted, script: ./r.yaml }
prompt: hi
mcp_servers:
  crashy: { command: node, args: ["${TESTDATA}/exit_server.mjs", "${marker}", "--linger"] }
`,
      "r.yaml": "- { delay: 60s, content: too late }\n",
    });
    const child = spawnHermes(["run", "job.yaml"], { cwd: dir, home: dir });
    await waitFor("the server to start", async () => (await processesWith(marker)).length >= 2);
    child.kill(signal);
    await child.output();
    await waitFor("the server to be gone", async () => (await processesWith(marker)).length === 0);
  });
}

Deno.test("mcp: command with url, or an unset {{ env.X }} in headers, is exit 2; a plain entry validates", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: bad
prompt: hi
mcp_servers:
  both: { command: node, url: "http://127.0.0.1:1/mcp" }
`,
  });
  const both = await hermes(["validate", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /exactly one of command \(stdio\) or url/);
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    'name: unset\nprompt: hi\nmcp_servers:\n  r: { url: "http://h/mcp", headers: { A: "{{ env.NOPE_X }}" } }\n',
  );
  const unset = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
  assert.equal(unset.code, 2);
  assert.match(unset.stderr, /job\.yaml:\d+:\d+: unknown template reference "\{\{ env\.NOPE_X \}\}"/);
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    "name: ok\nprompt: hi\nmcp_servers:\n  fs: { command: node }\n",
  );
  assert.equal((await hermes(["validate", "job.yaml"], { cwd: dir, home: dir })).code, 0);
});

Deno.test("mcp: a Streamable HTTP server (url + headers with {{ env.X }}) offers its tools the same way", async () => {
  const server = await httpEverything();
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: http
model: { provider: scripted, script: ./r.yaml }
prompt: hi
mcp_servers:
  remote:
    url: ${server.url}
    headers: { Authorization: "Bearer {{ env.SEARCH_TOKEN }}" }
    tools: { allow: [echo] }
    required: true
`,
      "r.yaml": `- tool_calls: [{ name: mcp__remote__echo, arguments: { message: over http } }]
- tool_calls: [{ name: mcp__remote__get-sum, arguments: { a: 1, b: 2 } }]
- content: done
`,
    });
    const { code, stderr, events } = await runEvents(dir, { env: { SEARCH_TOKEN: "t-123" } });
    assert.equal(code, 0, stderr);
    const echo = resultOf(events, "mcp__remote__echo");
    assert.deepEqual([echo.status, echo.content, echo.server], ["ok", "Echo: over http", "remote"]);
    // Outside tools.allow and no approver: denied, naming the rule that would allow it.
    const outside = resultOf(events, "mcp__remote__get-sum");
    assert.equal(outside.status, "denied");
    assert.match(
      String(outside.content),
      /mcp__remote__get-sum is not in mcp_servers\.remote\.tools\.allow; to allow it, add mcp_servers\.remote\.tools\.allow: \["get-sum"\]/,
    );
    const db = new TextDecoder().decode(await Deno.readFile(`${dir}/state.db`));
    assert.ok(db.includes("Bearer {{ env.SEARCH_TOKEN }}"), "the stored job keeps the template");
    assert.ok(!db.includes("t-123"), "and not the token");
  } finally {
    await server.close();
  }
});
