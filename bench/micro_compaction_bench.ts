/**
 * Micro-compaction (docs/compaction.md), two figures:
 * 1. a 300-turn tool-heavy session through the real CLI and the OpenAI-compatible test server, with and
 *    without micro-compaction: the largest request as a share of the window, hard compactions (kind
 *    `summarize`), and the median occupancy (request tokens ÷ the compaction threshold);
 * 2. micro bookkeeping per turn at 1 000 active messages, with an instant model (no model time): the check
 *    when nothing is due, and a pass that folds one exchange (target ≤ 2 ms).
 * Usage: deno run -A bench/micro_compaction_bench.ts [--rounds N]
 */
import { parseArgs } from "node:util";
import { systemClock } from "../runtime/core/clock.ts";
import { createCompactor } from "../runtime/compaction/compactor.ts";
import { EventBus } from "../runtime/core/events.ts";
import { noHooks } from "../runtime/core/hooks.ts";
import { silentLogger } from "../runtime/core/log.ts";
import type { Provider } from "../runtime/providers/provider.ts";
import type { ScriptEntry } from "../runtime/providers/script.ts";
import type { AppendMessage, Store } from "../runtime/store/store.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { hermes } from "../tests/_testing/cli.ts";
import { startOpenAIServer } from "../tests/_testing/openai_server.ts";
import { median, report, spread } from "./_stats.ts";

const TURNS = 300;
const WINDOW = 8000;
const THRESHOLD = 0.75 * WINDOW;
const ACTIVE = 1000;

async function main(): Promise<void> {
  const { values } = parseArgs({ args: Deno.args, options: { rounds: { type: "string", default: "40" } } });
  const dir = await Deno.makeTempDir({ prefix: "hermes-micro-bench-" });
  try {
    console.log(`a ${TURNS}-turn tool-heavy session, ${WINDOW}-token window, through the CLI`);
    for (const micro of [false, true]) {
      const run = await session(dir, micro);
      const label = micro ? "micro on " : "micro off";
      report(`  ${label}: max request ÷ window`, run.maxShare.toFixed(3), "< 1");
      report(
        `  ${label}: hard compactions (summarize)`,
        String(run.hard),
        micro ? "fewer than off" : undefined,
      );
      report(`  ${label}: micro passes / prunes`, `${run.micro} / ${run.prunes}`);
      report(`  ${label}: median occupancy (request ÷ threshold)`, run.medianOccupancy.toFixed(3));
    }
    const bookkeeping = await microBookkeeping(dir, Number(values.rounds));
    console.log(`micro bookkeeping per turn at ${ACTIVE} active messages, instant model`);
    report("  nothing due (the estimate check)", spread(bookkeeping.idle));
    report("  one exchange folded (lease, plan, commit, log)", spread(bookkeeping.fold), "≤ 2 ms");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function session(root: string, micro: boolean) {
  const script: ScriptEntry[] = Array.from({ length: 2 * TURNS }, () => ({
    match: "<messages>",
    content: "## Goal\nKeep CI green.\n## Progress\nRead the build log after each step.",
  }));
  for (let i = 1; i <= TURNS; i++) {
    script.push(
      { tool_calls: [{ name: "read_file", arguments: { path: "build.log" } }] },
      { content: `turn ${i}: the build is still green` },
    );
  }
  const server = await startOpenAIServer(script);
  const dir = await Deno.makeTempDir({ dir: root });
  try {
    const steps = Array.from({ length: TURNS - 1 }, (_, i) => `"step ${i + 2}: check the build again"`);
    await Deno.writeTextFile(
      `${dir}/job.yaml`,
      `name: watch
model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY, context_window: ${WINDOW} }
system: You watch a CI build.
prompt: "step 1: check the build"
steps: [${steps.join(", ")}]
tools:
  read_file: { paths: ["."] }
compaction: { micro: { enabled: ${micro}, threshold: 0.5 } }
`,
    );
    await Deno.writeTextFile(`${dir}/build.log`, "ok: all 412 tests passed in 3m12s\n".repeat(60));
    const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "stream-json"], {
      cwd: dir,
      home: dir,
      env: { TEST_KEY: "k" },
    });
    if (code !== 0) throw new Error(`the session failed (${code}): ${stderr.slice(-500)}`);
    const events = stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const kinds = events.filter((e) => e.type === "compaction").map((e) => e.kind);
    const sizes = server.requests.filter((r) => (r.tools?.length ?? 0) > 0).map((r) => {
      let chars = 0;
      for (const m of r.messages ?? []) {
        chars += typeof m.content === "string" ? m.content.length : 0;
        for (const call of (m.tool_calls ?? []) as { function: { arguments: string } }[]) {
          chars += call.function.arguments.length;
        }
      }
      return Math.ceil(chars / 4);
    });
    return {
      maxShare: Math.max(...sizes) / WINDOW,
      hard: kinds.filter((k) => k === "summarize").length,
      micro: kinds.filter((k) => k === "micro_summarize").length,
      prunes: kinds.filter((k) => k === "prune_tool_results").length,
      medianOccupancy: median(sizes.map((s) => s / THRESHOLD)),
    };
  } finally {
    await server.close();
  }
}

