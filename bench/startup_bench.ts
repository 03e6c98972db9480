/**
 * Start-up, each figure interleaved with its baseline in the same run (A B A B …):
 *
 * - `hermes --version` from the source and from the release (dist/hermes/hermes.js, built here by
 *   scripts/release.ts), against a bare `deno run` hello-world (target ≤ 1.5×) and release against source
 *   (target ≤ 1×); for a checkout whose release is one file (dist/hermes.js, before it became a folder of
 *   modules), also the floor of any one-file release: the hello-world padded with a comment to the bundle's
 *   size, which Deno still reads, hashes and holds whole at every start;
 * - `hermes sessions list --limit 20` on a store with 1 000 sessions, against a bare script that opens the same
 *   state.db with `node:sqlite` and prints 20 rows (target ≤ 1.25×: the engine's floor is not what costs);
 * - spawn → first model request of `hermes run -p hi`, of `hermes run JOB.yaml` (a job file with an
 *   openai model and two tools) and of the same job with an `output.schema`, against the OpenAI-compatible
 *   test server (target ≤ 5× the hello-world);
 * - a cold `deno task demo`, a cold `deno task --eval true` (a task that runs nothing) and a cold
 *   `deno run -A main.ts run examples/hello.yaml` (empty DENO_DIR): bytes downloaded, counted on the wire by
 *   an HTTPS proxy, and the DENO_DIR left behind (`--skip-cold` skips it; it needs the npm registry).
 *
 *   deno run -A bench/startup_bench.ts [--rounds N] [--baseline OTHER_CHECKOUT] [--skip-cold]
 */
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { interleave, ratio, report, spread, timeProcess, writeHelloWorld } from "./_stats.ts";
import { startTimedServer } from "./_timed_server.ts";
import { startCountingProxy } from "./_counting_proxy.ts";

const SESSIONS = 1_000;
const ROOT = new URL("..", import.meta.url).pathname;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "20" },
    baseline: { type: "string" },
    "skip-cold": { type: "boolean" },
  },
});
const rounds = Number(values.rounds);
// --baseline DIR: another checkout (say, before a change) timed in the same rounds, for before/after tables.
const trees = [
  { label: "", root: ROOT },
  ...(values.baseline
    ? [{ label: ` [${values.baseline}]`, root: values.baseline.replace(/\/?$/, "/") }]
    : []),
];
/** A job file of the usual shape: an OpenAI-compatible model (from the environment), a system prompt, tools. */
const JOB = `name: startup-bench
description: The job file of the start-up bench
system: You are a terse assistant.
prompt: Say hi.
tools:
  read_file: {}
  list_dir: {}
limits: { max_turns: 3, timeout: 1m }
`;
/** The same job with a structured answer: its JSON Schema (ajv) is needed only once the model has answered. */
const SCHEMA_JOB = `${JOB}output:
  schema:
    type: object
    required: [greeting]
    properties:
      greeting: { type: string, minLength: 1 }
      when: { type: string, format: date-time }
`;

const COLD = [
  ["`deno task demo`", ["task", "demo"]],
  // Deno 2.9 installs every package of the lockfile before any task, whatever the task runs: this one runs
  // `true`, so what it downloads is that install alone.
  ["`deno task --eval true`", ["task", "--eval", "true"]],
  ["`deno run -A main.ts run examples/hello.yaml`", ["run", "-A", "main.ts", "run", "examples/hello.yaml"]],
] as const;

