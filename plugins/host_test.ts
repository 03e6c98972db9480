import assert from "node:assert/strict";
import { RunError, ValidationError } from "../runtime/core/errors.ts";
import { fixture, notAborted, pluginTest, rejection } from "./_testing.ts";
import { pluginIdentity, PluginStateTable } from "./state.ts";
import { NO_SCOPE } from "../runtime/tools/tool.ts";

const RECORDER = `
const seen = [];
export function register(ctx) {
  for (const hook of ["on_session_start", "on_session_end", "post_llm_call", "post_tool_call", "post_compaction",
    "on_session_delete", "on_loop_tick"]) {
    ctx.registerHook(hook, (payload) => { seen.push([hook, payload]); });
  }
  ctx.registerCommand("seen", { description: "what the hooks saw", handler: () => JSON.stringify(seen) });
}
`;
const THROWING_OBSERVER = `
export function register(ctx) {
  ctx.registerHook("on_session_start", () => { throw new Error("observer boom"); });
  ctx.registerCommand("alive", { description: "", handler: () => "yes" });
}
`;

pluginTest("observers get their payloads; a throwing observer is reported and ignored", async () => {
  await using f = await fixture();
  await f.write({ "recorder.js": RECORDER, "thrower.js": THROWING_OBSERVER });
  const host = await f.start([{ path: "./thrower.js" }, { path: "./recorder.js" }]);
  await host.hooks.onSessionStart({ session_id: "s1" });
  await host.hooks.onSessionDelete({ session_id: "a", reason: "delete", deleted_ids: ["a", "b", "c"] });
  await host.hooks.onLoopTick({ session_id: "s1", kind: "heartbeat", tick: 2 });

  const seen = host.commands().find((c) => c.name === "seen")!;
  const context = { session_id: "s1", source: "job" as const, signal: notAborted };
  assert.deepEqual(JSON.parse(await seen.run("", context)), [
    ["on_session_start", { session_id: "s1" }],
    ["on_session_delete", { session_id: "a", reason: "delete", deleted_ids: ["a", "b", "c"] }],
    ["on_loop_tick", { session_id: "s1", kind: "heartbeat", tick: 2 }],
  ]);
  const errors = f.events.filter((e) => e.type === "plugin.error");
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!.session_id, "s1");
  assert.equal(errors[0]!.plugin, "thrower");
  assert.equal(errors[0]!.hook, "on_session_start");
  assert.match(String(errors[0]!.error), /observer boom/);
  // A throwing handler is not a failed process: the plugin keeps serving.
  assert.equal(host.failure("thrower"), undefined);
  assert.equal(await host.commands().find((c) => c.name === "alive")!.run("", context), "yes");
});

pluginTest(
  "pre_llm_call collects non-empty strings in plugin order; a throwing one adds nothing",
  async () => {
    await using f = await fixture();
    await f.write({
      "a.js":
        `export function register(ctx) { ctx.registerHook("pre_llm_call", (e) => "A saw " + e.user_message); }`,
      "b.js": `export function register(ctx) { ctx.registerHook("pre_llm_call", () => "  "); }`,
      "c.js":
        `export function register(ctx) { ctx.registerHook("pre_llm_call", () => { throw new Error("c fails"); }); }`,
      "d.js":
        `export function register(ctx) { ctx.registerHook("pre_llm_call", async (e) => "D turn " + e.turn); }`,
    });
    const host = await f.start(["a", "b", "c", "d"].map((n) => ({ path: `${n}.js` })));
    assert.deepEqual(await host.hooks.preLlmCall({ session_id: "s1", user_message: "hi", turn: 3 }), [
      "A saw hi",
      "D turn 3",
    ]);
    assert.deepEqual(f.events.map((e) => [e.type, e.plugin, e.hook]), [[
      "plugin.error",
      "c",
      "pre_llm_call",
    ]]);
  },
);

