/**
 * The web console in a real browser: Debian's Chromium, headless, driven by puppeteer-core, against a real
 * `hermes serve` working the queue with the scripted model. Sign-in through the form; a run submitted over the
 * API appears on the runs list and finishes there without a reload; a tool run's transcript (the call folded
 * with its arguments and result) and waterfall; a transcript holding markup, an `<img onerror>`, OSC 52 and a
 * secret renders inert (no script ran, no request left for anything but the console's own files, the secret
 * redacted); an inline script is refused by the CSP; a cancel without its CSRF token is refused and changes
 * nothing, with it the run is cancelled. A running run's page keeps what the reader opened — the same
 * <details> elements, open, focused, where they were on the screen — while the run's updates arrive: the timing
 * chart replacing its sentence, a delegate call's result arriving in the open call ahead of its subagent's
 * transcript (the model calls held by the test, so that each state is there to be read), a reconnect that
 * replays the whole part, a compaction folding the call's message (it moves into the fold, still open), the
 * run's end; the same when the page's stream is refused and it polls instead. On the runs list, a run arriving
 * above a focused row leaves the focus on that row's link, still leading to its run. Each page's screenshot goes to the artifacts folder (docs/console.md).
 *
 * Without Chromium the tests are skipped with the reason, except under CI=true, where they must run (.ci/run
 * installs it). Not in .ci/run's non-root pass: Chromium's own sandbox there would need user namespaces the
 * runner may not grant, and nothing here depends on the user.
 */
import assert from "node:assert/strict";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { hermes, ROOT, tempDir, writeFiles } from "../_testing/cli.ts";
import { call, startServe } from "../_testing/serve.ts";
import { type ChatRequestBody, startOpenAIServer, textOf } from "../_testing/openai_server.ts";

/**
 * The page's `document` as the functions below see it when they run in the browser (this file is type-checked
 * without the DOM library, which would clash with Deno's own types).
 */
declare const document: {
  cookie: string;
  body: { innerText: string; append(node: unknown): void };
  activeElement: { textContent: string | null } | null;
  querySelector(selector: string): { textContent: string | null } | null;
  createElement(tag: string): { textContent: string; src: string };
  addEventListener(
    type: string,
    listener: (event: { violatedDirective: string; blockedURI: string }) => void,
  ): void;
};

const CHROMIUM = Deno.env.get("HERMES_CHROMIUM") ?? "/usr/bin/chromium";
const ARTIFACTS = `${Deno.env.get("HERMES_ARTIFACTS_DIR") ?? `${ROOT}/.ci/artifacts`}/console`;
const SECRET = "tok-console-9a8b7c6d5e";
const MARK = "[REDACTED:SERVICE_TOKEN]";
const HOSTILE_FILE = "<img src=x onerror=window.__pwned=1>.txt";

