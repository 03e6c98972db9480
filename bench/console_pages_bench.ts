/**
 * The web console's approvals, schedules and cost pages over a loaded store (SQLite, `hermes serve
 * --no-worker`): 10 000 queued runs, 200 pending approvals, 20 scheduled jobs with 20 recorded slots each,
 * and 90 days of model calls (10 jobs × 20 calls a day):
 *
 * - server time of each page, interleaved with GET /healthz (the server's floor for one request);
 * - in headless Chromium: first contentful paint and the load event (scripts loaded: interactive; on the
 *   cost page, uPlot drawn too) of each page, interleaved with the sign-in page (the same layout, no data).
 *
 *   deno run -A bench/console_pages_bench.ts [--samples 15]
 */
import { parseArgs } from "node:util";
import puppeteer from "puppeteer-core";
import { currentProcess } from "../runtime/core/process_identity.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import type { ModelCallRow } from "../runtime/store/store.ts";
import { hermes } from "../tests/_testing/cli.ts";
import { startServe } from "../tests/_testing/serve.ts";
import { report, spread } from "./_stats.ts";
import { signIn } from "../tests/_testing/console_signin.ts";

const { values } = parseArgs({ args: Deno.args, options: { samples: { type: "string", default: "15" } } });
const SAMPLES = Number(values.samples);
const CHROMIUM = "/usr/bin/chromium";
const HOUR = 3_600_000;
const DAY = 86_400_000;
const RUNS = 10_000;
const JOBS = 20;

const home = await Deno.makeTempDir({ prefix: "hermes-console-pages-bench-" });
const jobsDir = `${home}/jobs`;
await Deno.mkdir(jobsDir);
await Deno.writeTextFile(`${jobsDir}/reply.yaml`, "- content: hi\n");
const now = Date.now();
{
  const store = openSqliteStore(`${home}/state.db`);
  const holder = currentProcess("bench-host");
  for (let i = 0; i < RUNS; i++) {
    await store.submitRun({
      job: `job-${i % 7}`,
      job_path: null,
      job_snapshot: "{}",
      inputs: {},
      labels: { team: i % 3 ? "core" : "infra" },
      trigger: "api",
      now: now - (RUNS - i) * 60_000,
    });
  }
  for (let i = 0; i < 200; i++) {
    await store.createApproval({
      id: `apr_${String(i).padStart(4, "0")}`,
      run_id: null,
      session_id: `ses_${i}`,
      job: `job-${i % 7}`,
      tool: "read_file",
      tool_call_id: `call_${i}`,
      server: null,
      arguments: { path: `/srv/data/${i}/report.txt`, limit: 4000 },
      subject: `/srv/data/${i}/report.txt`,
      reason: `"/srv/data/${i}/report.txt" is outside tools.read_file.paths`,
      rule: "tools.read_file.paths: [/srv/data]",
      created_at: now - i * 1000,
      expires_at: now + HOUR,
    });
  }
  const top = Math.floor(now / HOUR) * HOUR;
  const outcomes = ["success", "success", "failed", "success", "skipped", "crashed"];
  for (let j = 0; j < JOBS; j++) {
    const job = `sched-${String(j).padStart(2, "0")}`;
    await Deno.writeTextFile(
      `${jobsDir}/${job}.yaml`,
      `name: ${job}\nmodel: { provider: scripted, script: ./reply.yaml }\nprompt: go\n` +
        `schedule:\n  cron: "${j % 60} * * * *"\n`,
    );
    for (let s = 20; s >= 1; s--) {
      const slot = top - s * HOUR;
      const status = outcomes[(j + s) % outcomes.length]!;
      if (status === "skipped") {
        await store.recordSkipped({ job, slot, note: "overlapped" }, holder, slot);
        continue;
      }
      await store.claimSlots([{ job, slot }], holder, { now: slot, lease_ms: HOUR });
      await store.finishRuns([{
        claim: { job, slot },
        holder,
        outcome: { status, session_id: null, now: slot + 500 },
      }]);
    }
  }
  const calls: ModelCallRow[] = [];
  for (let d = 0; d < 90; d++) {
    for (let j = 0; j < 10; j++) {
      for (let c = 0; c < 20; c++) {
        const at = now - d * DAY - c * 60_000;
        calls.push({
          session_id: `ses_${d}_${j}_${c}`,
          caller_id: `ses_${d}_${j}_${c}`,
          job: `job-${j}`,
          labels: { team: j % 2 ? "core" : "infra" },
          at,
          provider: "openai",
          model: "m",
          prompt_tokens: 1200,
          cached_tokens: 100,
          cache_write_tokens: 0,
          completion_tokens: 300,
          reasoning_tokens: 0,
          cost_usd: 0.0042,
        });
      }
    }
  }
  for (let i = 0; i < calls.length; i += 2000) await store.importModelCalls(calls.slice(i, i + 2000));
  await store.close();
}