pluginTest("pre_tool_call: block, modify, allow, and a throwing plugin blocks (fails closed)", async () => {
  await using f = await fixture();
  await f.write({
    "guard.js": `export function register(ctx) {
      ctx.registerHook("pre_tool_call", (e) => {
        if (e.args.command === "rm -rf /") return { action: "block", message: "not that" };
        if (e.tool_name === "shell") return { action: "modify", args: { ...e.args, command: e.args.command + " --dry-run" } };
      });
    }`,
    "fragile.js": `export function register(ctx) {
      ctx.registerHook("pre_tool_call", (e) => { if (e.tool_name === "write_file") throw new Error("fragile"); });
    }`,
    "odd.js": `export function register(ctx) {
      ctx.registerHook("pre_tool_call", (e) => e.tool_name === "list_dir" ? { action: "explode" } : undefined);
    }`,
  });
  const host = await f.start([{ path: "guard.js" }, { path: "fragile.js" }, { path: "odd.js" }]);
  const call = (tool_name: string, args: Record<string, unknown>) =>
    host.hooks.preToolCall({ session_id: "s1", tool_name, args, tool_call_id: "c1" });
  assert.deepEqual(await call("shell", { command: "rm -rf /" }), { action: "block", message: "not that" });
  assert.deepEqual(await call("shell", { command: "ls" }), {
    action: "modify",
    args: { command: "ls --dry-run" },
  });
  assert.deepEqual(await call("read_file", { path: "x" }), { action: "allow" });
  const blocked = await call("write_file", { path: "x", content: "" });
  assert.equal(blocked.action, "block");
  assert.match((blocked as { message: string }).message, /plugin "fragile" failed in pre_tool_call: fragile/);
  const invalid = await call("list_dir", { path: "." });
  assert.equal(invalid.action, "block");
  assert.match(
    (invalid as { message: string }).message,
    /plugin "odd" pre_tool_call returned an invalid decision/,
  );
  assert.deepEqual(f.events.map((e) => [e.plugin, e.hook]), [["fragile", "pre_tool_call"], [
    "odd",
    "pre_tool_call",
  ]]);
});

pluginTest("commands get (raw_args, {session_id, source}); a throwing command is a RunError", async () => {
  await using f = await fixture();
  await f.write({
    "cmd.js": `export function register(ctx) {
      ctx.registerCommand("echo", { description: "echoes", handler: (args, c) => args + "|" + c.session_id + "|" + c.source });
      ctx.registerCommand("count", { description: "returns a number", handler: () => 42 });
      ctx.registerCommand("fail", { description: "throws", handler: () => { throw new TypeError("bad input"); } });
    }`,
  });
  const host = await f.start([{ path: "cmd.js" }]);
  const [echo, count, fail] = host.commands();
  assert.deepEqual(host.commands().map((c) => [c.name, c.description]), [
    ["echo", "echoes"],
    ["count", "returns a number"],
    ["fail", "throws"],
  ]);
  assert.equal(
    await echo!.run("a  b", { session_id: "s9", source: "rpc", signal: notAborted }),
    "a  b|s9|rpc",
  );
  assert.equal(await count!.run("", { session_id: "s9", source: "cli", signal: notAborted }), "42");
  const error = await rejection(fail!.run("", { session_id: "s9", source: "job", signal: notAborted }));
  assert.ok(error instanceof RunError);
  assert.match(error.message, /\/fail \(plugin "cmd"\) failed: TypeError: bad input/);
  assert.deepEqual(f.events.map((e) => [e.session_id, e.plugin, e.hook]), [["s9", "cmd", "command /fail"]]);
});

pluginTest("tool arguments are validated against the JSON Schema before the plugin is called", async () => {
  await using f = await fixture();
  await f.write({
    "tool.js": `let calls = 0;
    export function register(ctx) {
      ctx.registerTool("add", {
        description: "adds two numbers",
        parameters: { type: "object", required: ["a", "b"], properties: { a: { type: "number" }, b: { type: "number" },
          mode: { type: "string", enum: ["int", "float"] } } },
        handler: ({ a, b }, c) => { calls++; if (a < 0) throw new RangeError("negative"); return { sum: a + b, calls, session: c.session_id }; },
      });
    }`,
  });
  const host = await f.start([{ path: "tool.js" }]);
  const [add] = host.tools();
  assert.equal(add!.spec.name, "add");
  assert.equal(add!.spec.description, "adds two numbers");
  assert.deepEqual(add!.spec.parameters.required, ["a", "b"]);
  const context = { session_id: "s1", job_dir: f.dir, env: {}, host_env: {}, signal: notAborted };
  const missing = await add!.run({ a: 1 }, context, NO_SCOPE);
  assert.equal(missing.status, "error");
  assert.match(missing.content, /invalid arguments for add: b: .*expected number/);
  const badEnum = await add!.run({ a: 1, b: 2, mode: "hex" }, context, NO_SCOPE);
  assert.match(badEnum.content, /invalid arguments for add: mode/);
  // The plugin was not called for invalid arguments: this is its first call.
  assert.deepEqual(await add!.run({ a: 1, b: 2 }, context, NO_SCOPE), {
    status: "ok",
    content: JSON.stringify({ sum: 3, calls: 1, session: "s1" }),
  });
  const thrown = await add!.run({ a: -1, b: 2 }, context, NO_SCOPE);
  assert.equal(thrown.status, "error");
  assert.match(thrown.content, /RangeError: negative/);
  assert.deepEqual(f.events.map((e) => [e.plugin, e.hook]), [["tool", "tool add"]]);
});