const chromium = await Deno.stat(CHROMIUM).then((info) => info.isFile, () => false);
const inCi = Deno.env.get("CI") === "true";
if (!chromium && inCi) throw new Error(`CI=true but Chromium is missing at ${CHROMIUM}: .ci/run installs it`);
if (!chromium) {
  console.warn(`console browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);
}

/** A message long enough that a compaction of several of them pays. */
const long = (word: string) => Array(80).fill(word).join(" ");

async function fixture() {
  const home = await tempDir("hermes-console-browser-");
  const system = (body: ChatRequestBody) => textOf(body.messages?.find((m) => m.role === "system")?.content);
  const answered = (body: ChatRequestBody) => (body.messages ?? []).some((m) => m.role === "tool");
  // Model calls that wait for the test: the nest job's lister's answer after its tool call, then its lead's;
  // the fold job's compaction summary.
  const held = {
    lister: Promise.withResolvers<void>(),
    nest: Promise.withResolvers<void>(),
    fold: Promise.withResolvers<void>(),
  };
  const model = await startOpenAIServer({
    gate: async (body) => {
      if (system(body).includes("You are a lister") && answered(body)) await held.lister.promise;
      if (system(body).includes("You are the nest lead") && answered(body)) await held.nest.promise;
      if (system(body).startsWith("You compact")) await held.fold.promise;
    },
    respond: (body) => {
      if (system(body).startsWith("You compact")) {
        return { content: "## Goal\nlist\n## Progress\nlisted, then counted\n## Next steps\nnone" };
      }
      // The fold job lists the folder, then answers each step at length.
      if (system(body).includes("You are the folder")) {
        const last = body.messages?.at(-1);
        const text = textOf(last?.content);
        if (text === "list") {
          return { tool_calls: [{ id: "call_1", name: "list_dir", arguments: { path: "." } }] };
        }
        if (text === "go on") return { content: "after the compaction" };
        return { content: long(`answer-${last?.role === "tool" ? "listed" : text.split(" ")[0]}`) };
      }
      // The lead delegates one task; the worker (its own session) answers it.
      if (system(body).includes("You are a worker")) return { content: "worker says: <b>half</b> done" };
      // The nest lead delegates to the lister, which lists the folder before it answers.
      if (system(body).includes("You are a lister")) {
        return answered(body)
          ? { content: "lister done" }
          : { tool_calls: [{ id: "call_1", name: "list_dir", arguments: { path: "." } }] };
      }
      if (!answered(body)) {
        const agent = system(body).includes("nest") ? "lister" : "worker";
        return {
          tool_calls: [{ id: "call_1", name: "delegate", arguments: { agent, prompt: "do half" } }],
        };
      }
      return { content: system(body).includes("nest") ? "nest done" : "lead done" };
    },
  });
  const jobs = await writeFiles(`${home}/jobs`, {
    // A tool run, slow enough in its second model call to be seen running.
    "tool.yaml": "name: tool\nmodel: { provider: scripted, script: ./tool-script.yaml }\nprompt: list\n" +
      'tools:\n  list_dir: { paths: ["."] }\n',
    "tool-script.yaml": '- tool_calls: [{ name: list_dir, arguments: { path: "." } }]\n' +
      "- content: listed\n  delay: 3s\n",
    // The same, slower: its page is read while the run goes on.
    "slowtool.yaml":
      "name: slowtool\nmodel: { provider: scripted, script: ./slowtool-script.yaml }\nprompt: list\n" +
      'tools:\n  list_dir: { paths: ["."] }\n',
    "slowtool-script.yaml": '- tool_calls: [{ name: list_dir, arguments: { path: "." } }]\n' +
      "- content: listed at last\n  delay: 8s\n",
    // A model answer and a tool result that would be script, markup and a clipboard write if rendered raw.
    "hostile.yaml":
      "name: hostile\nmodel: { provider: scripted, script: ./hostile-script.yaml }\nprompt: go\n" +
      'tools:\n  list_dir: { paths: ["."] }\n',
    "hostile-script.yaml": '- tool_calls: [{ name: list_dir, arguments: { path: "." } }]\n' +
      `- content: "<script>window.__pwned=2</script><img src=x onerror=\\"window.__pwned=3;fetch('http://evil.test/')\\"> ` +
      `\\e]52;c;SGVsbG8=\\a copied; the key is ${SECRET}"\n`,
    "slow.yaml": "name: slow\nmodel: { provider: scripted, script: ./slow-script.yaml }\nprompt: wait\n",
    "slow-script.yaml": "- content: late\n  delay: 120s\n",
    [HOSTILE_FILE]: "x\n",
    // Six long exchanges, then /compress: eleven messages are replaced by the summary.
    "compact.yaml":
      "name: compact\nmodel: { provider: scripted, script: ./compact-script.yaml }\nprompt: hello\n" +
      "compaction: { protect_first: 1, protect_last: 2 }\n" +
      `steps: ${
        JSON.stringify([...["one", "two", "three", "four", "five", "six"].map(long), "/compress", "go on"])
      }\n`,
    "compact-script.yaml": [0, 1, 2, 3, 4, 5, 6].map((n) => `- content: "${long(`answer${n}`)}"\n`).join("") +
      '- content: "## Goal\\ncount\\n## Progress\\ncounted to six\\n## Next steps\\nnone"\n' +
      "- content: after the compaction\n",
    "lead.yaml": `name: lead\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\n` +
      "system: You are the lead.\nprompt: split\nagents:\n  worker:\n    description: Does one task\n" +
      "    system: You are a worker.\n",
    // A tool call, five long exchanges, then /compress: the call's messages are folded by the compaction.
    "fold.yaml": `name: fold\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\n` +
      'system: You are the folder.\nprompt: list\ntools:\n  list_dir: { paths: ["."] }\n' +
      "compaction: { protect_first: 1, protect_last: 2 }\n" +
      `steps: ${
        JSON.stringify([...["one", "two", "three", "four", "five"].map(long), "/compress", "go on"])
      }\n`,
    "nest.yaml": `name: nest\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\n` +
      'system: You are the nest lead.\nprompt: split\ntools:\n  list_dir: { paths: ["."] }\n' +
      "agents:\n  lister:\n    description: Lists the folder\n    system: You are a lister.\n" +
      "    tools: [list_dir]\n",
  });
  const made = await hermes(["tokens", "create", "--scope", "runs:read", "--scope", "runs:write"], { home });
  assert.equal(made.code, 0, made.stderr);
  const token = made.stdout.trim();
  const server = await startServe(home, ["--jobs", jobs], { cwd: home, env: { SERVICE_TOKEN: SECRET } });
  const browser = await puppeteer.launch({
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
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  return {
    home,
    token,
    server,
    browser,
    /** Lets the nest job's held model calls answer. */
    release(call: keyof typeof held): void {
      held[call].resolve();
    },
    async submit(job: string): Promise<string> {
      const reply = await call(`${server.url}/v1/runs`, { token, body: { job } });
      assert.equal(reply.status, 202, JSON.stringify(reply.body));
      return reply.body.id;
    },
    async [Symbol.asyncDispose]() {
      for (const hold of Object.values(held)) hold.resolve();
      await browser.close();
      await server.stop();
      await model.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

/**
 * A page that records every request it makes and lets none leave for another origin (nor any `refused` by the
 * test: a stream a proxy would not pass).
 */
async function watchedPage(
  browser: Browser,
  origin: string,
  refused: (path: string) => boolean = () => false,
) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const requests: string[] = [];
  const outside: string[] = [];
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const url = request.url();
    requests.push(url);
    if (!url.startsWith(origin)) {
      outside.push(url);
      void request.abort();
    } else if (refused(new URL(url).pathname)) {
      void request.abort();
    } else {
      void request.continue();
    }
  });
  // Runs before any script of the page (outside its CSP): records what the policy refused.
  await page.evaluateOnNewDocument(() => {
    const w = window as unknown as { __violations: string[] };
    w.__violations = [];
    document.addEventListener("securitypolicyviolation", (event) => {
      w.__violations.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return { page, requests, outside };
}

async function signIn(page: Page, fx: Fixture): Promise<void> {
  await page.goto(`${fx.server.url}/`);
  assert.match(page.url(), /\/signin\?next=/);
  await page.screenshot({ path: `${ARTIFACTS}/signin.png` });
  await page.type("input[name=token]", fx.token);
  await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
  assert.equal(new URL(page.url()).pathname, "/runs");
}

/**
 * Opens the transcript's first tool call from the keyboard (a click is aimed at where the summary was, and
 * a part appearing above it may move it in between) and marks its element with `mark`, so that a test can
 * tell later whether the live merge kept that very element. False when no call is open.
 */
async function openFirstCall(page: Page, mark: number): Promise<boolean> {
  await page.focus(".transcript details summary");
  await page.keyboard.press("Enter");
  return await page.evaluate((mark) => {
    const details = document.querySelector(".transcript details[open]") as unknown as
      | { __mark: number }
      | null;
    if (details) details.__mark = mark;
    return details !== null;
  }, mark);
}

async function statusOf(page: Page, id: string): Promise<string> {
  return await page.$eval(`tr[data-run="${id}"] .status`, (el) => el.textContent?.trim() ?? "").catch(() =>
    ""
  );
}

Deno.test({
  name:
    "console in Chromium: a running run's page appends new transcript items and keeps an open <details> open",
  ignore: !chromium,
}, async () => {
  await using fx = await fixture();
  const { page, requests, outside } = await watchedPage(fx.browser, fx.server.url);
  await signIn(page, fx);
  const id = await fx.submit("slowtool");
  // The page opens at once; the tool call (with its result) arrives within a second through the stream, the
  // answer after it takes 8 s. The call is opened as soon as it is shown: the run's events are stored in
  // batches after its messages, so the timing chart usually replaces its "no call yet" sentence only after
  // that, and everything else on the page must keep its element through that change too.
  await page.goto(`${fx.server.url}/runs/${id}`);
  await page.waitForFunction(
    () => document.querySelector(".transcript details summary")?.textContent?.includes("list_dir"),
    { timeout: 30_000, polling: "mutation" },
  );
  assert.ok(await page.$("#run[data-live]"), "the run is still running");
  assert.ok(
    await openFirstCall(page, 7),
    "the call opened from the keyboard is open (its summary kept the focus until Enter)",
  );
  await page.waitForFunction(
    () =>
      (document.querySelector("main") as unknown as { innerText: string }).innerText.includes(
        "listed at last",
      ),
    { timeout: 60_000, polling: 250 },
  );
  assert.equal(
    await page.evaluate(() =>
      (document.querySelector(".transcript details[open]") as unknown as { __mark?: number } | null)?.__mark
    ),
    7,
    "the same <details> element, still open",
  );
  assert.match(await page.$eval("#run h1", (el) => el.textContent ?? ""), /success/);
  assert.equal(await page.$("#run[data-live]"), null, "an ended run's page is no longer live");
  const paths = requests.map((url) => new URL(url).pathname);
  assert.ok(paths.includes(`/runs/${id}/stream`), paths.join(" "));
  assert.deepEqual(paths.filter((path) => path.endsWith("/live")), [], "no polling");
  assert.deepEqual(outside, []);
});

/** What the nested-details test reads of the page, in the browser. */
interface Opened {
  /** The marks of the <details> elements open in the transcript, outermost first. */
  marks: string[];
  /** The mark of the <details> whose summary has the focus. */
  focused: string | undefined;
  /** Where the marked "nested" summary is in the viewport (px from its top): where the reader sees it. */
  top: number;
}

/** The transcript's open <details> as the reader has them (marks put on the elements by the test). */
function opened(page: Page): Promise<Opened> {
  return page.evaluate(() => {
    type El = { __mark?: string; parentElement: El | null; getBoundingClientRect(): { top: number } };
    const doc = document as unknown as {
      querySelectorAll(s: string): El[];
      activeElement: El | null;
    };
    const nested = [...doc.querySelectorAll(".transcript details")].find((d) => d.__mark === "nested");
    const summary = (nested as unknown as { querySelector(s: string): El } | undefined)?.querySelector(
      "summary",
    );
    return {
      marks: [...doc.querySelectorAll(".transcript details[open]")].map((d) => d.__mark ?? "(unmarked)"),
      focused: doc.activeElement?.parentElement?.__mark,
      top: Math.round(summary?.getBoundingClientRect().top ?? NaN),
    };
  });
}

/**
 * A subagent's call opened inside its delegate call, then the delegate's result arriving in that element, a
 * reconnect (streaming) and the run's end; `via` polling: the page's stream is refused, so the page polls its
 * fallback fragment and merges it the same way.
 */
async function keepsOpenCalls(via: "stream" | "polling") {
  await using fx = await fixture();
  const { page, requests, outside } = await watchedPage(
    fx.browser,
    fx.server.url,
    (path) => via === "polling" && path.endsWith("/stream"),
  );
  // Short enough that the transcript is read scrolled: what grows above the reader must not move it.
  await page.setViewport({ width: 1280, height: 480 });
  await signIn(page, fx);
  const id = await fx.submit("nest");
  await page.goto(`${fx.server.url}/runs/${id}`);
  // Held: the lister listed the folder and its answer waits for the test (its model call shows running), so
  // the delegate call has the subagent's transcript and no result yet, and nothing else is on its way.
  await page.waitForFunction(
    () =>
      document.querySelector(".transcript .subagent details summary")?.textContent?.includes("list_dir") &&
      [...(document as unknown as { querySelectorAll(s: string): { textContent: string }[] })
        .querySelectorAll("svg.waterfall title")]
        .some((t) => /↳ model call 2: running/.test(t.textContent)),
    { timeout: 30_000, polling: 100 },
  );
  assert.match(
    await page.$eval(".transcript details summary", (el) => el.textContent ?? ""),
    /Tool call delegate \(no result stored\) · subagent lister/,
  );
  await page.focus(".transcript details summary");
  await page.keyboard.press("Enter");
  await page.focus(".transcript .subagent details summary");
  await page.keyboard.press("Enter");
  await page.evaluate(() => {
    type Marked = { __mark: string; scrollIntoView(): void };
    const doc = document as unknown as { querySelector(s: string): Marked };
    doc.querySelector(".transcript details[open]").__mark = "delegate";
    const nested = doc.querySelector(".transcript .subagent details[open]");
    nested.__mark = "nested";
    nested.scrollIntoView();
    (window as unknown as { scrollBy(x: number, y: number): void }).scrollBy(0, -120);
  });
  const before = await opened(page);
  assert.deepEqual(before.marks, ["delegate", "nested"]);
  assert.equal(before.focused, "nested");
  assert.ok(
    await page.evaluate(() => (window as unknown as { scrollY: number }).scrollY > 0),
    "the page is read scrolled",
  );

  // The lister answers: the delegate call's result arrives in the open element, before the subagent's
  // transcript (which gains the lister's answer), and the waterfall above grows.
  fx.release("lister");
  await page.waitForFunction(
    () => {
      const all = (document as unknown as { querySelectorAll(s: string): Iterable<{ __mark?: string }> })
        .querySelectorAll(".transcript details");
      const delegate = [...all].find((d) => d.__mark === "delegate") as { innerText: string } | undefined;
      return delegate && /Result\s+lister done[\s\S]*Subagent lister/.test(delegate.innerText);
    },
    { timeout: 30_000, polling: 100 },
  );
  assert.doesNotMatch(
    await page.$eval(".transcript details summary", (el) => el.textContent ?? ""),
    /no result stored/,
  );
  assert.deepEqual(await opened(page), before, "the same elements, open, focused, where the reader had them");
  assert.ok(await page.$("#run[data-live]"), "the lead's next call still waits: the run is running");

  // A reconnect (the tab hidden, then shown again) replays the whole part; the merge keeps what it has.
  const streams = () => requests.filter((url) => new URL(url).pathname === `/runs/${id}/stream`).length;
  if (via === "stream") {
    assert.equal(streams(), 1);
    await page.evaluate(() => {
      const doc = document as unknown as {
        dispatchEvent(event: unknown): void;
        querySelector(s: string): { setAttribute(name: string, value: string): void };
      };
      const show = (hidden: boolean) => {
        Object.defineProperty(doc, "hidden", { configurable: true, get: () => hidden });
        doc.dispatchEvent(new Event("visibilitychange"));
      };
      show(true);
      // Not in what the server sends: the first merge from the reopened stream takes it away.
      doc.querySelector("#run h1").setAttribute("data-stale", "");
      show(false);
    });
    await page.waitForFunction(() => !document.querySelector("#run h1[data-stale]"), {
      timeout: 30_000,
      polling: 100,
    });
    assert.equal(streams(), 2, "the stream was opened again");
    assert.deepEqual(await opened(page), before, "after the replay");
  }

  // The lead answers and the run ends: its last merge (status, result, no cancel form, no longer live).
  fx.release("nest");
  await page.waitForFunction(() => document.querySelector("h1 .status")?.textContent?.includes("success"), {
    timeout: 60_000,
    polling: 100,
  });
  assert.match(
    await page.$eval("main", (el) => (el as unknown as { innerText: string }).innerText),
    /nest done/,
  );
  assert.equal(await page.$("#run[data-live]"), null);
  assert.deepEqual(await opened(page), before, "after the run ended");
  const polled = requests.filter((url) => new URL(url).pathname === `/runs/${id}/live`);
  if (via === "stream") assert.deepEqual(polled, [], "no polling");
  else assert.ok(polled.length > 0, "the page polled");
  assert.deepEqual(outside, []);
}

Deno.test({
  name:
    "console in Chromium: a subagent's call opened inside its delegate call stays open, focused and in place " +
    "when the delegate's result arrives in that element, across a reconnect and the run's end",
  ignore: !chromium,
}, () => keepsOpenCalls("stream"));

Deno.test({
  name: "console in Chromium: the same through the polling fallback of a page whose stream is refused",
  ignore: !chromium,
}, () => keepsOpenCalls("polling"));

Deno.test({
  name:
    "console in Chromium: a tool call opened before a compaction folds its message stays the same open element, " +
    "in the fold",
  ignore: !chromium,
}, async () => {
  await using fx = await fixture();
  const { page, outside } = await watchedPage(fx.browser, fx.server.url);
  await signIn(page, fx);
  const id = await fx.submit("fold");
  await page.goto(`${fx.server.url}/runs/${id}`);
  // Held: the five steps are answered and the compaction's summary call waits for the test.
  await page.waitForFunction(
    () =>
      document.querySelector(".transcript")?.textContent?.includes("answer-five") &&
      document.querySelector(".transcript details summary")?.textContent?.includes("list_dir"),
    { timeout: 60_000, polling: 100 },
  );
  assert.equal(await page.$(".transcript details.compacted"), null, "nothing folded yet");
  assert.ok(await openFirstCall(page, 9), "the call opened from the keyboard is open");

  fx.release("fold");
  await page.waitForFunction(() => document.querySelector("h1 .status")?.textContent?.includes("success"), {
    timeout: 60_000,
    polling: 100,
  });
  assert.match(
    await page.$eval(".transcript", (el) => (el as unknown as { innerText: string }).innerText),
    /Compaction summary[\s\S]*after the compaction/,
  );
  // Its message moved into the fold (closed, as the reader has not opened it): the same element, still open.
  const where = await page.evaluate(() => {
    type El = { __mark?: number; open: boolean; parentElement: El | null; matches(s: string): boolean };
    const all = (document as unknown as { querySelectorAll(s: string): Iterable<El> })
      .querySelectorAll(".transcript details");
    const call = [...all].find((d) => d.__mark === 9);
    let fold = call?.parentElement;
    while (fold && !fold.matches("details.compacted")) fold = fold.parentElement;
    return { found: call !== undefined, open: call?.open, inFold: fold !== null, foldOpen: fold?.open };
  });
  assert.deepEqual(where, { found: true, open: true, inFold: true, foldOpen: false });
  assert.deepEqual(outside, []);
});

Deno.test({
  name: "console in Chromium: sign in, a run appears and finishes live, its transcript and waterfall",
  ignore: !chromium,
}, async () => {
  await using fx = await fixture();
  const { page, requests, outside } = await watchedPage(fx.browser, fx.server.url);
  await signIn(page, fx);
  const cookies = await page.cookies();
  const session = cookies.find((c) => c.name === "hermes_console");
  assert.ok(session, "signed in with a session cookie");
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, "Strict");
  assert.equal(
    await page.evaluate(() => document.cookie.includes("hermes_console=")),
    false,
    "no script reads it",
  );

  // Submitted after the page loaded: the list shows it, then its end, without a reload.
  const marker = await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 42));
  const id = await fx.submit("tool");
  await page.waitForSelector(`tr[data-run="${id}"]`, { timeout: 30_000 });
  await page.waitForFunction(
    (runId: string) =>
      document.querySelector(`tr[data-run="${runId}"] .status`)?.textContent?.includes("success"),
    { timeout: 60_000, polling: 250 },
    id,
  );
  assert.equal(
    await page.evaluate(() => (window as unknown as { __marker: number }).__marker),
    marker,
    "no reload",
  );
  assert.match(await statusOf(page, id), /✓\s+success/);
  // Driven by the server's event stream: one stream opened, no fragment polled.
  const paths = requests.map((url) => new URL(url).pathname);
  assert.equal(paths.filter((path) => path === "/runs/stream").length, 1, paths.join(" "));
  assert.deepEqual(paths.filter((path) => path === "/runs/rows" || path.endsWith("/live")), [], "no polling");
  const row = await page.$eval(`tr[data-run="${id}"]`, (el) => el.textContent ?? "");
  assert.match(row, /tool/);
  assert.match(row, /api/, "the trigger");
  assert.match(row, /\d+\.\d s\s*\d+\s*—/, "duration, tokens and (for a model without a price) no cost");
  await page.screenshot({ path: `${ARTIFACTS}/runs.png`, fullPage: true });

  // Keyboard: the first Tab stop skips to the content; links are reachable.
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");

  // A run arriving above the one a reader has focused does not hand its row to the newcomer: the focus stays
  // on the same link, which still leads to the same run.
  await page.focus(`tr[data-run="${id}"] a`);
  await page.evaluate(() => {
    (document.activeElement as unknown as { __mark: number }).__mark = 5;
  });
  const next = await fx.submit("tool");
  await page.waitForSelector(`tr[data-run="${next}"]`, { timeout: 30_000 });
  assert.deepEqual(
    await page.evaluate(() => {
      const link = document.activeElement as unknown as { __mark?: number; getAttribute(n: string): string };
      return { mark: link.__mark, href: link.getAttribute("href") };
    }),
    { mark: 5, href: `/runs/${id}` },
  );

  await Promise.all([page.waitForNavigation(), page.click(`tr[data-run="${id}"] a`)]);
  assert.equal(new URL(page.url()).pathname, `/runs/${id}`);
  const summary = await page.$eval(".transcript details summary", (el) => el.textContent ?? "");
  assert.match(summary, /Tool call list_dir/);
  await page.click(".transcript details summary");
  const opened = await page.$eval(
    "details[open]",
    (el) => (el as unknown as { innerText: string }).innerText,
  );
  assert.match(opened, /Arguments\s+\{\s+"path": "\."\s+\}/);
  assert.match(opened, /Result\s+[\s\S]*tool\.yaml/, "the tool's output, folded under its call");
  assert.equal(
    await page.$$eval("svg.waterfall rect", (bars) => bars.length),
    3,
    "two model calls and a tool call",
  );
  assert.match(
    await page.$eval("main", (el) => (el as unknown as { innerText: string }).innerText),
    /"status": "success"/,
  );
  await page.screenshot({ path: `${ARTIFACTS}/run.png`, fullPage: true });
  assert.deepEqual(outside, []);
});

Deno.test({
  name: "console in Chromium: a hostile transcript is inert and redacted; the CSP refuses inline script",
  ignore: !chromium,
}, async () => {
  await using fx = await fixture();
  const id = await fx.submit("hostile");
  const { page, requests, outside } = await watchedPage(fx.browser, fx.server.url);
  await signIn(page, fx);
  await page.goto(`${fx.server.url}/runs/${id}`);
  await page.waitForFunction(() => document.body.innerText.includes("copied"), {
    timeout: 60_000,
    polling: 250,
  });
  await page.$$eval("details", (all) => all.forEach((d) => (d as unknown as { open: boolean }).open = true));
  const text = await page.$eval("main", (el) => (el as unknown as { innerText: string }).innerText);
  const html = await page.content();

  assert.match(text, /<script>window\.__pwned=2<\/script><img src=x onerror=/, "markup shows as text");
  assert.match(text, /\\x1b\]52;c;SGVsbG8=\\x07 copied/, "the OSC 52 escape shows as visible escapes");
  assert.ok(text.includes(HOSTILE_FILE), "a file name with markup in a tool result shows as text");
  assert.ok(text.includes(MARK), "the secret's placeholder");
  assert.ok(!html.includes(SECRET), "the secret is nowhere in the page");
  assert.ok(!html.includes("\x1b"), "no raw escape character reaches the page");
  const pwned = await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned);
  assert.equal(pwned, undefined, "no script of the transcript ran");
  assert.equal(
    await page.$$eval("main img, main script", (found) => found.length),
    0,
    "no element made of it",
  );
  await page.screenshot({ path: `${ARTIFACTS}/hostile.png`, fullPage: true });

  // Every request was the console's own: the page, its assets, its live fragment. An <img src=x> would
  // have asked for /runs/x.
  const origin = fx.server.url;
  const unexpected = requests.filter((url) => {
    const path = url.startsWith(origin) ? url.slice(origin.length) : url;
    return !/^\/(|signin(\?.*)?|runs(\?.*)?|runs\/stream(\?.*)?|runs\/[^/?]+(\/stream)?|assets\/(htmx\.min\.js|console\.js|console\.css)\?v=[\w.-]+)$/
      .test(path) || path === "/runs/x";
  });
  assert.deepEqual(unexpected, []);
  assert.deepEqual(outside, []);

  // The CSP is in force: an inline script put in the page by any means does not run, and is reported.
  await page.evaluate(() => {
    const script = document.createElement("script");
    script.textContent = "window.__inline = 1";
    document.body.append(script);
    const img = document.createElement("img");
    img.src = "http://evil.test/pixel.png";
    document.body.append(img);
  });
  await page.waitForFunction(
    () => (window as unknown as { __violations: string[] }).__violations.length >= 2,
    { timeout: 10_000 },
  );
  assert.equal(await page.evaluate(() => (window as unknown as { __inline?: number }).__inline), undefined);
  const violations = await page.evaluate(() =>
    (window as unknown as { __violations: string[] }).__violations
  );
  assert.ok(violations.some((v) => v.startsWith("script-src")), violations.join("; "));
  assert.ok(
    violations.some((v) => v.startsWith("img-src") && v.includes("evil.test")),
    violations.join("; "),
  );
  assert.deepEqual(outside, [], "the refused image was never requested");
});

