/**
 * The server's added memory with 20 browser clients streaming the console's live pages: `hermes serve` (SQLite,
 * its own worker) with one run in progress; 20 headless Chromium pages, each in its own browser context (as 20
 * clients are), open on live pages (10 on the runs list, 10 on the running run's page: one event stream each),
 * held for --hold seconds.
 *
 * Each round: the server idle (no page open) then streaming (the 20 pages open), each after a settle period,
 * VmRSS of the server's process read from /proc/PID/status once a second; a round's figure is the median of its
 * samples, and "added" is streaming minus idle of the same round (interleaved: drift hits both sides alike).
 *
 *   deno run -A bench/console_streams_bench.ts [--rounds 5] [--hold 30] [--settle 5]
 */
import { parseArgs } from "node:util";
import puppeteer, { type BrowserContext, type Page } from "puppeteer-core";
import { hermes } from "../tests/_testing/cli.ts";
import { call, startServe } from "../tests/_testing/serve.ts";
import { median, report, spread } from "./_stats.ts";
import { signIn } from "../tests/_testing/console_signin.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    hold: { type: "string", default: "30" },
    settle: { type: "string", default: "5" },
  },
});
const ROUNDS = Number(values.rounds);
const HOLD_S = Number(values.hold);
const SETTLE_MS = Number(values.settle) * 1000;
const CLIENTS = 20;
const CHROMIUM = "/usr/bin/chromium";

const home = await Deno.makeTempDir({ prefix: "hermes-console-streams-bench-" });
const jobsDir = `${home}/jobs`;
await Deno.mkdir(jobsDir);
// A run that stays in progress for the whole bench: its page and the list stay live.
await Deno.writeTextFile(`${jobsDir}/slow-script.yaml`, "- content: late\n  delay: 3600s\n");
await Deno.writeTextFile(
  `${jobsDir}/slow.yaml`,
  "name: slow\nmodel: { provider: scripted, script: ./slow-script.yaml }\nprompt: wait\n",
);
const token = (await hermes(["tokens", "create", "--scope", "admin"], { home })).stdout.trim();
const server = await startServe(
  home,
  ["--jobs", jobsDir, "--rate-limit", "1000000", "--max-streams", String(CLIENTS * 2)],
  { cwd: home },
);

function rssKiB(): number {
  const status = Deno.readTextFileSync(`/proc/${server.child.pid}/status`);
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]);
}

async function sampleRss(seconds: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < seconds; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    samples.push(rssKiB());
  }
  return median(samples);
}

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  args: [...(Deno.uid() === 0 ? ["--no-sandbox"] : []), "--headless=new", "--disable-gpu", "--no-first-run"],
  userDataDir: `${home}/chromium`,
});
try {
  const session = await signIn(server.url, token);
  /** A run in progress (a model call may time out in a long bench: each round starts its own). */
  const runningRun = async (): Promise<string> => {
    const submitted = await call(`${server.url}/v1/runs`, { token, body: { job: "slow" } });
    if (submitted.status !== 202) {
      throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
    }
    for (let i = 0; i < 200; i++) {
      if ((await call(`${server.url}/v1/runs/${submitted.body.id}`, { token })).body.status === "running") {
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return submitted.body.id;
  };

  const idle: number[] = [];
  const streaming: number[] = [];
  const added: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const quiet = await sampleRss(HOLD_S);
    const runId = await runningRun();
    const targets = Array.from(
      { length: CLIENTS },
      (_, i) => (i % 2 ? `${server.url}/runs/${runId}` : `${server.url}/runs`),
    );
    const pages: Page[] = [];
    const contexts: BrowserContext[] = [];
    let streams = 0;
    for (const url of targets) {
      // A context each, as 20 browsers are: one profile holds at most 6 HTTP/1.1 connections to a host.
      const context = await browser.createBrowserContext();
      contexts.push(context);
      await context.setCookie({
        name: session.name,
        value: session.value,
        domain: new URL(server.url).hostname,
        path: "/",
        httpOnly: true,
      });
      const page = await context.newPage();
      page.on("request", (request) => {
        if (new URL(request.url()).pathname.endsWith("/stream")) streams++;
      });
      await page.goto(url, { waitUntil: "load" });
      if (page.url() !== url) throw new Error(`${url} went to ${page.url()}: not signed in`);
      pages.push(page);
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    if (streams < CLIENTS) throw new Error(`only ${streams} of ${CLIENTS} pages opened their stream`);
    const busy = await sampleRss(HOLD_S);
    const run = await call(`${server.url}/v1/runs/${runId}`, { token });
    if (run.body.status !== "running") throw new Error(`the run ended while streamed: ${run.body.status}`);
    // The run's own work ends with the round (the idle figure of the next has no run in progress either).
    await call(`${server.url}/v1/runs/${runId}/cancel`, { token, method: "POST" });
    for (const context of contexts) await context.close();
    idle.push(quiet / 1024);
    streaming.push(busy / 1024);
    added.push((busy - quiet) / 1024);
  }
  const mib = (n: number) => `${n.toFixed(1)} MiB`;
  console.log(
    `hermes serve (SQLite, own worker, one run in progress); ${CLIENTS} Chromium pages (10 runs list, ` +
      `10 run page), ${ROUNDS} rounds of ${HOLD_S} s idle then ${HOLD_S} s streaming, ${
        SETTLE_MS / 1000
      } s settle`,
  );
  report("server RSS, idle (no page open)", spread(idle, mib));
  report(`server RSS, ${CLIENTS} pages streaming`, spread(streaming, mib));
  report(`added RSS, ${CLIENTS} pages streaming (same round)`, spread(added, mib));
  report("added RSS per page", spread(added.map((n) => (n * 1024) / CLIENTS), (n) => `${n.toFixed(0)} KiB`));
} finally {
  await browser.close();
  await server.stop();
  await Deno.remove(home, { recursive: true });
}