const dir = await Deno.makeTempDir({ prefix: "hermes-startup-bench-" });
const server = await startTimedServer({ model: "bench-model" });
try {
  const hello = await writeHelloWorld(dir);
  const floor = await writeSqliteFloor(dir);
  const env = childEnv();
  const runEnv = {
    ...env,
    OPENAI_BASE_URL: server.url,
    OPENAI_API_KEY: "bench",
    HERMES_MODEL: "bench-model",
  };
  const job = `${dir}/job.yaml`;
  await Deno.writeTextFile(job, JOB);
  const schemaJob = `${dir}/schema-job.yaml`;
  await Deno.writeTextFile(schemaJob, SCHEMA_JOB);
  const listDb = `${dir}/list-home-0/state.db`;
  const cases: Record<string, () => Promise<number>> = {
    // In a directory without deno.json: nothing but Deno itself.
    hello: () => timeProcess(["run", "-A", hello], { env, cwd: dir }),
    floor: () => timeProcess(["run", "-A", floor, listDb], { env, cwd: dir }),
  };
  for (const [i, { root }] of trees.entries()) {
    const hermes = (args: string[], options: { env: Record<string, string> }) =>
      timeProcess(["run", "-A", `${root}main.ts`, ...args], { ...options, cwd: root });
    const listHome = `${dir}/list-home-${i}`;
    await hermes(["sessions", "list", "--home", listHome], { env });
    seedSessions(`${listHome}/state.db`, SESSIONS);
    const bundle = await buildBundle(root, `${dir}/release-${i}`);
    cases[`version${i}`] = () => hermes(["--version"], { env });
    // Run where a release is run: a directory of its own, no deno.json around it.
    cases[`bundle${i}`] = () => timeProcess(["run", "-A", bundle, "--version"], { env, cwd: dir });
    if (bundle.endsWith("/hermes.js") && !bundle.endsWith("/hermes/hermes.js")) {
      const padded = await writePaddedHello(dir, i, (await Deno.stat(bundle)).size);
      cases[`padded${i}`] = () => timeProcess(["run", "-A", padded], { env, cwd: dir });
    }
    cases[`list${i}`] = () => hermes(["sessions", "list", "--limit", "20", "--home", listHome], { env });
    const firstRequest = (args: string[], content = "hello") => async () => {
      server.upstream.push({ content });
      server.exchanges.length = 0;
      const started = performance.now();
      await hermes(args, { env: runEnv });
      const first = server.exchanges[0];
      if (!first) throw new Error(`hermes ${args.join(" ")} exited without calling the model`);
      return first.arrived - started;
    };
    cases[`run${i}`] = firstRequest(["run", "-p", "hi", "--home", `${dir}/run-home-${i}`]);
    cases[`job${i}`] = firstRequest(["run", job, "--home", `${dir}/job-home-${i}`]);
    cases[`schema${i}`] = firstRequest(
      ["run", schemaJob, "--home", `${dir}/schema-home-${i}`],
      JSON.stringify({ greeting: "hello" }),
    );
  }
  const samples = await interleave(cases, { rounds, warmup: 2 });
  report("bare `deno run` hello-world (spawn → exit)", spread(samples.hello!));
  report("bare node:sqlite script printing 20 rows of state.db", spread(samples.floor!));
  const figures = [
    ["version", "hermes --version (source)", "hello", "≤ 1.5×"],
    ["bundle", "hermes --version (the release)", "hello", "≤ 1.5×"],
    ["list", `hermes sessions list --limit 20 (${SESSIONS} sessions)`, "floor", "≤ 1.25×"],
    ["run", "hermes run -p hi: spawn → first model request", "hello", "≤ 5×"],
    ["job", "hermes run JOB.yaml: spawn → first model request", "hello", "≤ 5×"],
    ["schema", "hermes run JOB.yaml with output.schema: spawn → first model request", "hello", "≤ 5×"],
  ] as const;
  for (const [key, label, baseline, target] of figures) {
    for (const [i, tree] of trees.entries()) {
      const measured = samples[`${key}${i}`]!;
      report(`${label}${tree.label}`, spread(measured));
      report(
        `  ratio to ${baseline === "hello" ? "hello-world" : "the node:sqlite script"}`,
        ratio(measured, samples[baseline]!),
        target,
      );
      if (key === "bundle") {
        report("  ratio to the source's --version", ratio(measured, samples[`version${i}`]!), "≤ 1×");
        const padded = samples[`padded${i}`];
        if (padded) {
          report(`hello-world padded to the one-file bundle's size (a comment)${tree.label}`, spread(padded));
          report("  ratio to the source's --version", ratio(padded, samples[`version${i}`]!));
        }
      }
    }
  }
  if (!values["skip-cold"]) {
    for (const tree of trees) {
      for (const [label, args] of COLD) {
        const cold = await coldRun(
          tree.root,
          [...args, "--home", `${dir}/cold-home-${crypto.randomUUID()}`],
          env,
        );
        report(
          `cold ${label}${tree.label}: downloaded`,
          `${mb(cold.downloaded)} (${cold.packages} packages)`,
        );
        report("  DENO_DIR afterwards", mb(cold.denoDir));
      }
    }
  }
} finally {
  await server.close();
  await Deno.remove(dir, { recursive: true });
}

