/**
 * JSON-RPC benchmark: round trip of the no-op `ping` through `hermes rpc` (sequential, target
 * ≤ 0.2 ms median) and pipelined throughput (20 000 pings written at once, target ≥ 20 000 req/s), each beside
 * the same exchange with a raw stdin→stdout echo written in Deno: the ceiling of any stdio server.
 * Both are measured in alternating blocks (A B A B …) so they see the same machine load.
 * Run: `deno run -A bench/rpc_bench.ts`.
 */
import { fmt, interleave, median, percentile, ratio, report, spread } from "./_stats.ts";

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

  // Both sides alternate, block by block (A B A B …): a block's median is one sample.
  const rpcSamples: number[] = [];
  const blocks = await interleave({
    rpc: async () => {
      const samples: number[] = [];
      await sequential(hermes, samples, PER_BLOCK);
      rpcSamples.push(...samples);
      return median(samples);
    },
    echo: async () => {
      const samples: number[] = [];
      await sequential(echo, samples, PER_BLOCK);
      return median(samples);
    },
  }, { rounds: BLOCKS, warmup: 0 });
  const rates = await interleave({ rpc: () => pipelined(hermes), echo: () => pipelined(echo) }, {
    rounds: 5,
    warmup: 0,
  });
  const perSecond = (rate: number) => `${Math.round(rate)}/s`;
  report(`rpc: ping round trip (median of ${PER_BLOCK}-ping blocks)`, spread(blocks.rpc), "≤ 200 µs");
  report("rpc: ping round trip, p99 of all pings", fmt(percentile(rpcSamples, 99)));
  report("raw Deno echo: line round trip (ceiling)", spread(blocks.echo));
  report("rpc / echo round trip", ratio(blocks.rpc, blocks.echo));
  report(`rpc: ${PIPELINED} pipelined pings`, spread(rates.rpc, perSecond), "≥ 20 000 req/s");
  report(`raw Deno echo: ${PIPELINED} pipelined lines (ceiling)`, spread(rates.echo, perSecond));
  report("rpc / echo throughput", ratio(rates.rpc, rates.echo));
} finally {
  await hermes.close();
  await echo.close();
  await Deno.remove(home, { recursive: true });
}