pluginTest(
  "ctx.state round-trips through the store, survives a restart and is scoped per plugin",
  async () => {
    await using f = await fixture();
    const source = `export function register(ctx) {
    ctx.registerCommand("put", { description: "", handler: async (args) => { const [k, v] = args.split(" "); await ctx.state.set(k, { v }); return "ok"; } });
    ctx.registerCommand("get", { description: "", handler: async (k) => JSON.stringify(await ctx.state.get(k)) ?? "missing" });
    ctx.registerCommand("del", { description: "", handler: async (k) => String(await ctx.state.delete(k)) });
    ctx.registerCommand("keys", { description: "", handler: async (p) => (await ctx.state.list(p || undefined)).join(",") });
  }`;
    await f.write({
      "one/plugin.json": manifest("one"),
      "one/mod.js": source,
      "two/plugin.json": manifest("two"),
    });
    await f.write({ "two/mod.js": source.replaceAll(`ctx.registerCommand("`, `ctx.registerCommand("two-`) });
    const context = { session_id: "s1", source: "cli" as const, signal: notAborted };
    const run = async (host: Awaited<ReturnType<typeof f.start>>, name: string, args: string) =>
      await host.commands().find((c) => c.name === name)!.run(args, context);

    const first = await f.start([{ path: "one" }, { path: "two" }]);
    assert.equal(await run(first, "put", "a:1 x"), "ok");
    assert.equal(await run(first, "put", "a:2 y"), "ok");
    assert.equal(await run(first, "put", "b:1 z"), "ok");
    assert.equal(await run(first, "two-get", "a:1"), "missing");
    await first.stop();

    const second = await f.start([{ path: "one" }]);
    assert.equal(await run(second, "get", "a:1"), JSON.stringify({ v: "x" }));
    assert.equal(await run(second, "keys", "a:"), "a:1,a:2");
    assert.equal(await run(second, "del", "a:1"), "true");
    assert.equal(await run(second, "del", "a:1"), "false");
    assert.equal(await run(second, "keys", ""), "a:2,b:1");
    assert.deepEqual(
      await new PluginStateTable(f.store, pluginIdentity({ root: `${f.dir}/one` })).get("b:1"),
      {
        v: "z",
      },
    );
    assert.deepEqual(
      await new PluginStateTable(f.store, pluginIdentity({ root: `${f.dir}/two` })).list(),
      [],
    );
  },
);

pluginTest("ctx.config is validated against config_schema and given to register", async () => {
  await using f = await fixture();
  await f.write({
    "cfg/plugin.json": JSON.stringify({
      name: "cfg",
      version: "1.0.0",
      entry: "mod.js",
      config_schema: { type: "object", required: ["greeting"], properties: { greeting: { type: "string" } } },
    }),
    "cfg/mod.js": `export function register(ctx) {
      ctx.registerCommand("greet", { description: "", handler: () => ctx.config.greeting + " from " + ctx.name });
    }`,
  });
  const wrongType = await rejection(f.start([{ path: "cfg", config: { greeting: 5 } }]));
  assert.ok(wrongType instanceof ValidationError);
  assert.match(wrongType.message, /^Cannot load plugin "cfg" \(cfg\): config\.greeting: .*expected string/);
  const missing = await rejection(f.start([{ path: "cfg" }]));
  assert.match(missing.message, /config\.greeting: /);
  const host = await f.start([{ path: "cfg", config: { greeting: "hello" } }]);
  assert.equal(
    await host.commands()[0]!.run("", { session_id: "s", source: "cli", signal: notAborted }),
    "hello from cfg",
  );
});