/** One run with an empty DENO_DIR, its downloads through a counting proxy. */
async function coldRun(root: string, args: string[], env: Record<string, string>) {
  const proxy = startCountingProxy();
  const denoDir = await Deno.makeTempDir({ prefix: "hermes-cold-deno-dir-" });
  try {
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: root,
      env: { ...env, DENO_DIR: denoDir, HTTPS_PROXY: proxy.url, NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    const log = new TextDecoder().decode(stderr);
    if (code !== 0) throw new Error(`deno ${args.join(" ")} (cold) exited ${code}: ${log}`);
    await proxy.close();
    let packages = 0;
    try {
      for (const _ of Deno.readDirSync(`${denoDir}/npm/registry.npmjs.org`)) packages++;
    } catch { /* nothing from npm */ }
    return {
      downloaded: [...proxy.received.values()].reduce((a, b) => a + b, 0),
      denoDir: du(denoDir),
      packages,
    };
  } finally {
    await proxy.close();
    await Deno.remove(denoDir, { recursive: true });
  }
}

function du(path: string): number {
  let bytes = 0;
  for (const entry of Deno.readDirSync(path)) {
    const full = `${path}/${entry.name}`;
    if (entry.isDirectory) bytes += du(full);
    else if (entry.isFile) bytes += Deno.statSync(full).size;
  }
  return bytes;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/**
 * The release of the checkout at `root` (scripts/release.ts), built into `out`; the path of its entry: the
 * folder's hermes/hermes.js, or hermes.js where the checkout's release is one file.
 */
async function buildBundle(root: string, out: string): Promise<string> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}scripts/release.ts`, "--out", out],
    cwd: root,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) throw new Error(`release of ${root} failed: ${new TextDecoder().decode(stderr)}`);
  const folder = `${out}/hermes/hermes.js`;
  return await Deno.stat(folder).then(() => folder, () => `${out}/hermes.js`);
}

/**
 * The hello-world followed by a comment that makes it `size` bytes: what reading, hashing and holding a
 * file of the bundle's size costs Deno before any of its code runs.
 */
async function writePaddedHello(dir: string, i: number, size: number): Promise<string> {
  const path = `${dir}/padded-${i}.js`;
  const head = 'console.log("hello");\n/*';
  const line = "padding of the size of the release bundle\n";
  const body = line.repeat(Math.max(0, Math.ceil((size - head.length - 3) / line.length)));
  await Deno.writeTextFile(path, `${head}${body}*/\n`);
  return path;
}

/** The floor of `sessions list`: open the store with node:sqlite, print 20 rows, exit. */
async function writeSqliteFloor(dir: string): Promise<string> {
  const path = `${dir}/sqlite_floor.ts`;
  await Deno.writeTextFile(
    path,
    `import { DatabaseSync } from "node:sqlite";
const db = new DatabaseSync(Deno.args[0], { readOnly: true });
const rows = db.prepare("SELECT * FROM sessions ORDER BY created_at DESC LIMIT 20").all();
console.log(JSON.stringify(rows));
db.close();
`,
  );
  return path;
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