const instantModel: Provider = {
  name: "instant",
  complete: () =>
    Promise.resolve({
      message: { role: "assistant", content: "## Goal\nbench\n## Progress\nfolded" },
      usage: null,
      finish_reason: "stop",
    }),
};

/**
 * One exchange of a tool-heavy turn and the user message after it (about 270 chars/4 tokens). The answer
 * carries the provider's reading of the request it answered (`prompt` tokens), as the agent stores it.
 */
function round(i: number, prompt: number | null = null): AppendMessage[] {
  const id = `call_${i}`;
  return [
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id, name: "read_file", arguments: `{"path":"f${i}.ts"}` }],
    },
    { role: "tool", tool_call_id: id, name: "read_file", content: `contents of f${i}.ts `.padEnd(800, "x") },
    {
      role: "assistant",
      content: `file ${i} looks fine `.padEnd(200, "y"),
      prompt_tokens: prompt,
      completion_tokens: prompt === null ? null : 50,
    },
    { role: "user", content: `step ${i + 1}: look at the next file` },
  ];
}

async function microBookkeeping(dir: string, rounds: number) {
  const store = openSqliteStore(`${dir}/bookkeeping.db`);
  try {
    const sessionId = await seed(store);
    const rows = await store.transcriptRows(sessionId);
    const chars4 = rows.reduce((n, r) => n + Math.ceil(r.chars / 4), 0);
    // The micro threshold sits just under the session: each new round crosses it, one fold gets back under.
    const window = Math.floor((chars4 - 100) / 0.5);
    const compactor = createCompactor({
      store,
      provider: instantModel,
      model: "bench",
      context_window: window,
      config: { micro: { enabled: true, threshold: 0.5 } },
      events: new EventBus(systemClock),
      hooks: noHooks,
      clock: systemClock,
      log: silentLogger,
    });
    const idle: number[] = [];
    const fold: number[] = [];
    // Warm-up: the first pass, and any that follow until nothing is due.
    while (await compactor.afterTurn(sessionId, {}) !== null) { /* fold */ }
    // Each new round is one turn: either nothing is due (the check alone) or one exchange is folded.
    for (let i = 0; fold.length < rounds; i++) {
      // The provider's reading of the request the answer replied to: what was there plus the new exchange.
      const reading = (await compactor.occupancy(sessionId)).tokens + 220;
      await store.appendMessages(sessionId, round(ACTIVE + i, reading));
      const t = performance.now();
      const outcome = await compactor.afterTurn(sessionId, {});
      const ms = performance.now() - t;
      if (outcome === null) idle.push(ms);
      else if (outcome.outcome === "committed") fold.push(ms);
      else throw new Error(`the pass did not commit: ${outcome.note}`);
    }
    const active = (await store.transcriptRows(sessionId)).length;
    if (Math.abs(active - ACTIVE) > ACTIVE / 5) throw new Error(`the session drifted to ${active} messages`);
    return { idle, fold };
  } finally {
    await store.close();
  }
}

/** A session of ACTIVE messages (no readings: chars/4 throughout). */
async function seed(store: Store): Promise<string> {
  const sessionId = (await store.createSession({ job: "bench" })).id;
  const messages: AppendMessage[] = [
    { role: "system", content: "You are a bench." },
    { role: "user", content: "step 0: look at every file" },
  ];
  for (let i = 0; messages.length < ACTIVE; i++) messages.push(...round(i));
  await store.appendMessages(sessionId, messages);
  return sessionId;
}

if (import.meta.main) await main();
