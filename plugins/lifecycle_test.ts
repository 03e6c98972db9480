/** Plugin processes that hang, crash or run out of memory are killed; none outlives the host. */
import { parentDeathLauncher } from "./parent_death.ts";
import assert from "node:assert/strict";
import { fixture, notAborted, pluginTest, processAlive, rejection } from "./_testing.ts";

const SPINNER = `export function register(ctx) {
  ctx.registerHook("on_session_start", () => { for (;;) {} });
  ctx.registerHook("pre_tool_call", () => { for (;;) {} });
  ctx.registerHook("post_llm_call", () => {});
}`;
const HEALTHY = `export function register(ctx) {
  ctx.registerHook("on_session_start", () => {});
  ctx.registerCommand("ping", { description: "", handler: () => "pong" });
}`;

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !processAlive(pid);
}

pluginTest(
  "a hook spinning forever is killed at hook_timeout and skipped afterwards; the session goes on",
  async () => {
    await using f = await fixture();
    await f.write({ "spinner.js": SPINNER, "healthy.js": HEALTHY });
    const host = await f.start([{ path: "spinner.js", hook_timeout: "1s" }, { path: "healthy.js" }]);
    const pid = host.plugins[0]!.pid;
    const started = Date.now();
    await host.hooks.onSessionStart({ session_id: "s1" });
    assert.ok(Date.now() - started < 10_000, "the hook call returns after the timeout");
    assert.ok(await gone(pid), "the spinning process was killed");
    assert.match(host.failure("spinner")!, /did not answer on_session_start within 1s/);
    assert.deepEqual(f.events.map((e) => [e.type, e.session_id, e.plugin, e.hook]), [
      ["plugin.error", "s1", "spinner", "on_session_start"],
    ]);
    // Skipped from now on: no second error, no block from a dead plugin, other plugins unaffected.
    await host.hooks.postLlmCall({ session_id: "s1", assistant_message: { content: "" }, turn: 1 });
    assert.deepEqual(
      await host.hooks.preToolCall({ session_id: "s1", tool_name: "shell", args: {}, tool_call_id: "c" }),
      { action: "allow" },
    );
    assert.equal(f.events.length, 1);
    const ping = host.commands().find((c) => c.name === "ping")!;
    assert.equal(await ping.run("", { session_id: "s1", source: "job", signal: notAborted }), "pong");
  },
);

pluginTest("a pre_tool_call that times out blocks the tool call", async () => {
  await using f = await fixture();
  await f.write({ "spinner.js": SPINNER });
  const host = await f.start([{ path: "spinner.js", hook_timeout: "1s" }]);
  const decision = await host.hooks.preToolCall({
    session_id: "s1",
    tool_name: "shell",
    args: { command: "ls" },
    tool_call_id: "c1",
  });
  assert.equal(decision.action, "block");
  assert.match(
    (decision as { message: string }).message,
    /plugin "spinner" failed in pre_tool_call: did not answer/,
  );
  assert.ok(await gone(host.plugins[0]!.pid));
});

pluginTest("a plugin allocating without bound is killed at its heap cap and the host survives", async () => {
  await using f = await fixture();
  await f.write({
    "hog.js": `export function register(ctx) {
      ctx.registerHook("post_llm_call", () => { const keep = []; for (;;) keep.push(new Array(100000).fill(Math.random())); });
    }`,
    "healthy.js": HEALTHY,
  });
  const host = await f.start([{ path: "hog.js", max_memory: "64MiB" }, { path: "healthy.js" }]);
  await host.hooks.postLlmCall({ session_id: "s1", assistant_message: { content: "" }, turn: 1 });
  assert.match(host.failure("hog")!, /exceeded its memory limit \(max_memory 64 MiB\)/);
  assert.deepEqual(f.events.map((e) => [e.plugin, e.hook]), [["hog", "post_llm_call"]]);
  assert.ok(await gone(host.plugins[0]!.pid));
  const ping = host.commands().find((c) => c.name === "ping")!;
  assert.equal(await ping.run("", { session_id: "s1", source: "job", signal: notAborted }), "pong");
});

pluginTest("a plugin that exits in a hook or while idle is failed and reported", async () => {
  await using f = await fixture();
  await f.write({
    "quitter.js": `export function register(ctx) { ctx.registerHook("on_loop_tick", () => Deno.exit(7)); }`,
    "idler.js":
      `export function register(ctx) { ctx.registerCommand("die", { description: "", handler: () => { setTimeout(() => Deno.exit(0), 10); return "bye"; } }); }`,
  });
  const host = await f.start([{ path: "quitter.js" }, { path: "idler.js" }]);
  await host.hooks.onLoopTick({ session_id: "s1", kind: "loop", tick: 1 });
  assert.match(host.failure("quitter")!, /exited unexpectedly with code 7/);
  const die = host.commands()[0]!;
  assert.equal(await die.run("", { session_id: "s2", source: "cli", signal: notAborted }), "bye");
  assert.ok(await gone(host.plugins[1]!.pid));
  for (let i = 0; i < 100 && !host.failure("idler"); i++) await new Promise((r) => setTimeout(r, 20));
  assert.match(host.failure("idler")!, /exited unexpectedly with code 0/);
  // The idle exit has no call in flight: it is reported against the host's default session.
  assert.deepEqual(f.events.map((e) => [e.session_id, e.plugin, e.hook]), [
    ["s1", "quitter", "on_loop_tick"],
    ["s-default", "idler", null],
  ]);
});