pluginTest("requested ⊄ granted refuses the load and names each missing grant", async () => {
  await using f = await fixture();
  await f.write({
    "needy/plugin.json": JSON.stringify({
      name: "needy",
      version: "1.0.0",
      entry: "mod.js",
      permissions: { read: ["./notes"], net: ["api.example.com:443"], env: ["HOME", "TOKEN"], run: true },
    }),
    "needy/mod.js": `export function register(ctx) {}`,
  });
  const error = await rejection(
    f.start([{ path: "needy", permissions: { read: ["./notes/x"], env: ["HOME"] } }]),
  );
  assert.ok(error instanceof ValidationError);
  assert.equal(
    error.message,
    'Cannot load plugin "needy" (needy): it requests permissions the job does not grant: ' +
      "read ./notes, net api.example.com:443, env TOKEN, run (any)",
  );
  // Outside the sandbox a host list next to run cannot hold for the programs it runs: refused, not granted
  // in name only. Inside it, the proxy holds it for every child (sandbox_net_plugin_cli_test.ts).
  const unenforceable = await rejection(f.start([{
    path: "needy",
    sandbox: "off",
    permissions: { read: ["."], net: ["api.example.com"], env: ["HOME", "TOKEN"], run: true },
  }]));
  assert.ok(unenforceable instanceof ValidationError);
  assert.match(
    unenforceable.message,
    /^Cannot load plugin "needy" \(needy\): permissions\.net lists hosts \(api\.example\.com\) but permissions\.run is granted too, and with sandbox: off .*grant net: true/,
  );
  const listed = await f.start([{
    path: "needy",
    permissions: { read: ["."], net: ["api.example.com"], env: ["HOME", "TOKEN"], run: true },
  }]);
  assert.equal(listed.plugins[0]!.name, "needy");
  await listed.stop();
  const host = await f.start([{
    path: "needy",
    permissions: { read: ["."], net: true, env: ["HOME", "TOKEN"], run: true },
  }]);
  assert.equal(host.plugins[0]!.name, "needy");
});

pluginTest(
  "a host list alone is granted: Deno's --allow-net holds it for the plugin's own code",
  async () => {
    await using f = await fixture();
    await f.write({ "fetcher.js": `export function register(ctx) {}` });
    const host = await f.start([{ path: "fetcher.js", permissions: { net: ["api.example.com:443"] } }]);
    assert.equal(host.plugins[0]!.name, "fetcher");
    const ffi = await rejection(
      f.start([{
        path: "fetcher.js",
        sandbox: "off",
        permissions: { net: ["api.example.com:443"], ffi: true },
      }]),
    );
    assert.match(String(ffi), /permissions\.ffi is granted too/);
  },
);

pluginTest("load errors are one-line ValidationErrors naming the plugin", async () => {
  await using f = await fixture();
  await f.write({
    "syntax.ts": "export function register(ctx {\n",
    "noexport.js": "export const x = 1;\n",
    "throws.js": `export function register() { throw new Error("cannot start"); }`,
    "badhook.js": `export function register(ctx) { ctx.registerHook("before_everything", () => {}); }`,
    "badtool.js":
      `export function register(ctx) { ctx.registerTool("t", { description: "", parameters: { type: "string" }, handler() {} }); }`,
    "late.js":
      `export function register(ctx) { setTimeout(() => {}, 0); return Promise.reject(new TypeError("late")); }`,
    "broken/plugin.json": `{"name": "Broken", "version": "1", "entry": "mod.js"}`,
    "nojson/mod.js": "",
    "notes.txt": "",
  });
  const cases: [string, RegExp][] = [
    ["syntax.ts", /^Cannot load plugin "syntax" \(syntax\.ts\): .*SyntaxError: .*syntax\.ts:1:\d+/],
    [
      "noexport.js",
      /^Cannot load plugin "noexport" .*: the module does not export a register\(ctx\) function$/,
    ],
    [
      "throws.js",
      /^Cannot load plugin "throws" .*: register\(ctx\) threw: cannot start \(at \/.*\/throws\.js:1:\d+\)$/,
    ],
    ["badhook.js", /^Cannot load plugin "badhook" .*: unknown hook "before_everything": expected one of/],
    [
      "badtool.js",
      /^Cannot load plugin "badtool" .*: tool "t" parameters: expected a JSON Schema with "type": "object"/,
    ],
    ["late.js", /register\(ctx\) threw: TypeError: late \(at \/.*\/late\.js:1:\d+\)$/],
    ["broken", /^Cannot load plugin "broken": .*plugin\.json: name: expected lower-case letters/],
    ["nojson", /^Cannot load plugin "nojson": the directory has no plugin\.json$/],
    ["missing.ts", /^Cannot load plugin "missing\.ts": no such file or directory/],
    [
      "notes.txt",
      /^Cannot load plugin "notes\.txt": expected a directory with plugin\.json or a \.ts\/\.js module$/,
    ],
  ];
  for (const [path, expected] of cases) {
    const error = await rejection(f.start([{ path }]));
    assert.ok(error instanceof ValidationError, `${path}: ${error}`);
    assert.match(error.message, expected, path);
    assert.ok(!error.message.includes("\n"), `${path}: one line: ${error.message}`);
  }
  const worker = await rejection(f.start([{ path: "throws.js", isolation: "worker" }]));
  assert.match(worker.message, /isolation "worker" is not supported/);
});

