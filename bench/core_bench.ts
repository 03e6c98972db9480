/**
 * Core budget (DESIGN §11): runtime overhead per agent turn, CLI start-up against a bare `deno run`,
 * and store append throughput against raw node:sqlite inserts in the same mode.
 */
import { DatabaseSync } from "node:sqlite";
import { Agent } from "../runtime/agent/agent.ts";
import { systemClock } from "../runtime/core/clock.ts";
import { EventBus } from "../runtime/core/events.ts";
import { noHooks } from "../runtime/core/hooks.ts";
import { Budget } from "../runtime/agent/limits.ts";
import { silentLogger } from "../runtime/core/log.ts";
import type { Provider } from "../runtime/providers/provider.ts";
import { Store } from "../runtime/store/store.ts";
import type { Tool } from "../runtime/tools/tool.ts";
import { fmt, median, report } from "./_stats.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const dir = await Deno.makeTempDir({ prefix: "hermes-bench-" });

// ---- per-turn overhead: instant model, one tool call, store commits ----
{
  const store = Store.open(`${dir}/turns.db`);
  let call = 0;
  const provider: Provider = {
    name: "instant",
    complete: () => {
      call++;
      const message = call % 2 === 1
        ? {
          role: "assistant" as const,
          content: "",
          tool_calls: [{ id: `c${call}`, name: "noop", arguments: "{}" }],
        }
        : { role: "assistant" as const, content: "done" };
      return Promise.resolve({
        message,
        usage: { prompt_tokens: 10, completion_tokens: 1 },
        finish_reason: "stop",
      });
    },
  };
  const noop: Tool = {
    spec: { name: "noop", description: "does nothing", parameters: { type: "object" } },
    run: () => Promise.resolve({ status: "ok", content: "ok" }),
  };
  const session = store.createSession({ job: "bench" });
  const agent = new Agent({
    store,
    sessionId: session.id,
    provider,
    model: "instant",
    tools: [noop],
    hooks: noHooks,
    events: new EventBus(systemClock),
    clock: systemClock,
    log: silentLogger,
    budget: new Budget(),
    toolContext: { job_dir: dir, env: {} },
  });
  const samples: number[] = [];
  for (let i = 0; i < 300; i++) {
    const t = performance.now();
    await agent.prompt("go", { source: "job" });
    // one user turn = two model calls (tool call + answer)
    if (i >= 20) samples.push((performance.now() - t) / 2);
  }
  report("agent turn overhead (instant model, tool + commit)", fmt(median(samples)), "≤ 2 ms median");
  store.close();
}

// ---- store append vs raw node:sqlite insert: same file mode (WAL, synchronous=NORMAL), same table, one row
// per BEGIN IMMEDIATE transaction. The raw side knows the next seq; the store looks it up (other writers).
{
  const N = 5000;
  const rows = (name: string) => {
    const store = Store.open(`${dir}/${name}.db`);
    return { store, session: store.createSession({ job: "bench" }) };
  };
  const rawSide = rows("raw");
  const raw = new DatabaseSync(`${dir}/raw.db`);
  raw.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  const insert = raw.prepare(
    `INSERT INTO messages (session_id, seq, pos, role, content, kind, created_at) VALUES (?, ?, ?, 'user', ?, 'message', ?)`,
  );
  let t = performance.now();
  for (let i = 1; i <= N; i++) {
    raw.exec("BEGIN IMMEDIATE");
    insert.run(rawSide.session.id, i, i, "hello world message", Date.now());
    raw.exec("COMMIT");
  }
  const rawRate = N / ((performance.now() - t) / 1000);
  raw.close();
  rawSide.store.close();
  const { store, session } = rows("append");
  t = performance.now();
  for (let i = 0; i < N; i++) {
    store.appendMessages(session.id, [{ role: "user", content: "hello world message" }]);
  }
  const storeRate = N / ((performance.now() - t) / 1000);
  store.close();
  report("raw node:sqlite insert (same table and mode, 1 row/tx)", `${rawRate.toFixed(0)}/s`);
  report("store.appendMessages (1 row/tx; FTS indexed on search)", `${storeRate.toFixed(0)}/s`);
  report("append / raw", `${(100 * storeRate / rawRate).toFixed(0)} %`, "≥ 50 %");
}

// ---- start-up ----
async function timeCommand(args: string[], runs = 15): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const out = await new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "null", stderr: "null" })
      .output();
    if (out.code !== 0) throw new Error(`${args.join(" ")} exited ${out.code}`);
    samples.push(performance.now() - t);
  }
  return median(samples.slice(2));
}
{
  await Deno.writeTextFile(`${dir}/hello.ts`, 'console.log("hello");\n');
  const bare = await timeCommand(["run", "-A", `${dir}/hello.ts`]);
  const version = await timeCommand(["run", "-A", "main.ts", "--version"]);
  const list = await timeCommand(["run", "-A", "main.ts", "sessions", "list", "--json", "--home", dir]);
  report("bare `deno run` hello-world", fmt(bare));
  report("hermes --version", `${fmt(version)} = ${(version / bare).toFixed(2)}×`, "≤ 1.5×");
  report("hermes sessions list", `${fmt(list)} = ${(list / bare).toFixed(2)}×`, "≤ 1.5×");
}
await Deno.remove(dir, { recursive: true });
