/**
 * Per-turn cost with the store on PostgreSQL over a Unix socket against the store on SQLite (DESIGN §11,
 * §14), on the real path of bench/turn_bench.ts: `hermes run` (openSession with its compactor on, the openai
 * provider over HTTP to the OpenAI-compatible test server) doing one `read_file` tool round after another,
 * each committing its messages to the store. Timing is taken at the server, so it covers everything the
 * process does between two requests.
 *
 * - time per tool round, and the turn overhead: that minus the raw HTTP round trip of the same request (a
 *   bare fetch from a process of its own, bench/_raw_client.ts); target ≤ 2 ms on SQLite.
 * - per-turn gap: from the reply to a tool call to the next model request (the store commits sit in it).
 * - PostgreSQL − SQLite per round, and the ratio of the overheads.
 *
 * Each run is a fresh session (`hermes run JOB --db …`); its first rounds are left out. Cases run once per
 * round, interleaved: SQLite, PostgreSQL, raw. PostgreSQL is the server named by --url or
 * HERMES_TEST_POSTGRES_URL, in a scratch database dropped at the end; without one the bench says so.
 *
 *   deno run -A bench/postgres_turn_bench.ts [--url postgres://…] [--rounds N]
 */
import { parseArgs } from "node:util";
import postgres from "postgres";
import { clientOptions, parsePostgresUrl } from "../runtime/store/postgres/_url.ts";
import { interleave, median, ratio, report, spread } from "./_stats.ts";
import { type Exchange, startTimedServer } from "./_timed_server.ts";

/** Tool rounds per process; the first SKIP are left out (JIT warm-up, first connections). */
const TOOL_ROUNDS = 30;
const SKIP = 5;
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const RAW_CLIENT = new URL("./_raw_client.ts", import.meta.url).pathname;

const { values } = parseArgs({
  args: Deno.args,
  options: { url: { type: "string" }, rounds: { type: "string", default: "8" } },
});
const serverUrl = values.url ?? Deno.env.get("HERMES_TEST_POSTGRES_URL");
if (!serverUrl) {
  console.log(
    "postgres turn bench skipped: no PostgreSQL server (pass --url postgres://… or set HERMES_TEST_POSTGRES_URL)",
  );
  Deno.exit(0);
}
const rounds = Number(values.rounds);
const database = `hermes_turn_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
const pgUrl = serverUrl.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/, `$1/${database}`);
const dir = await Deno.makeTempDir({ prefix: "hermes-pg-turn-bench-" });
const server = await startTimedServer({ model: "bench-model" });
const env: Record<string, string> = {
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  HOME: dir,
  DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
  OPENAI_API_KEY: "bench",
};
const toolRound = { tool_calls: [{ name: "read_file", arguments: { path: "note.txt" } }] };

await admin(`CREATE DATABASE ${database}`);
try {
  await Deno.writeTextFile(`${dir}/note.txt`, "a short note\n");
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    [
      "name: turn-bench",
      `model: { name: bench-model, base_url: "${server.url}", context_window: 100000000 }`,
      "compaction: { enabled: true }",
      "tools: { read_file: {} }",
      "limits: { max_turns: 100000 }",
      "prompt: go",
      "",
    ].join("\n"),
  );
  const stores = { sqlite: `${dir}/state.db`, postgres: pgUrl };
  type Case = keyof typeof stores | "raw";
  const perRound: Record<Case, number[]> = { sqlite: [], postgres: [], raw: [] };
  const gaps: Record<Case, number[]> = { sqlite: [], postgres: [], raw: [] };
  const record = (name: Case, exchanges: Exchange[]) => {
    const measured = exchanges.slice(SKIP);
    perRound[name].push(median(measured.slice(1).map((e, i) => e.arrived - measured[i]!.arrived)));
    gaps[name].push(median(measured.slice(1).map((e, i) => e.arrived - measured[i]!.responded)));
  };
  const body = `${dir}/body.json`;
  const run = (name: keyof typeof stores) => async () => {
    const exchanges = await timedRun(["run", `${dir}/job.yaml`, "--db", stores[name], "--quiet"]);
    const last = server.upstream.requests.at(-1)?.messages?.at(-1);
    if (last?.role !== "tool" || !String(last.content).includes("a short note")) {
      throw new Error(`The tool round did not run read_file: last message ${JSON.stringify(last)}`);
    }
    // The raw baseline posts a request of the same size as the middle of a run.
    await Deno.writeTextFile(body, JSON.stringify(server.upstream.requests.at(-TOOL_ROUNDS / 2)));
    record(name, exchanges);
    return 0;
  };
  await interleave({
    sqlite: run("sqlite"),
    postgres: run("postgres"),
    raw: async () => {
      record("raw", await timedRaw(body, TOOL_ROUNDS));
      return 0;
    },
  }, { rounds, warmup: 1 });
  // interleave's warm-up round also pushed one sample per case: drop it.
  for (const samples of [...Object.values(perRound), ...Object.values(gaps)]) samples.shift();

  console.log(`(median of tool rounds ${SKIP + 1}–${TOOL_ROUNDS} per process; ${rounds} processes per case)`);
  report("raw HTTP round trip (bare fetch, same request)", spread(perRound.raw));
  report("time per tool round, SQLite store", spread(perRound.sqlite));
  report("time per tool round, PostgreSQL store (Unix socket)", spread(perRound.postgres));
  const overhead = (name: keyof typeof stores) => perRound[name].map((ms, i) => ms - perRound.raw[i]!);
  report("turn overhead, SQLite", spread(overhead("sqlite")), "≤ 2 ms median");
  report("turn overhead, PostgreSQL", spread(overhead("postgres")));
  report("per-turn gap, SQLite", spread(gaps.sqlite));
  report("per-turn gap, PostgreSQL", spread(gaps.postgres));
  report(
    "PostgreSQL − SQLite, per tool round",
    spread(perRound.postgres.map((ms, i) => ms - perRound.sqlite[i]!)),
  );
  report("turn overhead, PostgreSQL / SQLite", ratio(overhead("postgres"), overhead("sqlite")));
} finally {
  await server.close();
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await Deno.remove(dir, { recursive: true });
}

async function admin(statement: string): Promise<void> {
  const sql = postgres({ ...clientOptions(parsePostgresUrl(serverUrl!)), max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Runs hermes against a script of TOOL_ROUNDS tool calls and an answer; the exchanges it made. */
async function timedRun(args: string[]): Promise<Exchange[]> {
  server.upstream.replace([...Array.from({ length: TOOL_ROUNDS }, () => toolRound), { content: "done" }]);
  server.exchanges.length = 0;
  await deno(["run", "-A", MAIN, ...args]);
  if (server.exchanges.length !== TOOL_ROUNDS + 1) {
    throw new Error(`expected ${TOOL_ROUNDS + 1} model calls, the server saw ${server.exchanges.length}`);
  }
  return [...server.exchanges];
}

async function timedRaw(bodyFile: string, count: number): Promise<Exchange[]> {
  server.upstream.replace(Array.from({ length: count }, () => toolRound));
  server.exchanges.length = 0;
  await deno(["run", "-A", RAW_CLIENT, `${server.url}/chat/completions`, bodyFile, String(count)]);
  return [...server.exchanges];
}

async function deno(args: string[]): Promise<string> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: dir,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  if (code !== 0) throw new Error(`deno ${args.join(" ")} exited ${code}: ${text.decode(stderr)}`);
  return text.decode(stdout);
}
