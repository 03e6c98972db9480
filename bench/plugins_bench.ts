/**
 * Plugin host benchmark: plugin start in the OS sandbox (spawn → registered, target ≤ 80 ms,
 * alternating with the same start unsandboxed), hook round trip
 * host → plugin → host (target ≤ 0.5 ms median), and the hooks of one agent turn with 5 plugins each
 * observing every hook (target ≤ 3 ms). Each hook measurement is interleaved with the same exchange over
 * raw pipes to `deno` echo processes, so the ratio stays meaningful on a loaded machine. Each figure is the
 * median (min–max) of per-block medians.
 * Run: `deno run -A bench/plugins_bench.ts`.
 */
import { pathToFileURL } from "node:url";
import { startPlugins } from "../plugins/host.ts";
import { pluginArgv, PluginProcess } from "../plugins/process.ts";
import { pluginCommand } from "../plugins/sandbox_policy.ts";
import { probeSandbox } from "../runtime/sandbox/probe.ts";
import type { Bubblewrap } from "../runtime/sandbox/sandbox.ts";
import { silentLogger } from "../runtime/core/log.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { interleave, median, ratio, report, spread } from "./_stats.ts";

const OBSERVER = `
const hooks = ["on_session_start", "on_session_end", "pre_llm_call", "post_llm_call", "pre_tool_call",
  "post_tool_call", "post_compaction", "on_session_delete", "on_loop_tick"];
export function register(ctx) {
  for (const hook of hooks) ctx.registerHook(hook, () => undefined);
}
`;
const ECHO = "const b = new Uint8Array(65536); for (;;) { const n = await Deno.stdin.read(b); " +
  "if (n === null) Deno.exit(0); Deno.stdout.writeSync(b.subarray(0, n)); }";

/** `count` echo subprocesses; `round()` sends one line to all of them at once and awaits every echo. */
function echoes(count: number) {
  const children = Array.from({ length: count }, () =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", `data:application/javascript,${encodeURIComponent(ECHO)}`],
      stdin: "piped",
      stdout: "piped",
    }).spawn());
  const writers = children.map((c) => c.stdin.getWriter());
  const readers = children.map((c) => c.stdout.getReader());
  const line = new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"result":null}\n');
  return {
    round: () => Promise.all(children.map((_, j) => (writers[j]!.write(line), readers[j]!.read()))),
    async close() {
      for (const writer of writers) await writer.close();
      for (const reader of readers) await reader.cancel();
      await Promise.all(children.map((c) => c.status));
    },
  };
}

/** Blocks of `a` and `b` alternate (A B A B …) so both see the same machine load; a block's median is a sample. */
function interleaved(blocks: number, perBlock: number, a: () => Promise<unknown>, b: () => Promise<unknown>) {
  const block = (fn: () => Promise<unknown>) => async () => {
    const samples: number[] = [];
    for (let n = 0; n < perBlock; n++) {
      const t0 = performance.now();
      await fn();
      samples.push(performance.now() - t0);
    }
    return median(samples);
  };
  return interleave({ a: block(a), b: block(b) }, { rounds: blocks, warmup: 0 });
}