pluginTest("stop() ends every plugin process, even one stuck in a hook", async () => {
  await using f = await fixture();
  await f.write({ "spinner.js": SPINNER, "healthy.js": HEALTHY });
  const host = await f.start([{ path: "spinner.js" }, { path: "healthy.js" }]);
  const pending = host.hooks.onSessionStart({ session_id: "s1" });
  await new Promise((r) => setTimeout(r, 100));
  await host.stop();
  await pending;
  assert.ok(host.plugins.every((p) => !processAlive(p.pid)));
  assert.equal(f.events.length, 0, "stopping is not a plugin error");
});

for (const sandbox of ["on", "off"] as const) {
  pluginTest(
    `plugins exit when the host is SIGKILLed: idle, waiting and spinning ones (sandbox ${sandbox})`,
    async () => {
      await using f = await fixture();
      await f.write({
        "idle.js": HEALTHY,
        "waiting.js": `export function register(ctx) {
        ctx.registerHook("on_session_start", () => new Promise((resolve) => setTimeout(resolve, 60_000)));
      }`,
        // Never reads its stdin again: only the kernel can end it (bwrap's --die-with-parent and its PID
        // namespace, or, unsandboxed, setpriv's parent-death signal).
        "spinning.js": `export function register(ctx) {
        ctx.registerHook("on_session_start", () => { while (true) {} });
      }`,
      });
      const spinning = sandbox === "on" || parentDeathLauncher().length > 0;
      const script = new URL("./testdata/start_and_wait.ts", import.meta.url).pathname;
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          script,
          ...(sandbox === "off" ? ["--off"] : []),
          "idle.js",
          "waiting.js",
          ...(spinning ? ["spinning.js"] : []),
        ],
        cwd: f.dir,
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes("\n")) text += (await reader.read()).value ?? "";
      const pids = (JSON.parse(text) as number[]).flatMap(withDescendants);
      assert.ok(pids.length >= (spinning ? 3 : 2));
      assert.ok(pids.every(processAlive));
      child.kill("SIGKILL");
      await child.status;
      await reader.cancel();
      for (const pid of pids) assert.ok(await gone(pid), `plugin process ${pid} outlived its host`);
    },
  );
}

pluginTest("stop() returns even when a grandchild holds the plugin's pipes open", async () => {
  await using f = await fixture();
  const marker = String(5_000_000 + Math.floor(Math.random() * 1_000_000));
  await f.write({
    "spawner.js": `export function register(ctx) {
      ctx.registerCommand("spawn", { description: "", handler: () => { new Deno.Command("/bin/sleep", { args: ["${marker}"] }).spawn(); return "spawned"; } });
    }`,
  });
  const host = await f.start([{ path: "spawner.js", permissions: { run: ["/bin/sleep"] } }]);
  await host.commands()[0]!.run("", { session_id: "s", source: "cli", signal: notAborted });
  // Inside the sandbox the plugin sees its own PID namespace: find the grandchild by its arguments. It may
  // still be between fork and exec when the command answers, so look for up to 5 s.
  const find = () =>
    descendants(host.plugins[0]!.pid).find((pid) => cmdline(pid) === `/bin/sleep\0${marker}\0`);
  let grandchild = find();
  for (let i = 0; i < 100 && grandchild === undefined; i++) {
    await new Promise((r) => setTimeout(r, 50));
    grandchild = find();
  }
  assert.ok(grandchild !== undefined && processAlive(grandchild), "the grandchild runs");
  const started = Date.now();
  await host.stop();
  assert.ok(Date.now() - started < 10_000);
  assert.ok(!processAlive(host.plugins[0]!.pid));
  assert.ok(await gone(grandchild), "the grandchild dies with the plugin's sandbox");
});

/** `pid` and every process below it (host pids). */
function withDescendants(pid: number): number[] {
  return [pid, ...descendants(pid)];
}

function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...children.get(ppid) ?? [], Number(entry.name)]);
    } catch {
      // gone
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const next = children.get(queue.shift()!) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

function cmdline(pid: number): string {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`);
  } catch {
    return "";
  }
}

pluginTest(
  "an oversized protocol message fails the plugin; a large answer under the limit is fine",
  async () => {
    await using f = await fixture();
    await f.write({
      "big.js": `export function register(ctx) {
      ctx.registerCommand("big", { description: "", handler: (n) => "x".repeat(Number(n)) });
    }`,
    });
    const host = await f.start([{ path: "big.js" }]);
    const big = host.commands()[0]!;
    const context = { session_id: "s1", source: "cli" as const, signal: notAborted };
    assert.equal((await big.run(String(4 * 1024 * 1024), context)).length, 4 * 1024 * 1024);
    const error = await rejection(big.run(String(20 * 1024 * 1024), context));
    assert.match(error.message, /\/big \(plugin "big"\) failed: sent an oversized message/);
    assert.deepEqual(f.events.map((e) => [e.plugin, e.hook]), [["big", "command /big"]]);
    assert.ok(await gone(host.plugins[0]!.pid));
  },
);
