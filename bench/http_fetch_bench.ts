/**
 * What `http_fetch`'s guard costs per call: the tool, whose request goes through Hermes's filtering proxy
 * (resolve, internal-address check, connect to the checked address; runtime/tools/http_fetch.ts), against
 * the baseline of a direct `fetch` of the same URL as the tool made before the guard (a new connection each
 * time, as the proxy's one request per connection has). A local server answers a 2-byte body; interleaved
 * A B A B in one run. Run: `deno run -A bench/http_fetch_bench.ts [rounds]`.
 */
import { httpFetchTool } from "../runtime/tools/http_fetch.ts";
import { interleave, ratio, report, spread } from "./_stats.ts";

const rounds = Number(Deno.args[0] ?? 200);
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => new Response("ok"));
const url = `http://127.0.0.1:${server.addr.port}/`;
const tool = httpFetchTool({
  hosts: [`127.0.0.1:${server.addr.port}`],
  timeoutMs: 10_000,
  maxOutput: 1024,
  fetch: globalThis.fetch,
});
const context = {
  session_id: "bench",
  job_dir: "/",
  env: {},
  host_env: {},
  signal: new AbortController().signal,
};

const samples = await interleave({
  direct: async () => {
    const client = Deno.createHttpClient({});
    const started = performance.now();
    const response = await fetch(url, { client, redirect: "manual" });
    await response.text();
    const elapsed = performance.now() - started;
    client.close();
    return elapsed;
  },
  guarded: async () => {
    const started = performance.now();
    const outcome = await tool.run({ url }, context, tool.needs!({ url }).scope);
    const elapsed = performance.now() - started;
    if (outcome.status !== "ok") throw new Error(outcome.content);
    return elapsed;
  },
}, { rounds, warmup: 5 });
await server.shutdown();

report("http_fetch baseline: direct fetch, new connection", spread(samples.direct));
report("http_fetch through its guard (proxy, checked address)", spread(samples.guarded));
report("  guarded ÷ direct (per-round range)", ratio(samples.guarded, samples.direct));
