/**
 * `hermes sessions` performance: `list --json` on 10 000 sessions and `search` on 1 000 000
 * messages, in process (the store-level functions) and as a CLI process. Targets: list < 100 ms, search < 50 ms.
 *
 *   deno run -A bench/sessions_bench.ts [--keep DIR]
 *
 * Builds the store once in a temp dir (10 000 sessions × 100 messages, appended through the Store interface).
 * With `--keep DIR` the store is kept in DIR and reused by later runs.
 */
import { parseArgs } from "node:util";
import { jsonArray } from "../commands/sessions/_context.ts";
import { searchMessages } from "../runtime/session_admin/search.ts";
import type { AppendMessage } from "../runtime/store/store.ts";
import { sqliteHandle } from "../runtime/store/sqlite/_testing.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import type { SessionStatus } from "../runtime/core/types.ts";
import {
  fmt,
  interleave,
  median,
  percentile,
  ratio,
  report,
  spread,
  timeProcess,
  writeHelloWorld,
} from "./_stats.ts";

const SESSIONS = 10_000;
const MESSAGES_PER_SESSION = 100;
const RARE_PHRASE = "quantum marmalade overflow";
const REPO_ROOT = new URL("../", import.meta.url).pathname;

const { values } = parseArgs({ args: Deno.args, options: { keep: { type: "string" } } });
const dir = values.keep ?? await Deno.makeTempDir({ prefix: "hermes-sessions-bench-" });
await Deno.mkdir(dir, { recursive: true });
const dbPath = `${dir}/state.db`;

try {
  const existing = await Deno.stat(dbPath).then(() => true, () => false);
  if (!existing) await build(dbPath);
  const store = openSqliteStore(dbPath);
  const { db } = sqliteHandle(store);
  const stats = db.prepare(
    "SELECT (SELECT count(*) FROM sessions) s, (SELECT count(*) FROM messages) m",
  )
    .get()!;
  console.log(
    `store: ${stats.s} sessions, ${stats.m} messages, ${mib(Deno.statSync(dbPath).size)} (${dbPath})`,
  );

  console.log("\nlist (in process: query + JSON)");
  await measure(
    "list --json, all 10 000",
    30,
    "< 100 ms",
    async () => jsonArray(await store.listSessionsJson()).length,
  );
  await measure(
    "list --json --limit 50",
    200,
    "< 100 ms",
    async () => jsonArray(await store.listSessionsJson({ limit: 50 })).length,
  );
  await measure(
    "list --json --job job-7",
    100,
    "< 100 ms",
    async () => jsonArray(await store.listSessionsJson({ job: "job-7" })).length,
  );
  await measure(
    "list --json --status failed --since 30d",
    50,
    "< 100 ms",
    async () =>
      jsonArray(await store.listSessionsJson({ status: "failed", since: Date.now() - 30 * 86_400_000 }))
        .length,
  );

  console.log("\nsearch (in process, 20 hits, snippets)");
  const hitCounts = (query: string) =>
    db.prepare("SELECT count(*) n FROM messages_fts WHERE messages_fts MATCH ?").get(query)!.n;
  for (
    const [label, query, options] of [
      [`rare phrase "${RARE_PHRASE}"`, `"${RARE_PHRASE}"`, {}],
      ["one mid-frequency word", "lighthouse", {}],
      ["two common words (AND)", "build deploy", {}],
      ["two common words, --sort relevance", "build deploy", { order: "relevance" }],
      ["prefix light*", "light*", {}],
      ["mid word with --job job-7", "lighthouse", { job: "job-7" }],
    ] as const
  ) {
    const fts = query.replaceAll(/(\w+)\*/g, '"$1"*');
    await measure(
      `${label} [${hitCounts(fts)} matches]`,
      30,
      "< 50 ms",
      async () => (await searchMessages(store, query, options)).length,
    );
  }
  await store.close();

  console.log("\nCLI process (deno run -A main.ts …; includes Deno start-up), interleaved with hello-world");
  const helloDir = await Deno.makeTempDir({ prefix: "hermes-hello-" });
  const hello = await writeHelloWorld(helloDir);
  const commands = {
    "sessions list --json (10 000 rows)": cli("sessions", "list", "--json"),
    "sessions list --json --limit 50": cli("sessions", "list", "--json", "--limit", "50"),
    [`sessions search '"${RARE_PHRASE}"'`]: cli("sessions", "search", `"${RARE_PHRASE}"`, "--json"),
    "sessions search build deploy": cli("sessions", "search", "build", "deploy", "--json"),
  };
  const samples = await interleave<string>({
    hello: () => timeProcess(["run", hello], { cwd: helloDir }),
    ...Object.fromEntries(Object.entries(commands).map(([label, args]) => [label, () => timeProcess(args)])),
  }, { rounds: 10, warmup: 1 });
  await Deno.remove(helloDir, { recursive: true });
  report("bare `deno run` hello world", spread(samples.hello!));
  for (const label of Object.keys(commands)) {
    report(label, spread(samples[label]!));
    report("  ratio to hello world", ratio(samples[label]!, samples.hello!));
  }
} finally {
  if (values.keep === undefined) await Deno.remove(dir, { recursive: true });
}

