/**
 * Compaction bookkeeping without model time (target: ≤ 200 ms on a 10 000-message session), and message
 * append throughput while another process holds (and keeps refreshing) a compaction lease vs. without one.
 * Usage: deno run -A bench/compaction_bench.ts [--rounds N]
 */
import { parseArgs } from "node:util";
import { systemClock } from "../runtime/core/clock.ts";
import { selectBoundaries } from "../runtime/compaction/boundaries.ts";
import { createCompactor } from "../runtime/compaction/compactor.ts";
import { estimateFromInput, estimateTokens } from "../runtime/compaction/estimate.ts";
import { keepLease } from "../runtime/compaction/lease.ts";
import { planPrune } from "../runtime/compaction/prune.ts";
import { loadPlanRows, withTokens } from "../runtime/compaction/rows.ts";
import { EventBus } from "../runtime/core/events.ts";
import { noHooks } from "../runtime/core/hooks.ts";
import { silentLogger } from "../runtime/core/log.ts";
import { currentProcess } from "../runtime/core/process_identity.ts";
import type { Provider } from "../runtime/providers/provider.ts";
import type { AppendMessage, Store } from "../runtime/store/store.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { ratio, report, spread } from "./_stats.ts";

const MESSAGES = 10_000;
const APPENDS = 1_000;

async function main(): Promise<void> {
  const { values } = parseArgs({ args: Deno.args, options: { rounds: { type: "string", default: "7" } } });
  const rounds = Number(values.rounds);
  const dir = await Deno.makeTempDir({ prefix: "hermes-compaction-bench-" });
  try {
    const phases: Record<string, number[]> = {
      "store.activeMessages (for reference)": [],
      "threshold check before a model call": [],
      "planning snapshot (sizes, no content)": [],
      "token estimate": [],
      "boundary selection": [],
      "prune plan": [],
      "commit (archive + insert summary)": [],
      "compact() end to end, instant model": [],
    };
    for (let round = 0; round < rounds; round++) {
      const store = openSqliteStore(`${dir}/phases-${round}.db`);
      const sessionId = await seed(store);
      let t = performance.now();
      const lap = (name: string) => {
        const now = performance.now();
        phases[name]!.push(now - t);
        t = now;
      };
      await store.activeMessages(sessionId);
      lap("store.activeMessages (for reference)");
      estimateFromInput(await store.estimateInput(sessionId));
      lap("threshold check before a model call");
      const active = await loadPlanRows(store, sessionId);
      lap("planning snapshot (sizes, no content)");
      estimateTokens(active);
      lap("token estimate");
      const { head, tail } = selectBoundaries(active, { protect_first: 3, protect_last: 20 });
      lap("boundary selection");
      const middle = active.slice(head, tail);
      planPrune(middle);
      lap("prune plan");
      const holder = currentProcess();
      await store.acquireLease({ sessionId, holder, now: Date.now(), ttlMs: 60_000 });
      t = performance.now();
      const result = await store.commitCompaction({
        sessionId,
        nonce: holder.nonce,
        now: Date.now(),
        kind: "summarize",
        reason: "manual",
        archive: middle.map((m) => m.id),
        insert: [{
          role: "user",
          content: "[Hermes compaction summary] bench",
          kind: "summary",
          pos: middle[0]!.pos,
        }],
        beforeTokens: 0,
        detail: {},
        estimate: (rows) => estimateTokens(withTokens(rows)),
      });
      lap("commit (archive + insert summary)");
      if (!result.committed) throw new Error(result.reason);
      await store.releaseLease({ sessionId, nonce: holder.nonce });
      await store.close();

      const fresh = openSqliteStore(`${dir}/compact-${round}.db`);
      const freshSession = await seed(fresh);
      const compactor = createCompactor({
        store: fresh,
        provider: instantModel,
        model: "bench",
        context_window: 128_000,
        config: {},
        events: new EventBus(systemClock),
        hooks: noHooks,
        clock: systemClock,
        log: silentLogger,
      });
      t = performance.now();
      const outcome = await compactor.compact(freshSession, {});
      lap("compact() end to end, instant model");
      if (!outcome.changed) throw new Error(`compaction did nothing: ${outcome.note}`);
      await fresh.close();
    }
    console.log(
      `compaction bookkeeping on a ${MESSAGES}-message session (${rounds} rounds, target ≤ 200 ms end to end)`,
    );
    for (const [name, samples] of Object.entries(phases)) report(`  ${name}`, spread(samples));

    const appendsPath = `${dir}/appends.db`;
    const store = openSqliteStore(appendsPath);
    const sessionId = (await store.createSession({ job: "bench" })).id;
    const free: number[] = [];
    const held: number[] = [];
    for (let round = 0; round < rounds; round++) {
      free.push(await appendRate(store, sessionId));
      const holderProcess = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", new URL(import.meta.url).pathname, "hold-lease", appendsPath, sessionId],
        stdin: "piped",
        stdout: "piped",
      }).spawn();
      const reader = holderProcess.stdout.pipeThrough(new TextDecoderStream()).getReader();
      await reader.read(); // "holding"
      held.push(await appendRate(store, sessionId));
      await holderProcess.stdin.close();
      while (!(await reader.read()).done) { /* drain */ }
      await holderProcess.status;
    }
    await store.close();
    const perSecond = (rate: number) => `${Math.round(rate)} msg/s`;
    console.log(
      `message append throughput, ${APPENDS} single-message transactions (${rounds} rounds, interleaved)`,
    );
    report("  no lease", spread(free, perSecond));
    report("  lease held + refreshed every 10 ms", spread(held, perSecond));
    report("  held / no lease", ratio(held, free));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const instantModel: Provider = {
  name: "instant",
  complete: () =>
    Promise.resolve({
      message: { role: "assistant", content: "## Goal\nbench\n## Next steps\nnone" },
      usage: null,
      finish_reason: "stop",
    }),
};

