/**
 * Record, replay and test, each figure interleaved with its baseline in the same run (A B A B …):
 *
 * - a run of 300 tool calls (300 model calls, each asking for list_dir, then a final answer): `hermes replay`
 *   of its cassette (tools recorded, and tools live) against `hermes run` of the same job against the
 *   scripted OpenAI-compatible server over HTTP;
 * - `hermes test` on 50 cases (scripted replies: read_file, write_file, a structured answer; expectations on
 *   tools, output and files) with `--jobs 4` against `--jobs 1`.
 *
 *   deno run -A bench/replay_bench.ts [--rounds N]
 */
import { parseArgs } from "node:util";
import { interleave, ratio, report, spread, timeProcess } from "./_stats.ts";
import { startOpenAIServer } from "../tests/_testing/openai_server.ts";
import type { ScriptEntry } from "../runtime/providers/script.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const MAIN = `${ROOT}main.ts`;
const TOOL_CALLS = 300;
const CASES = 50;

const { values } = parseArgs({ args: Deno.args, options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);

const script: ScriptEntry[] = [
  ...Array.from(
    { length: TOOL_CALLS },
    () => ({ tool_calls: [{ name: "list_dir", arguments: { path: "." } }] }),
  ),
  { content: "done" },
];
const server = await startOpenAIServer({ script });
const work = await Deno.makeTempDir({ prefix: "hermes-replay-bench-" });
const home = `${work}/home`;
await Deno.mkdir(`${work}/job/out`, { recursive: true });
await Deno.mkdir(home);
await Deno.writeTextFile(
  `${work}/job/job.yaml`,
  `name: long\nmodel: { name: gpt-4.1-mini, base_url: "${server.url}", api_key_env: none, ` +
    "context_window: 1000000 }\nprompt: list the folder again and again\n" +
    'tools:\n  list_dir: { paths: ["."] }\nlimits: { max_turns: 400 }\n',
);
const cassette = `${work}/long.cassette.json`;
const hermes = (...args: string[]) => ["run", "-A", MAIN, "--home", home, "--quiet", ...args];
server.replace(script);
await timeProcess(hermes("run", "job.yaml", "--record", cassette), { cwd: `${work}/job` });

const long = await interleave({
  run: () => {
    server.replace(script);
    return timeProcess(hermes("run", "job.yaml"), { cwd: `${work}/job` });
  },
  replay: () => timeProcess(hermes("replay", cassette), { cwd: `${work}/job` }),
  live: () => timeProcess(hermes("replay", cassette, "--tools", "live"), { cwd: `${work}/job` }),
}, { rounds });
await server.close();

// 50 cases of one job.
const cases = `${work}/cases`;
await Deno.mkdir(`${cases}/job/out`, { recursive: true });
await Deno.writeTextFile(`${cases}/job/notes.txt`, "the build is broken\n");
await Deno.writeTextFile(
  `${cases}/job/job.yaml`,
  "name: triage\nmodel: { name: gpt-4.1-mini }\nprompt: label notes.txt\n" +
    'tools:\n  read_file: { paths: ["."] }\n  write_file: { paths: ["./out"] }\n' +
    "output: { schema: { type: object, required: [labels] } }\n",
);
for (let i = 0; i < CASES; i++) {
  await Deno.writeTextFile(
    `${cases}/case-${String(i).padStart(2, "0")}.test.yaml`,
    "job: job/job.yaml\nreplies:\n" +
      "  - tool_calls: [{ name: read_file, arguments: { path: notes.txt } }]\n" +
      `  - tool_calls: [{ name: write_file, arguments: { path: out/labels.md, content: "bug ${i}" } }]\n` +
      `  - content: '{"labels": ["bug"]}'\n` +
      "expect:\n  tools_called: [read_file, write_file]\n  output: { match: { labels: [bug] } }\n" +
      `  files: { out/labels.md: { contains: "bug ${i}" } }\n`,
  );
}
const tests = await interleave({
  jobs1: () => timeProcess(hermes("test", cases, "--jobs", "1")),
  jobs4: () => timeProcess(hermes("test", cases, "--jobs", "4")),
}, { rounds });
await Deno.remove(work, { recursive: true });

console.log(`${rounds} rounds, median (min–max)`);
report(`hermes run, ${TOOL_CALLS} tool calls, scripted server (baseline)`, spread(long.run));
report(`hermes replay of its cassette (tools recorded)`, spread(long.replay));
report(`  replay / run`, ratio(long.replay, long.run));
report(`hermes replay --tools live`, spread(long.live));
report(`  replay live / run`, ratio(long.live, long.run));
report(`hermes test, ${CASES} cases, --jobs 1 (baseline)`, spread(tests.jobs1));
report(`hermes test, ${CASES} cases, --jobs 4`, spread(tests.jobs4));
report(`  --jobs 4 / --jobs 1`, ratio(tests.jobs4, tests.jobs1));