Deno.test({
  name: "console in Chromium: cancel without the CSRF token is refused and changes nothing; with it, cancels",
  ignore: !chromium,
}, async () => {
  await using fx = await fixture();
  const id = await fx.submit("slow");
  const { page } = await watchedPage(fx.browser, fx.server.url);
  await signIn(page, fx);
  await page.goto(`${fx.server.url}/runs/${id}`);
  await page.waitForFunction(() => document.querySelector("h1 .status")?.textContent?.includes("running"), {
    timeout: 30_000,
    polling: 250,
  });

  // The form as a forged one would be: no token of this session. A copy outside the page's live parts, so
  // that a live update cannot put a fresh form with a valid token in its place before the click.
  await page.$eval("form[action$='/cancel']", (form) => {
    const forged = form.cloneNode(true) as unknown as {
      id: string;
      querySelector(selector: string): { value: string };
    };
    forged.id = "forged";
    forged.querySelector("input[name=_csrf]").value = "f".repeat(64);
    (form as unknown as { ownerDocument: { body: { append(node: unknown): void } } }).ownerDocument.body
      .append(forged);
  });
  const [refused] = await Promise.all([
    page.waitForNavigation(),
    page.click("#forged button"),
  ]);
  assert.equal(refused?.status(), 403);
  assert.match(
    await page.$eval("main", (el) => (el as unknown as { innerText: string }).innerText),
    /no valid CSRF token/,
  );
  await page.screenshot({ path: `${ARTIFACTS}/csrf.png` });
  const still = await call(`${fx.server.url}/v1/runs/${id}`, { token: fx.token });
  assert.equal(still.body.status, "running");
  assert.equal(still.body.cancel_requested, false);

  await page.goto(`${fx.server.url}/runs/${id}`);
  await Promise.all([page.waitForNavigation(), page.click("form[action$='/cancel'] button")]);
  await page.waitForFunction(() => document.querySelector("h1 .status")?.textContent?.includes("cancelled"), {
    timeout: 30_000,
    polling: 250,
  });
  const after = await call(`${fx.server.url}/v1/runs/${id}`, { token: fx.token });
  assert.equal(after.body.status, "cancelled");
});