const token = (await hermes(["tokens", "create", "--scope", "admin"], { home })).stdout.trim();
const server = await startServe(home, ["--no-worker", "--rate-limit", "1000000", "--jobs", jobsDir], {
  cwd: home,
});

async function timed(url: string, cookie: string): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(url, { headers: { cookie } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text.slice(0, 200)}`);
  return performance.now() - t0;
}

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  args: [...(Deno.uid() === 0 ? ["--no-sandbox"] : []), "--headless=new", "--disable-gpu", "--no-first-run"],
  userDataDir: `${home}/chromium`,
});
try {
  const session = await signIn(server.url, token);
  const cookie = `${session.name}=${session.value}`;
  const pages = {
    approvals: `${server.url}/approvals`,
    schedules: `${server.url}/schedules`,
    cost30: `${server.url}/cost?days=30`,
    cost90: `${server.url}/cost?days=90&by=label&label=team`,
  };
  const http: Record<string, number[]> = { approvals: [], schedules: [], cost30: [], cost90: [], health: [] };
  for (let i = -3; i < SAMPLES; i++) {
    for (const [name, url] of [...Object.entries(pages), ["health", `${server.url}/healthz`]]) {
      const ms = await timed(url!, cookie);
      if (i >= 0) http[name!]!.push(ms);
    }
  }
  console.log(
    `${RUNS} runs, 200 pending approvals, ${JOBS} scheduled jobs × 20 slots, 18 000 model calls over 90 days`,
  );
  console.log(`${SAMPLES} samples each, interleaved`);
  report("GET /approvals (200 pending), server", spread(http.approvals!));
  report("GET /schedules (20 jobs × 20 slots), server", spread(http.schedules!));
  report("GET /cost?days=30 (by job), server", spread(http.cost30!));
  report("GET /cost?days=90 (by label), server", spread(http.cost90!));
  report("baseline: GET /healthz", spread(http.health!));

  await browser.setCookie({
    name: session.name,
    value: session.value,
    domain: new URL(server.url).hostname,
    path: "/",
    httpOnly: true,
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const targets = [...Object.entries(pages), ["signin", `${server.url}/signin`]] as [string, string][];
  const paint: Record<string, number[]> = {};
  const loaded: Record<string, number[]> = {};
  for (let i = -2; i < SAMPLES; i++) {
    for (const [name, url] of targets) {
      await page.goto("about:blank");
      await page.goto(url, { waitUntil: "load" });
      if (page.url() !== url) throw new Error(`${url} went to ${page.url()}: not signed in`);
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
        (paint[name] ??= []).push(timing.fcp);
        (loaded[name] ??= []).push(timing.load);
      }
    }
  }
  await page.close();
  for (const [name] of targets) {
    const label = name === "signin" ? "baseline: sign-in page" : `Chromium: ${name}`;
    report(
      `${label} first contentful paint`,
      spread(paint[name]!),
      name === "signin" ? undefined : "≤ 300 ms",
    );
    report(`${label} load event (interactive)`, spread(loaded[name]!));
  }
} finally {
  await browser.close();
  await server.stop();
  await Deno.remove(home, { recursive: true });
}