const dir = await Deno.makeTempDir({ prefix: "hermes-plugins-bench-" });
const store = openSqliteStore(`${dir}/state.db`);
try {
  const paths: string[] = [];
  for (let i = 0; i < 5; i++) {
    const path = `${dir}/observer${i}.js`;
    await Deno.writeTextFile(path, OBSERVER);
    paths.push(path);
  }

  // Start: spawn → registered (the subprocess alone) in bubblewrap and on the host (`sandbox: off`),
  // alternating, and startPlugins() as a whole (sandbox probe and preflight included).
  const probe = await probeSandbox({ path: Deno.env.get("PATH") ?? "" });
  if (!probe.ok) throw new Error(`the plugin bench needs the OS sandbox: ${probe.reason}; ${probe.hint}`);
  const { ok: _ok, ...bwrap } = probe;
  const argv = pluginArgv(Deno.execPath(), { flags: [`--allow-read=${paths[0]}`], max_memory_mb: 256 });
  const startOne = async (sandbox: Bubblewrap | "off") => {
    const t0 = performance.now();
    const process = new PluginProcess({
      command: pluginCommand(argv, { sandbox, granted: {}, root: paths[0]!, job_dir: dir, env: {} }),
      max_memory_mb: 256,
      log: silentLogger,
      serve: () => Promise.resolve(null),
      onFailure: () => {},
    });
    await process.call("init", { name: "observer0", entry: pathToFileURL(paths[0]!).href, config: {} }, {
      timeout_ms: 10_000,
      label: "register",
    });
    const took = performance.now() - t0;
    await process.stop();
    return took;
  };
  const sandboxed: number[] = [];
  const unsandboxed: number[] = [];
  const full: number[] = [];
  const fullOff: number[] = [];
  for (let i = 0; i < 15; i++) {
    sandboxed.push(await startOne(bwrap));
    unsandboxed.push(await startOne("off"));
    for (
      const [entry, into] of [[{ path: paths[0]! }, full], [
        { path: paths[0]!, sandbox: "off" as const },
        fullOff,
      ]] as const
    ) {
      const t1 = performance.now();
      const host = await startPlugins([entry], { job_dir: dir, store, log: silentLogger });
      into.push(performance.now() - t1);
      await host.stop();
    }
  }

  const payload = { session_id: "bench", assistant_message: { content: "ok" }, turn: 1 };
  const one = await startPlugins([{ path: paths[0]! }], { job_dir: dir, store, log: silentLogger });
  const rawOne = echoes(1);
  const hook = await interleaved(20, 250, () => one.hooks.postLlmCall(payload), rawOne.round);
  await one.stop();
  await rawOne.close();

  const five = await startPlugins(paths.map((path) => ({ path })), {
    job_dir: dir,
    store,
    log: silentLogger,
  });
  const h = five.hooks;
  const tool = { session_id: "bench", tool_name: "shell", args: { command: "ls" } };
  const turn = async () => {
    // One turn with one tool round: model call, tool call, model call.
    await h.preLlmCall({ session_id: "bench", user_message: "hi", turn: 1 });
    await h.postLlmCall(payload);
    await h.preToolCall({ ...tool, tool_call_id: "c1" });
    await h.postToolCall({ ...tool, result: "a\nb", duration_ms: 1, status: "ok" });
    await h.preLlmCall({ session_id: "bench", user_message: "hi", turn: 2 });
    await h.postLlmCall(payload);
  };
  const rawFive = echoes(5);
  const rawTurn = async () => {
    for (let i = 0; i < 6; i++) await rawFive.round();
  };
  const turns = await interleaved(10, 100, turn, rawTurn);
  await five.stop();
  await rawFive.close();

  report("plugin start in the sandbox, spawn → registered (15 starts)", spread(sandboxed), "≤ 80 ms");
  report("  the same start on the host (sandbox: off)", spread(unsandboxed));
  report("  ratio", ratio(sandboxed, unsandboxed));
  report("startPlugins() of one plugin, probe and preflight included (15 starts)", spread(full));
  report("  the same with sandbox: off", spread(fullOff));
  report("hook round trip host → plugin → host (20 × 250)", spread(hook.a), "≤ 0.5 ms median");
  report("  same exchange over raw pipes to one echo process", spread(hook.b));
  report("  ratio", ratio(hook.a, hook.b));
  report("turn hooks: 5 plugins × 6 hook calls (10 × 100 turns)", spread(turns.a), "≤ 3 ms");
  report("  same exchanges over raw pipes to 5 echo processes", spread(turns.b));
  report("  ratio", ratio(turns.a, turns.b));
} finally {
  await store.close();
  await Deno.remove(dir, { recursive: true });
}
