/**
 * Start-up, each figure interleaved with a bare `deno run` hello-world in the same run:
 * `hermes --version`, `hermes sessions list` on a store with 1 000 sessions (targets ≤ 1.5×), and spawn →
 * first model request of `hermes run -p hi` against the OpenAI-compatible test server (target ≤ 5×).
 *
 *   deno run -A bench/startup_bench.ts [--rounds N] [--baseline OTHER_CHECKOUT]
 */
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { interleave, ratio, report, spread, timeProcess, writeHelloWorld } from "./_stats.ts";
import { startTimedServer } from "./_timed_server.ts";

const SESSIONS = 1_000;
const ROOT = new URL("..", import.meta.url).pathname;

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "20" }, baseline: { type: "string" } },
});
const rounds = Number(values.rounds);
// --baseline DIR: another checkout (say, before a change) timed in the same rounds, for before/after tables.
const trees = [
  { label: "", root: ROOT },
  ...(values.baseline
    ? [{ label: ` [${values.baseline}]`, root: values.baseline.replace(/\/?$/, "/") }]
    : []),
];
const dir = await Deno.makeTempDir({ prefix: "hermes-startup-bench-" });
const server = await startTimedServer({ model: "bench-model" });
try {
  const hello = await writeHelloWorld(dir);
  const env = childEnv();
  const runEnv = {
    ...env,
    OPENAI_BASE_URL: server.url,
    OPENAI_API_KEY: "bench",
    HERMES_MODEL: "bench-model",
  };
  const cases: Record<string, () => Promise<number>> = {
    // In a directory without deno.json: nothing but Deno itself.
    hello: () => timeProcess(["run", "-A", hello], { env, cwd: dir }),
  };
  for (const [i, { root }] of trees.entries()) {
    const hermes = (args: string[], options: { env: Record<string, string> }) =>
      timeProcess(["run", "-A", `${root}main.ts`, ...args], { ...options, cwd: root });
    const listHome = `${dir}/list-home-${i}`;
    await hermes(["sessions", "list", "--home", listHome], { env });
    seedSessions(`${listHome}/state.db`, SESSIONS);
    cases[`version${i}`] = () => hermes(["--version"], { env });
    cases[`list${i}`] = () => hermes(["sessions", "list", "--json", "--home", listHome], { env });
    cases[`run${i}`] = async () => {
      server.upstream.push({ content: "hello" });
      server.exchanges.length = 0;
      const started = performance.now();
      await hermes(["run", "-p", "hi", "--home", `${dir}/run-home-${i}`], { env: runEnv });
      const first = server.exchanges[0];
      if (!first) throw new Error("hermes run -p hi exited without calling the model");
      return first.arrived - started;
    };
  }
  const samples = await interleave(cases, { rounds, warmup: 2 });
  report("bare `deno run` hello-world (spawn → exit)", spread(samples.hello!));
  const figures = [
    ["version", "hermes --version", "≤ 1.5×"],
    ["list", `hermes sessions list --json (${SESSIONS} sessions)`, "≤ 1.5×"],
    ["run", "hermes run -p hi: spawn → first model request", "≤ 5×"],
  ] as const;
  for (const [key, label, target] of figures) {
    for (const [i, tree] of trees.entries()) {
      report(`${label}${tree.label}`, spread(samples[`${key}${i}`]!));
      report("  ratio to hello-world", ratio(samples[`${key}${i}`]!, samples.hello!), target);
    }
  }
} finally {
  await server.close();
  await Deno.remove(dir, { recursive: true });
}

/** The same small environment for every child, so no variable of this shell changes what runs. */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir };
  const denoDir = Deno.env.get("DENO_DIR");
  env.DENO_DIR = denoDir ?? `${Deno.env.get("HOME")}/.cache/deno`;
  return env;
}

/**
 * `count` finished sessions of 20 jobs, each with a few messages, written straight into the store's tables
 * (bench-only SQL: seeding through 1 000 real runs would take minutes and measure nothing more).
 */
function seedSessions(path: string, count: number): void {
  const db = new DatabaseSync(path);
  const session = db.prepare(
    `INSERT INTO sessions (id, job, status, terminal_reason, created_at, updated_at, ended_at, model,
       prompt_tokens, completion_tokens, turns)
     VALUES (?, ?, 'success', 'completed', ?, ?, ?, 'bench-model', 120, 30, 2)`,
  );
  const message = db.prepare(
    `INSERT INTO messages (session_id, seq, pos, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const now = Date.now();
  db.exec("BEGIN");
  for (let i = 0; i < count; i++) {
    const id = `bench-${String(i).padStart(6, "0")}`;
    const at = now - (count - i) * 60_000;
    session.run(id, `job-${i % 20}`, at, at + 5_000, at + 5_000);
    for (let seq = 1; seq <= 4; seq++) {
      message.run(id, seq, seq, seq % 2 ? "user" : "assistant", `message ${seq} of session ${i}`, at + seq);
    }
  }
  db.exec("COMMIT");
  db.close();
}
