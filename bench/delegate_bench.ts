/**
 * What one delegation round costs over a direct tool call, through the real CLI and the OpenAI provider
 * against the timed test server (bench/_timed_server.ts), so process start-up stays out of the figures:
 *
 * Both jobs' models first call list_dir once (warming the process); then
 *
 * - `direct`: the model calls list_dir again, then answers. The round is the time from the model's second
 *   tool-call reply to the next model request (the tool ran, its result was stored).
 * - `delegate`: the model hands the task to a subagent instead, whose session answers at once. The round is
 *   the same span: the child's job cut from the parent's, its session opened and recorded, its
 *   model call (a local round trip), its result kept for a resume, its end recorded, agent.start/agent.end,
 *   the tool result stored. Shown split at the child's request: start (delegate reply → child's request)
 *   and end (child's answer → the parent's next request).
 *
 * Interleaved A B A B … in one run, medians with min–max. Run: `deno run -A bench/delegate_bench.ts [rounds]`.
 */
import { interleave, ratio, report, spread } from "./_stats.ts";
import { startTimedServer } from "./_timed_server.ts";
import type { ScriptEntry } from "../runtime/providers/script.ts";
import type { ChatRequestBody } from "../tests/_testing/openai_server.ts";

const rounds = Number(Deno.args[0] ?? 15);
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const dir = await Deno.makeTempDir({ prefix: "hermes-delegate-bench-" });

const isChild = (body: ChatRequestBody) => JSON.stringify(body.messages?.[0] ?? {}).includes("You help");
const toolResults = (body: ChatRequestBody) => (body.messages ?? []).filter((m) => m.role === "tool").length;
const server = await startTimedServer({
  respond: (body): ScriptEntry => {
    if (isChild(body)) return { content: "listed" };
    const results = toolResults(body);
    // A first list_dir round warms the process (the tool's modules, the store's statements) in both jobs:
    // the second round is the one measured.
    if (results === 0) return { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] };
    if (results === 2) return { content: "done" };
    return JSON.stringify(body.tools ?? []).includes('"delegate"')
      ? { tool_calls: [{ name: "delegate", arguments: { agent: "helper", prompt: "list the folder" } }] }
      : { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] };
  },
});

const common = "model: { provider: openai, name: m }\nsystem: You lead.\nprompt: go\n" +
  "tools: { list_dir: { paths: [.] } }\n";
await Deno.writeTextFile(`${dir}/direct.yaml`, "name: direct\n" + common);
await Deno.writeTextFile(
  `${dir}/delegate.yaml`,
  "name: delegate\n" + common + "agents:\n  helper: { description: Lists the folder, system: You help. }\n",
);

const splits = { start: [] as number[], end: [] as number[] };
async function round(file: string): Promise<number> {
  server.exchanges.length = 0;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--home", `${dir}/home`, "run", file, "--output", "json"],
    cwd: dir,
    env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const result = JSON.parse(new TextDecoder().decode(out.stdout) || "{}");
  const ex = server.exchanges;
  const delegated = file === "delegate.yaml";
  if (!out.success || result.final !== "done" || ex.length !== (delegated ? 4 : 3)) {
    throw new Error(
      `${file}: exit ${out.code}, ${ex.length} requests: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  if (delegated) {
    splits.start.push(ex[2]!.arrived - ex[1]!.responded);
    splits.end.push(ex[3]!.arrived - ex[2]!.responded);
  }
  return ex.at(-1)!.arrived - ex[1]!.responded;
}

const samples = await interleave({
  direct: () => round("direct.yaml"),
  delegate: () => round("delegate.yaml"),
}, { rounds, warmup: 2 });
// The warm-up rounds' splits are dropped with their samples.
splits.start.splice(0, splits.start.length - rounds);
splits.end.splice(0, splits.end.length - rounds);

const delta = samples.delegate.map((ms, i) => ms - samples.direct[i]!);
report("second tool round, list_dir call (baseline)", spread(samples.direct));
report("second tool round, one delegation instead", spread(samples.delegate));
report("  child start: delegate reply → child's request", spread(splits.start));
report("  child end: child's answer → parent's next request", spread(splits.end));
report("  delegation over direct call, per round", spread(delta));
report("  ratio", ratio(samples.delegate, samples.direct));
await server.close();
await Deno.remove(dir, { recursive: true });
