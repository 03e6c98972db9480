/**
 * The web console with 10 000 stored runs (SQLite, `hermes serve --no-worker`):
 *
 * - server time of the runs list's first page, of a page deep in the list (keyset: the 150th), and of a
 *   filtered page, interleaved with GET /healthz (the server's floor for one request);
 * - in headless Chromium: first contentful paint and the load event (htmx and the console's script loaded:
 *   the page is interactive) of the runs list, interleaved with the sign-in page (the same layout, no data);
 * - the server's added RSS with 20 browser tabs on the live runs list (each polls its rows every 2 s).
 *
 *   deno run -A bench/console_bench.ts [--runs 10000] [--samples 20] [--clients 20]
 */
import { parseArgs } from "node:util";
import puppeteer from "puppeteer-core";
import { currentProcess } from "../runtime/core/process_identity.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { hermes } from "../tests/_testing/cli.ts";
import { startServe } from "../tests/_testing/serve.ts";
import { median, report, spread } from "./_stats.ts";
import { signIn } from "../tests/_testing/console_signin.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "10000" },
    samples: { type: "string", default: "20" },
    clients: { type: "string", default: "20" },
  },
});
const RUNS = Number(values.runs);
const SAMPLES = Number(values.samples);
const CLIENTS = Number(values.clients);
const CHROMIUM = "/usr/bin/chromium";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const home = await Deno.makeTempDir({ prefix: "hermes-console-bench-" });
const start = Date.now() - RUNS * 60_000;
// The runs, ended with a result each (as a list of history looks), submitted a minute apart.
{
  const store = openSqliteStore(`${home}/state.db`);
  const holder = currentProcess("bench-host");
  for (let i = 0; i < RUNS; i++) {
    await store.submitRun({
      job: `job-${i % 7}`,
      job_path: null,
      job_snapshot: "{}",
      inputs: { n: String(i) },
      labels: { team: i % 3 ? "core" : "infra" },
      trigger: i % 5 ? "api" : "webhook",
      now: start + i * 60_000,
    });
  }
  for (;;) {
    const claimed = await store.claimRuns({ holder, now: Date.now(), lease_ms: 600_000, max: 200 });
    if (claimed.length === 0) break;
    for (const run of claimed) {
      await store.finishRun({
        id: run.id,
        holder,
        status: run.attempts % 4 ? "success" : "failed",
        session_id: null,
        result: {
          type: "result",
          status: "success",
          usage: { prompt_tokens: 1200, completion_tokens: 300 },
          cost_usd: 0.0042,
          duration_ms: 4000,
        },
        exit_code: 0,
        now: run.submitted_at + 4000,
      });
    }
  }
  await store.close();
}

const token = (await hermes(["tokens", "create", "--scope", "runs:read"], { home })).stdout.trim();
const server = await startServe(home, ["--no-worker", "--rate-limit", "1000000"], { cwd: home });