function cli(...args: string[]): string[] {
  return ["run", "-A", `${REPO_ROOT}main.ts`, ...args, "--db", dbPath];
}

/** 10 000 sessions over the last 60 days, each with 100 messages of words drawn from a Zipf-like vocabulary. */
async function build(path: string): Promise<void> {
  const started = performance.now();
  const random = mulberry32(7);
  const vocabulary = makeVocabulary(random);
  const pick = () => vocabulary[Math.floor(vocabulary.length * random() ** 3)]!;
  const sentence = (n: number) => Array.from({ length: n }, pick).join(" ");
  const statuses: SessionStatus[] = ["success", "success", "success", "failed", "limit", "interrupted"];
  const now = Date.now();
  let clockNow = now;
  const buildStore = openSqliteStore(path, {
    clock: { now: () => clockNow, sleep: () => Promise.resolve() },
  });
  try {
    for (let i = 0; i < SESSIONS; i++) {
      clockNow = now - (SESSIONS - i) * 500_000;
      const session = await buildStore.createSession({
        job: `job-${i % 50}`,
        status: statuses[i % statuses.length]!,
      });
      const messages: AppendMessage[] = [];
      for (let m = 0; m < MESSAGES_PER_SESSION; m++) {
        const rare = (i * MESSAGES_PER_SESSION + m) % 20_011 === 0;
        const text = sentence(6 + Math.floor(random() * 20));
        messages.push(
          m % 3 === 1
            ? {
              role: "assistant",
              content: text,
              tool_calls: [{ id: `c${m}`, name: "shell", arguments: '{"command":"ls"}' }],
            }
            : { role: m % 3 === 0 ? "user" : "tool", content: rare ? `${text} ${RARE_PHRASE}` : text },
        );
      }
      await buildStore.appendMessages(session.id, messages);
      if (i % 10 === 0) {
        // As a compaction would leave it (the bench needs no summaries): the first 39 rows archived.
        const archive = "UPDATE messages SET active = 0 WHERE session_id = ? AND seq < 40";
        sqliteHandle(buildStore).stmt(archive).run(session.id);
      }
    }
    const appended = performance.now();
    await buildStore.syncSearchIndex();
    console.log(
      `built in ${((performance.now() - started) / 1000).toFixed(1)} s ` +
        `(full-text index of 1 000 000 messages: ${((performance.now() - appended) / 1000).toFixed(1)} s)`,
    );
  } finally {
    await buildStore.close();
  }
}

function makeVocabulary(random: () => number): string[] {
  const common = [
    "the",
    "build",
    "deploy",
    "test",
    "error",
    "file",
    "check",
    "run",
    "status",
    "ok",
    "branch",
  ];
  const rarer = ["lighthouse", "lightning", "lighter", "canary", "rollback"];
  const syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qu", "pra", "sto", "lin", "dor"];
  const words = new Set<string>(common);
  while (words.size < 5000) {
    const n = 2 + Math.floor(random() * 3);
    words.add(Array.from({ length: n }, () => syllables[Math.floor(random() * syllables.length)]).join(""));
  }
  const list = [...words];
  // Mid-frequency words sit in the middle of the distribution (about 0.1 % of words each).
  for (const [k, word] of rarer.entries()) list.splice(1200 + k * 40, 0, word);
  return list;
}

async function measure(
  label: string,
  runs: number,
  target: string | undefined,
  fn: () => Promise<number>,
): Promise<void> {
  await fn(); // warm the statement cache and the page cache
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  report(label, `${fmt(median(times))} (p90 ${fmt(percentile(times, 90))})`, target);
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