Deno.test({
  name: "console in Chromium: a subagent's transcript is nested under the delegate call that started it",
  ignore: !chromium,
}, async () => {
  await using fx = await fixture();
  const id = await fx.submit("lead");
  const { page, outside } = await watchedPage(fx.browser, fx.server.url);
  await signIn(page, fx);
  await page.goto(`${fx.server.url}/runs/${id}`);
  await page.waitForFunction(() => document.querySelector("h1 .status")?.textContent?.includes("success"), {
    timeout: 60_000,
    polling: 250,
  });
  const summary = await page.$eval(".transcript details summary", (el) => el.textContent ?? "");
  assert.match(summary, /Tool call delegate · subagent worker/);
  await page.click(".transcript details summary");
  const nested = await page.$eval(
    ".transcript details[open] .subagent",
    (el) => (el as unknown as { innerText: string }).innerText,
  );
  assert.match(nested, /Subagent worker, session \S+/);
  const facts = await page.$eval("dl.facts", (el) => (el as unknown as { innerText: string }).innerText);
  assert.match(facts, /Tokens\s+\d+ in, \d+ out \(\d+ in, \d+ out with its subagents\)/);
  assert.match(nested, /do half/, "the task the lead gave");
  assert.match(nested, /worker says: <b>half<\/b> done/, "the worker's answer, as text");
  assert.equal(await page.$$eval(".transcript b", (found) => found.length), 0);
  const timing = await page.$$eval("svg.waterfall text", (texts) => texts.map((t) => t.textContent ?? ""));
  assert.ok(
    timing.some((t) => t.startsWith("↳ model call")),
    `the worker's model call in the waterfall: ${timing}`,
  );
  await page.screenshot({ path: `${ARTIFACTS}/subagent.png`, fullPage: true });
  assert.deepEqual(outside, []);
});