async function timed(url: string, cookie: string): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(url, { headers: { cookie } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text.slice(0, 200)}`);
  return performance.now() - t0;
}

function rssKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
}

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  args: [...(Deno.uid() === 0 ? ["--no-sandbox"] : []), "--headless=new", "--disable-gpu", "--no-first-run"],
  userDataDir: `${home}/chromium`,
});
try {
  const session = await signIn(server.url, token);
  const cookie = `${session.name}=${session.value}`;
  const first = await (await fetch(`${server.url}/runs`, { headers: { cookie } })).text();
  const newest = /data-run="(r[^"]+)"/.exec(first)![1]!;
  // A page ~7 500 runs deep: its cursor is a submission time (each run has its own minute).
  const deepCursor = `${start + (RUNS - 7500) * 60_000}.r`;
  const urls = {
    first: `${server.url}/runs`,
    deep: `${server.url}/runs?before=${encodeURIComponent(deepCursor)}`,
    filtered: `${server.url}/runs?job=job-3&label=team%3Dinfra&status=success`,
    health: `${server.url}/healthz`,
  };
  const http: Record<keyof typeof urls, number[]> = { first: [], deep: [], filtered: [], health: [] };
  for (let i = -3; i < SAMPLES; i++) {
    for (const name of Object.keys(urls) as (keyof typeof urls)[]) {
      const ms = await timed(urls[name], cookie);
      if (i >= 0) http[name].push(ms);
    }
  }
  console.log(`${RUNS} runs stored (newest ${newest}); ${SAMPLES} samples each, interleaved`);
  report(
    "GET /runs (first page, 50 runs), server, median (min–max)",
    spread(http.first),
    "first paint ≤ 300 ms",
  );
  report("GET /runs?before=… (a page ~7 500 runs deep)", spread(http.deep));
  report("GET /runs?job&label&status (filtered)", spread(http.filtered));
  report("baseline: GET /healthz", spread(http.health));

  const paint: number[] = [];
  const loaded: number[] = [];
  const basePaint: number[] = [];
  const baseLoaded: number[] = [];
  await browser.setCookie({
    name: session.name,
    value: session.value,
    domain: new URL(server.url).hostname,
    path: "/",
    httpOnly: true,
  });
  const page = await browser.newPage();
  for (let i = -2; i < SAMPLES; i++) {
    for (
      const [url, fcp, load] of [[urls.first, paint, loaded], [
        `${server.url}/signin`,
        basePaint,
        baseLoaded,
      ]] as const
    ) {
      // One tab, as a person navigating: no renderer process start in the figure.
      await page.goto("about:blank");
      await page.goto(url, { waitUntil: "load" });
      if (page.url() !== url) throw new Error(`${url} went to ${page.url()}: not signed in`);
      // The paint entry may be recorded after the load event: wait for it (buffered).
      const timing = JSON.parse(
        await page.evaluate(`new Promise((resolve) => {
          const load = performance.getEntriesByType("navigation")[0].loadEventEnd;
          new PerformanceObserver((list) => {
            const fcp = list.getEntriesByName("first-contentful-paint")[0];
            if (fcp) resolve(JSON.stringify({ fcp: fcp.startTime, load }));
          }).observe({ type: "paint", buffered: true });
          setTimeout(() => resolve(JSON.stringify({ fcp: -1, load })), 3000);
        })`) as string,
      ) as { fcp: number; load: number };
      if (timing.fcp < 0) throw new Error(`${url}: no first-contentful-paint entry in 3 s`);
      if (i >= 0) {
        fcp.push(timing.fcp);
        load.push(timing.load);
      }
    }
  }
  await page.close();
  report("Chromium: runs list first contentful paint", spread(paint), "≤ 300 ms");
  report("Chromium: runs list load event (interactive)", spread(loaded));
  report("baseline: sign-in page first contentful paint", spread(basePaint));
  report("baseline: sign-in page load event", spread(baseLoaded));

  // 20 tabs on the live list: what the server holds for them while they poll.
  const pid = server.child.pid;
  await sleep(2000);
  const idle: number[] = [];
  for (let i = 0; i < 5; i++) (idle.push(rssKiB(pid)), await sleep(500));
  const pages = [];
  for (let i = 0; i < CLIENTS; i++) {
    const page = await browser.newPage();
    await page.goto(urls.first, { waitUntil: "load" });
    pages.push(page);
  }
  const busy: number[] = [];
  for (let i = 0; i < 20; i++) (busy.push(rssKiB(pid)), await sleep(1000));
  for (const page of pages) await page.close();
  const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
  report(`server RSS idle, median (min–max)`, spread(idle, mib));
  report(`server RSS with ${CLIENTS} tabs polling the live list (20 s)`, spread(busy, mib));
  report(`added RSS (median − median)`, mib(median(busy) - median(idle)));
} finally {
  await browser.close();
  await server.stop();
  await Deno.remove(home, { recursive: true });
}