pluginTest(
  "one bad plugin stops the others and names itself; duplicate registrations are refused",
  async () => {
    await using f = await fixture();
    await f.write({
      "a.js":
        `export function register(ctx) { ctx.registerCommand("hello", { description: "", handler: () => "a" }); }`,
      "b.js":
        `export function register(ctx) { ctx.registerCommand("hello", { description: "", handler: () => "b" }); }`,
    });
    const duplicate = await rejection(f.start([{ path: "a.js" }, { path: "b.js" }]));
    assert.equal(
      duplicate.message,
      'Cannot load plugin "b": command "/hello" is already registered by plugin "a"',
    );
    const twice = await rejection(f.start([{ path: "a.js" }, { path: "./a.js" }]));
    assert.equal(twice.message, 'Cannot load plugin "a": plugin "a" is already registered by plugin "a"');
    const missing = await rejection(f.start([{ path: "a.js" }, { path: "gone.js" }]));
    assert.match(missing.message, /^Cannot load plugin "gone\.js"/);
  },
);

function manifest(name: string): string {
  return JSON.stringify({ name, version: "1.0.0", entry: "mod.js", description: `the ${name} plugin` });
}

pluginTest(
  "plugin console output and ctx.log reach the host's log prefixed with the plugin name",
  async () => {
    await using f = await fixture();
    await f.write({
      "chatty.js": `export function register(ctx) {
      console.log("from console.log");
      console.table([{ a: 1 }]);
      Deno.stdout.writeSync(new TextEncoder().encode("raw stdout\\n"));
      ctx.log.warn("from ctx.log");
      ctx.registerCommand("hi", { description: "", handler: () => { console.error("from a handler"); return "hi"; } });
    }`,
    });
    const host = await f.start([{ path: "chatty.js" }]);
    assert.equal(
      await host.commands()[0]!.run("", { session_id: "s", source: "cli", signal: notAborted }),
      "hi",
    );
    await host.stop(); // drains stderr
    for (
      const text of ["info: [chatty] from console.log", "warn: [chatty] from ctx.log", "[chatty] raw stdout"]
    ) {
      assert.ok(f.logs.some((line) => line.includes(text)), `${text} in ${f.logs.join("\n")}`);
    }
    assert.ok(f.logs.some((line) => /\[chatty\] .*│ .*a/.test(line)), "console.table is forwarded");
    assert.ok(f.logs.some((line) => line.includes("[chatty] from a handler")));
  },
);

pluginTest(
  "a cancelled command or tool call rejects with the signal's reason and the plugin goes on",
  async () => {
    await using f = await fixture();
    await f.write({
      "slow.js": `export function register(ctx) {
      ctx.registerCommand("slow", { description: "", handler: () => new Promise((r) => setTimeout(() => r("late"), 300)) });
      ctx.registerCommand("fast", { description: "", handler: () => "fast" });
    }`,
    });
    const host = await f.start([{ path: "slow.js" }]);
    const [slow, fast] = host.commands();
    const controller = new AbortController();
    const pending = slow!.run("", { session_id: "s", source: "rpc", signal: controller.signal });
    controller.abort(new DOMException("cancelled by the client", "AbortError"));
    assert.match((await rejection(pending)).message, /cancelled by the client/);
    assert.equal(await fast!.run("", { session_id: "s", source: "rpc", signal: notAborted }), "fast");
    await new Promise((r) => setTimeout(r, 400)); // the late answer arrives and is dropped
    assert.equal(f.events.length, 0);
    assert.equal(host.failure("slow"), undefined);
  },
);
