/**
 * The console's approvals, schedules and cost pages in a real browser: Debian's Chromium, headless, driven by
 * puppeteer-core, against a real `hermes serve`. A run of a job with `approval: {api: true}` parks a read
 * outside its root; the pending call appears on the approvals page without a reload, is denied with a reason
 * typed in the page (the run ends, the denial having reached the model as the tool's answer), and a second
 * run's call is allowed from the keyboard alone (the run succeeds, the file's text reached the model). The
 * schedules page shows a job's next slots and its recorded outcomes as a strip; the cost page draws its chart
 * from the table (no CSP violation, nothing from another origin). Screenshots go to the artifacts folder the
 * console's other browser tests use (docs/console.md).
 *
 * Without Chromium the tests are skipped with the reason, except under CI=true, where they must run.
 */
import assert from "node:assert/strict";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { currentProcess } from "../../runtime/core/process_identity.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import type { ModelCallRow } from "../../runtime/store/store.ts";
import { hermes, ROOT, tempDir, writeFiles } from "../_testing/cli.ts";
import { call, type ServeProcess, startServe } from "../_testing/serve.ts";
import { type OpenAIServer, startOpenAIServer } from "../_testing/openai_server.ts";

/** The page's `document` as the functions below see it in the browser (no DOM library in this type check). */
declare const document: {
  activeElement: { textContent: string | null; getAttribute(name: string): string | null } | null;
  querySelector(selector: string): { textContent: string | null } | null;
  querySelectorAll(selector: string): { length: number };
  addEventListener(
    type: string,
    listener: (event: { violatedDirective: string; blockedURI: string }) => void,
  ): void;
};

const CHROMIUM = Deno.env.get("HERMES_CHROMIUM") ?? "/usr/bin/chromium";
const ARTIFACTS = `${Deno.env.get("HERMES_ARTIFACTS_DIR") ?? `${ROOT}/.ci/artifacts`}/console`;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const chromium = await Deno.stat(CHROMIUM).then((info) => info.isFile, () => false);
if (!chromium && Deno.env.get("CI") === "true") {
  throw new Error(`CI=true but Chromium is missing at ${CHROMIUM}: .ci/run installs it`);
}
if (!chromium) console.warn(`console page browser tests skipped: no Chromium at ${CHROMIUM}`);

async function launch(home: string): Promise<Browser> {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  return await puppeteer.launch({
    executablePath: CHROMIUM,
    // As root Chromium refuses its sandbox; the page is this test's own server.
    args: [
      ...(Deno.uid() === 0 ? ["--no-sandbox"] : []),
      "--headless=new",
      "--disable-gpu",
      "--no-first-run",
    ],
    userDataDir: `${home}/chromium`,
  });
}

