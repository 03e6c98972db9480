/**
 * JSON-RPC benchmark (DESIGN §11): round trip of the no-op `ping` through `hermes rpc` (sequential, target
 * ≤ 0.2 ms median) and pipelined throughput (20 000 pings written at once, target ≥ 20 000 req/s), each beside
 * the same exchange with a raw stdin→stdout echo written in Deno: the ceiling of any stdio server.
 * Sequential samples alternate between the two in blocks so both see the same machine load.
 * Run: `deno run -A bench/rpc_bench.ts`.
 */
import { fmt, median, percentile, report } from "./_stats.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const ECHO = "const b = new Uint8Array(65536); for (;;) { const n = await Deno.stdin.read(b); " +
  "if (n === null) Deno.exit(0); let w = 0; while (w < n) w += Deno.stdout.writeSync(b.subarray(w, n)); }";
const PIPELINED = 20_000;
const BLOCKS = 10;
const PER_BLOCK = 300;

/** A subprocess spoken to line by line: `send` writes bytes, `lines(n)` resolves after n more lines. */
class LinePeer {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #seen = 0;
  #waiting: { target: number; resolve: () => void } | null = null;
  #reading: Promise<void>;

  constructor(args: string[]) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    })
      .spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#reading = this.#read();
  }

  async #read(): Promise<void> {
    for await (const chunk of this.#child.stdout) {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) this.#seen++;
      if (this.#waiting && this.#seen >= this.#waiting.target) {
        const { resolve } = this.#waiting;
        this.#waiting = null;
        resolve();
      }
    }
  }

  /** Writes `bytes` and resolves when `count` more lines have come back. */
  exchange(bytes: Uint8Array, count: number): Promise<void> {
    const done = new Promise<void>((resolve) => this.#waiting = { target: this.#seen + count, resolve });
    this.#writer.write(bytes);
    return done;
  }

  async close(): Promise<void> {
    await this.#writer.close();
    await this.#reading;
    await this.#child.status;
  }
}

const encoder = new TextEncoder();
const ping = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`;

async function sequential(peer: LinePeer, samples: number[], count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const bytes = encoder.encode(ping(i));
    const start = performance.now();
    await peer.exchange(bytes, 1);
    samples.push(performance.now() - start);
  }
}

async function pipelined(peer: LinePeer): Promise<number> {
  const bytes = encoder.encode(Array.from({ length: PIPELINED }, (_, i) => ping(i)).join(""));
  const start = performance.now();
  await peer.exchange(bytes, PIPELINED);
  return PIPELINED / ((performance.now() - start) / 1000);
}

const home = await Deno.makeTempDir({ prefix: "hermes-rpc-bench-" });
const hermes = new LinePeer(["run", "-A", MAIN, "rpc", "--home", home, "--log-level", "error"]);
const echo = new LinePeer(["run", `data:application/javascript,${encodeURIComponent(ECHO)}`]);
try {
  // Warm up both (JIT, first writes).
  await sequential(hermes, [], 500);
  await sequential(echo, [], 500);
  await pipelined(hermes);
  await pipelined(echo);

  const rpcSamples: number[] = [];
  const echoSamples: number[] = [];
  for (let block = 0; block < BLOCKS; block++) {
    await sequential(hermes, rpcSamples, PER_BLOCK);
    await sequential(echo, echoSamples, PER_BLOCK);
  }
  const rpcRates: number[] = [];
  const echoRates: number[] = [];
  for (let i = 0; i < 3; i++) {
    rpcRates.push(await pipelined(hermes));
    echoRates.push(await pipelined(echo));
  }
  const rpcMedian = median(rpcSamples);
  const echoMedian = median(echoSamples);
  report("rpc: ping round trip, median", fmt(rpcMedian), "≤ 200 µs");
  report("rpc: ping round trip, p99", fmt(percentile(rpcSamples, 99)));
  report("raw Deno echo: line round trip, median (ceiling)", fmt(echoMedian));
  report("rpc / echo round trip", `${(rpcMedian / echoMedian).toFixed(2)}×`);
  const rpcRate = Math.max(...rpcRates);
  const echoRate = Math.max(...echoRates);
  report(`rpc: ${PIPELINED} pipelined pings, best of 3`, `${Math.round(rpcRate)} req/s`, "≥ 20 000 req/s");
  report(`raw Deno echo: ${PIPELINED} pipelined lines (ceiling)`, `${Math.round(echoRate)} lines/s`);
  report("rpc / echo throughput", `${(rpcRate / echoRate * 100).toFixed(0)} %`);
} finally {
  await hermes.close();
  await echo.close();
  await Deno.remove(home, { recursive: true });
}