/** A session of MESSAGES messages: tool rounds with real-looking sizes, the last assistant with a reading. */
async function seed(store: Store): Promise<string> {
  const sessionId = (await store.createSession({ job: "bench" })).id;
  const messages: AppendMessage[] = [{ role: "system", content: "You are a bench." }];
  for (let i = 0; messages.length < MESSAGES; i++) {
    const id = `call_${i}`;
    messages.push(
      { role: "user", content: `step ${i}: look at file ${i}` },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id, name: "read_file", arguments: `{"path":"f${i}.ts"}` }],
      },
      {
        role: "tool",
        tool_call_id: id,
        name: "read_file",
        content: `contents of f${i}.ts `.padEnd(800, "x"),
      },
      {
        role: "assistant",
        content: `file ${i} looks fine `.padEnd(200, "y"),
        prompt_tokens: 1000 + i,
        completion_tokens: 50,
      },
    );
  }
  for (let i = 0; i < messages.length; i += 1000) {
    await store.appendMessages(sessionId, messages.slice(i, i + 1000));
  }
  return sessionId;
}

async function appendRate(store: Store, sessionId: string): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < APPENDS; i++) {
    await store.appendMessages(sessionId, [{ role: "user", content: `append ${i}` }]);
  }
  return APPENDS / ((performance.now() - started) / 1000);
}

/** Child process: takes the session's lease, refreshes it every 10 ms until stdin closes, then releases it. */
async function holdLease(dbPath: string, sessionId: string): Promise<void> {
  const store = openSqliteStore(dbPath);
  const holder = currentProcess();
  const taken = await store.acquireLease({ sessionId, holder, now: Date.now(), ttlMs: 30 });
  if (!taken.acquired) throw new Error("the bench could not take the lease");
  const kept = keepLease(store, { sessionId, nonce: holder.nonce, ttlMs: 30, clock: systemClock });
  console.log("holding");
  for await (const _ of Deno.stdin.readable) { /* wait for the parent to close stdin */ }
  await kept.stop();
  await store.releaseLease({ sessionId, nonce: holder.nonce });
  await store.close();
}

if (Deno.args[0] === "hold-lease") await holdLease(Deno.args[1]!, Deno.args[2]!);
else await main();