/** A page that lets no request leave for another origin and records what the CSP refused. */
async function watchedPage(browser: Browser, origin: string) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const outside: string[] = [];
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    if (request.url().startsWith(origin) || request.url().startsWith("data:")) void request.continue();
    else {
      outside.push(request.url());
      void request.abort();
    }
  });
  await page.evaluateOnNewDocument(() => {
    const w = window as unknown as { __violations: string[] };
    w.__violations = [];
    document.addEventListener("securitypolicyviolation", (event) => {
      w.__violations.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  const violations = () =>
    page.evaluate(() => (window as unknown as { __violations: string[] }).__violations);
  return { page, outside, violations };
}

async function signIn(page: Page, url: string, token: string, next: string): Promise<void> {
  await page.goto(`${url}${next}`);
  assert.match(page.url(), /\/signin\?next=/);
  await page.type("input[name=token]", token);
  await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
  assert.equal(new URL(page.url()).pathname, next);
}

const mainText = (page: Page) =>
  page.$eval("main", (el) => (el as unknown as { innerText: string }).innerText);

/** The run once it ended. */
async function endedRun(server: ServeProcess, token: string, id: string) {
  for (let i = 0; i < 1200; i++) {
    const run = await call(`${server.url}/v1/runs/${id}`, { token });
    if (!["queued", "running", "waiting_approval"].includes(run.body.status)) return run.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${id} did not end:\n${server.stderr()}`);
}

/** The content of the tool message in the model's latest request. */
function toolAnswer(model: OpenAIServer): string {
  const tool = (model.requests.at(-1)!.messages ?? []).find((m) => m.role === "tool");
  return String(tool?.content);
}

Deno.test({
  name: "console pages in Chromium: a denied and an allowed approval unblock their waiting runs",
  ignore: !chromium,
}, async () => {
  const outsideDir = await tempDir("hermes-console-approve-outside-");
  await writeFiles(outsideDir, { "secret.txt": "the parked text" });
  const target = `${outsideDir}/secret.txt`;
  const model = await startOpenAIServer({
    script: [0, 1].flatMap(() => [
      { tool_calls: [{ name: "read_file", arguments: { path: target } }] },
      { content: "done" },
    ]),
  });
  const home = await tempDir("hermes-console-approve-");
  const jobs = await writeFiles(`${home}/jobs`, {
    "in/a.txt": "inside",
    "reader.yaml": `name: reader\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\n` +
      "prompt: read it\ntools: { read_file: { paths: [./in] } }\napproval: { api: true }\n",
  });
  const made = await hermes([
    "tokens",
    "create",
    "--scope",
    "runs:read",
    "--scope",
    "runs:write",
    "--scope",
    "approvals",
  ], {
    home,
  });
  assert.equal(made.code, 0, made.stderr);
  const token = made.stdout.trim();
  const server = await startServe(home, ["--jobs", jobs], { cwd: home });
  const browser = await launch(home);
  try {
    const { page, outside, violations } = await watchedPage(browser, server.url);
    await signIn(page, server.url, token, "/approvals");
    assert.match(await mainText(page), /No call waits for a decision/);
    const submit = async () => {
      const reply = await call(`${server.url}/v1/runs`, { token, body: { job: "reader" } });
      assert.equal(reply.status, 202, JSON.stringify(reply.body));
      return reply.body.id as string;
    };

    // The call appears without a reload (the list polls), with what a person needs to decide.
    const marker = await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 7));
    const denied = await submit();
    await page.waitForSelector("article.approval", { timeout: 60_000 });
    assert.equal(
      await page.evaluate(() => (window as unknown as { __marker: number }).__marker),
      marker,
      "no reload",
    );
    const card = await page.$eval(
      "article.approval",
      (el) => (el as unknown as { innerText: string }).innerText,
    );
    assert.match(card, /pending\s+read_file/);
    assert.ok(card.includes(target), "the arguments name the file");
    assert.match(card, /outside tools\.read_file\.paths/);
    assert.match(card, new RegExp(`Run\\s+${denied}`));
    assert.match(card, /Expires\s+.*\(in 59 m|Expires\s+.*\(in 1 h 00 m/);
    assert.equal((await call(`${server.url}/v1/runs/${denied}`, { token })).body.status, "waiting_approval");
    await page.screenshot({ path: `${ARTIFACTS}/approvals.png`, fullPage: true });

    // Deny, with a reason typed in the page.
    await page.type("article.approval input[name=reason]", "not that file");
    // The list looks again every 2 s (htmx swaps it): what was typed survives the next looks.
    const swaps = await page.evaluate(() => {
      const w = window as unknown as { __swaps: number };
      w.__swaps = 0;
      document.addEventListener("htmx:afterSwap", () => void w.__swaps++);
      return w.__swaps;
    });
    await page.waitForFunction(() => (window as unknown as { __swaps: number }).__swaps >= 2, {
      timeout: 30_000,
      polling: 200,
    });
    assert.equal(swaps, 0);
    assert.equal(
      await page.$eval(
        "article.approval input[name=reason]",
        (el) => (el as unknown as { value: string }).value,
      ),
      "not that file",
    );
    await Promise.all([page.waitForNavigation(), page.click("article.approval button[value=deny]")]);
    assert.match(await mainText(page), /allowed|denied/);
    assert.match(await mainText(page), new RegExp(`denied; the run continues`));
    const ended = await endedRun(server, token, denied);
    assert.equal(ended.status, "success", "the model got the denial and answered");
    assert.match(toolAnswer(model), /^denied: /, "the denial reached the model as the tool's answer");
    assert.ok(!toolAnswer(model).includes("the parked text"));

    // Allow the next one from the keyboard alone: Tab to the Allow button, Enter.
    const allowed = await submit();
    await page.waitForSelector(`article.approval`, { timeout: 60_000 });
    let focused = "";
    for (let i = 0; i < 40 && focused !== "allow"; i++) {
      await page.keyboard.press("Tab");
      focused = await page.evaluate(() => document.activeElement?.getAttribute("value") ?? "");
    }
    assert.equal(focused, "allow", "the Allow button is reachable with Tab");
    await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
    assert.match(await mainText(page), /allowed; the run continues/);
    assert.equal((await endedRun(server, token, allowed)).status, "success");
    assert.equal(
      toolAnswer(model),
      "the parked text",
      "the allowed call ran and its result reached the model",
    );
    await page.screenshot({ path: `${ARTIFACTS}/approvals-decided.png`, fullPage: true });
    assert.deepEqual(outside, []);
    assert.deepEqual(await violations(), []);
  } finally {
    await browser.close();
    await server.stop();
    await Deno.remove(home, { recursive: true });
    await model.close();
    await Deno.remove(outsideDir, { recursive: true });
  }
});

function modelCall(job: string, at: number, cost: number): ModelCallRow {
  return {
    session_id: `ses_${job}_${at}`,
    caller_id: `ses_${job}_${at}`,
    job,
    labels: { team: job === "nightly" ? "data" : "ops" },
    at,
    provider: "openai",
    model: "m",
    prompt_tokens: 1000,
    cached_tokens: 0,
    cache_write_tokens: 0,
    completion_tokens: 200,
    reasoning_tokens: 0,
    cost_usd: cost,
  };
}

Deno.test({
  name: "console pages in Chromium: schedules with next slots and an outcome strip; cost with its chart",
  ignore: !chromium,
}, async () => {
  const home = await tempDir("hermes-console-sched-");
  const jobs = await writeFiles(`${home}/jobs`, {
    "nightly.yaml": "name: nightly\nmodel: { provider: scripted, script: ./reply.yaml }\nprompt: go\n" +
      'schedule:\n  cron: "0 * * * *"\n',
    "reply.yaml": "- content: hi\n",
  });
  // What a daemon and past runs left in the store the server opens.
  const now = Date.now();
  const top = Math.floor(now / HOUR) * HOUR;
  {
    const store = openSqliteStore(`${home}/state.db`);
    const holder = currentProcess();
    for (const [i, status] of ["success", "failed", "success", "crashed", "success"].entries()) {
      const slot = top - (5 - i) * HOUR;
      await store.claimSlots([{ job: "nightly", slot }], holder, { now: slot, lease_ms: HOUR });
      await store.finishRuns([{
        claim: { job: "nightly", slot },
        holder,
        outcome: { status, session_id: null, now: slot + 500 },
      }]);
    }
    await store.recordSkipped({ job: "nightly", slot: top, note: "overlapped" }, holder, now);
    await store.importModelCalls([
      ...[0, 1, 2, 3, 4, 5, 6].map((d) => modelCall("nightly", now - d * DAY, 0.4 + d * 0.1)),
      ...[0, 2, 4].map((d) => modelCall("triage", now - d * DAY, 1.25)),
    ]);
    await store.close();
  }
  const made = await hermes(["tokens", "create", "--scope", "runs:read"], { home });
  assert.equal(made.code, 0, made.stderr);
  const server = await startServe(home, ["--jobs", jobs, "--no-worker"], { cwd: home });
  const browser = await launch(home);
  try {
    const { page, outside, violations } = await watchedPage(browser, server.url);
    await signIn(page, server.url, made.stdout.trim(), "/schedules");
    const text = await mainText(page);
    assert.match(text, /nightly/);
    assert.match(text, /Next slots/);
    const next = new Date(top + HOUR).toISOString().replace("T", " ").slice(0, 19);
    assert.ok(text.includes(`${next} UTC`), `the next slot ${next}`);
    const strip = await page.$$eval(
      "ol.strip li",
      (items) => items.map((li) => (li as unknown as { textContent: string }).textContent.trim()),
    );
    assert.equal(strip.length, 6);
    assert.deepEqual(strip.map((s) => s.split(" ").at(-1)), [
      "success",
      "failed",
      "success",
      "crashed",
      "success",
      "skipped",
    ]);
    assert.match(strip[3]!, /^☠/, "a crashed slot has its own mark");
    assert.match(strip[5]!, /^↷/, "a skipped slot has its own mark");
    await page.screenshot({ path: `${ARTIFACTS}/schedules.png`, fullPage: true });

    await page.goto(`${server.url}/cost?days=7`);
    await page.waitForSelector("#cost-chart[data-drawn] canvas", { timeout: 30_000 });
    assert.equal(
      await page.$eval(
        "#cost-chart",
        (el) => (el as unknown as { dataset: { drawn: string } }).dataset.drawn,
      ),
      "2",
    );
    const costText = await mainText(page);
    assert.match(costText, /Cost, last 7 days\s+\$8\.65/);
    assert.match(costText, /Model calls\s+10/);
    const rows = await page.$$eval("#cost-table tbody tr", (trs) => trs.length);
    assert.equal(rows, 7);
    await page.screenshot({ path: `${ARTIFACTS}/cost.png`, fullPage: true });
    assert.deepEqual(outside, []);
    assert.deepEqual(await violations(), [], "uPlot draws within the CSP");
  } finally {
    await browser.close();
    await server.stop();
    await Deno.remove(home, { recursive: true });
  }
});