Deno.test({
  name: "console in Chromium: messages a compaction replaced are folded and marked, its summary marked",
  ignore: !chromium,
}, async () => {
  await using fx = await fixture();
  const id = await fx.submit("compact");
  const { page, outside } = await watchedPage(fx.browser, fx.server.url);
  await signIn(page, fx);
  await page.goto(`${fx.server.url}/runs/${id}`);
  await page.waitForFunction(() => document.querySelector("h1 .status")?.textContent?.includes("success"), {
    timeout: 60_000,
    polling: 250,
  });
  const folded = await page.$eval(".transcript details.compacted summary", (el) => el.textContent ?? "");
  assert.match(folded, /── 11 messages removed by a compaction \(kept in the store\) ──/);
  const text = await page.$eval(".transcript", (el) => (el as unknown as { innerText: string }).innerText);
  assert.match(text, /Compaction summary: what the model saw instead/);
  assert.match(text, /assistant · summary[\s\S]*## Progress\s+counted to six/);
  assert.doesNotMatch(text, /answer3 answer3/, "the replaced messages stay folded");
  await page.click(".transcript details.compacted summary");
  assert.match(
    await page.$eval(
      ".transcript details.compacted",
      (el) => (el as unknown as { innerText: string }).innerText,
    ),
    /removed by compaction[\s\S]*answer3 answer3/,
  );
  await page.screenshot({ path: `${ARTIFACTS}/compaction.png`, fullPage: true });
  assert.deepEqual(outside, []);
});
