/**
 * The per-turn measurement both turn benches share: a job doing one `read_file` tool round after another
 * against the OpenAI-compatible timed server, `hermes` and the raw client as real subprocesses, and the
 * per-round and per-gap medians taken from the server's exchanges (the first SKIP rounds left out).
 */
import { median } from "./_stats.ts";
import { type Exchange, startTimedServer } from "./_timed_server.ts";

/** Tool rounds per process; the first SKIP are left out (JIT warm-up, first connection). */
export const TOOL_ROUNDS = 30;
export const SKIP = 5;
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const RAW_CLIENT = new URL("./_raw_client.ts", import.meta.url).pathname;
const TOOL_ROUND = { tool_calls: [{ name: "read_file", arguments: { path: "note.txt" } }] };

export interface ToolRounds extends AsyncDisposable {
  dir: string;
  server: Awaited<ReturnType<typeof startTimedServer>>;
  /** `dir/job.yaml`: the tool-round job against the server. */
  job: string;
  /** Runs hermes on a script of `rounds` tool calls and an answer; checks it, returns the exchanges. */
  timedRun(args: string[], rounds?: number): Promise<Exchange[]>;
  /** The raw client posting `bodyFile` `count` times. */
  timedRaw(bodyFile: string, count?: number): Promise<Exchange[]>;
  /** Runs hermes on a script of one tool round and an answer; its stdout. */
  seed(args: string[]): Promise<string>;
  /** Writes the request from the middle of the last run to `path` (the raw baseline's body). */
  saveMiddleRequest(path: string): Promise<void>;
}

export async function toolRounds(prefix: string): Promise<ToolRounds> {
  const dir = await Deno.makeTempDir({ prefix });
  const server = await startTimedServer({ model: "bench-model" });
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: dir,
    DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
    OPENAI_API_KEY: "bench",
  };
  const deno = async (args: string[]): Promise<string> => {
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
  };
  await Deno.writeTextFile(`${dir}/note.txt`, "a short note\n");
  const job = `${dir}/job.yaml`;
  await Deno.writeTextFile(
    job,
    [
      "name: turn-bench",
      `model: { name: bench-model, base_url: "${server.url}", api_key_env: none, context_window: 100000000 }`,
      "compaction: { enabled: true }",
      // Every round really reads the file: the repeated-read note would make later rounds cheaper than a turn.
      "tools: { read_file: { dedup: false } }",
      "limits: { max_turns: 100000 }",
      "prompt: go",
      "",
    ].join("\n"),
  );
  return {
    dir,
    server,
    job,
    async timedRun(args, rounds = TOOL_ROUNDS) {
      server.upstream.replace([...Array.from({ length: rounds }, () => TOOL_ROUND), { content: "done" }]);
      server.exchanges.length = 0;
      await deno(["run", "-A", MAIN, ...args]);
      if (server.exchanges.length !== rounds + 1) {
        throw new Error(`expected ${rounds + 1} model calls, the server saw ${server.exchanges.length}`);
      }
      const last = server.upstream.requests.at(-1)?.messages?.at(-1);
      if (last?.role !== "tool" || !String(last.content).includes("a short note")) {
        throw new Error(`The tool round did not run read_file: last message ${JSON.stringify(last)}`);
      }
      return [...server.exchanges];
    },
    async timedRaw(bodyFile, count = TOOL_ROUNDS) {
      server.upstream.replace(Array.from({ length: count }, () => TOOL_ROUND));
      server.exchanges.length = 0;
      await deno(["run", "-A", RAW_CLIENT, `${server.url}/chat/completions`, bodyFile, String(count)]);
      return [...server.exchanges];
    },
    seed(args) {
      server.upstream.replace([TOOL_ROUND, { content: "seeded" }]);
      return deno(["run", "-A", MAIN, ...args]);
    },
    saveMiddleRequest(path) {
      return Deno.writeTextFile(path, JSON.stringify(server.upstream.requests.at(-TOOL_ROUNDS / 2)));
    },
    async [Symbol.asyncDispose]() {
      await server.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Per-case samples: each run's median time per tool round and median gap (reply → next request). */
export function roundSamples<Case extends string>(cases: readonly Case[]) {
  const perRound = Object.fromEntries(cases.map((c) => [c, [] as number[]])) as Record<Case, number[]>;
  const gaps = Object.fromEntries(cases.map((c) => [c, [] as number[]])) as Record<Case, number[]>;
  return {
    perRound,
    gaps,
    record(name: Case, exchanges: Exchange[]) {
      const measured = exchanges.slice(SKIP);
      perRound[name].push(median(measured.slice(1).map((e, i) => e.arrived - measured[i]!.arrived)));
      gaps[name].push(median(measured.slice(1).map((e, i) => e.arrived - measured[i]!.responded)));
    },
    /** interleave's warm-up round also pushed one sample per case: drop it. */
    dropWarmup() {
      for (const samples of [...Object.values(perRound), ...Object.values(gaps)]) {
        (samples as number[]).shift();
      }
    },
  };
}
