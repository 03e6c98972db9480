/**
 * The console's HTTP behaviour without a browser: requests answered by the API app with the console mounted,
 * over a real SQLite store. Sign-in (CSRF of the form, cookie flags, over HTTP and HTTPS), the security headers,
 * the runs list with its filters and keyset pages, cancel with and without the CSRF token or the scope, a
 * revoked token, and the API's own 404 beside the console's.
 */
import assert from "node:assert/strict";
import { App } from "../../app/mod.ts";
import { ManualClock } from "../../core/_testing.ts";
import { EventBus } from "../../core/events.ts";
import { silentLogger } from "../../core/log.ts";
import { openSqliteStore } from "../../store/sqlite/sqlite_store.ts";
import { createApi } from "../server.ts";
import { CONTENT_SECURITY_POLICY, createConsole } from "./mod.tsx";

const NOW = Date.UTC(2026, 11, 7, 12);

async function fixture() {
  const dir = await Deno.makeTempDir({ prefix: "hermes-console-" });
  const store = openSqliteStore(`${dir}/state.db`);
  const clock = new ManualClock(NOW);
  const app = new App({
    store,
    events: new EventBus(clock),
    clock,
    log: silentLogger,
    env: {},
    host: "test-host",
    config: undefined,
    cwd: dir,
    source: "http",
  });
  const web = createConsole({ app, clock, log: silentLogger, version: "test" });
  const api = createApi({ app, clock, log: silentLogger, version: "test", console: web });
  const origin = "http://console.test";
  const fetchPage = async (path: string, init: RequestInit & { cookie?: string; base?: string } = {}) => {
    const headers = new Headers(init.headers);
    if (init.cookie) headers.set("cookie", init.cookie);
    const response = await api.fetch(new Request(`${init.base ?? origin}${path}`, { ...init, headers }));
    return { response, text: await response.text() };
  };
  /** Signs in with `token` through the form, as a browser does; returns the session cookie. */
  const signIn = async (token: string, base = origin, next = "/runs") => {
    const form = await fetchPage("/signin", { base });
    const nonce = /hermes_console_signin=([0-9a-f]+)/.exec(
      form.response.headers.get("set-cookie") ?? "",
    )![1]!;
    const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(form.text)![1]!;
    const { response } = await fetchPage("/signin", {
      base,
      method: "POST",
      cookie: `hermes_console_signin=${nonce}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, token, next }),
    });
    return response;
  };
  const cookieOf = (response: Response) =>
    /^((?:__Host-)?hermes_console=[^;]+)/.exec(response.headers.get("set-cookie") ?? "")![1]!;
  return {
    store,
    app,
    clock,
    fetchPage,
    signIn,
    cookieOf,
    async [Symbol.asyncDispose]() {
      await app.close();
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function newRun(job: string, now: number, labels: Record<string, string> = {}) {
  return { job, job_path: null, job_snapshot: "{}", inputs: {}, labels, now, trigger: "api" as const };
}

Deno.test("console: pages need a session; sign-in takes a live token through a CSRF-bound form", async () => {
  await using fx = await fixture();
  const { token } = await fx.app.createToken({ scopes: ["runs:read"] });

  const anonymous = await fx.fetchPage("/runs?status=failed");
  assert.equal(anonymous.response.status, 303);
  assert.equal(anonymous.response.headers.get("location"), "/signin?next=%2Fruns%3Fstatus%3Dfailed");
  const polled = await fx.fetchPage("/runs/rows", { headers: { "hx-request": "true" } });
  assert.equal(polled.response.status, 401);
  assert.match(polled.response.headers.get("hx-redirect") ?? "", /^\/signin/);

  const form = await fx.fetchPage("/signin");
  assert.equal(form.response.status, 200);
  assert.equal(form.response.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY);
  assert.match(CONTENT_SECURITY_POLICY, /default-src 'self'/);
  assert.match(CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
  assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
  assert.equal(form.response.headers.get("x-content-type-options"), "nosniff");
  assert.doesNotMatch(
    form.text,
    /<script>|<style>| style=| on[a-z]+=/i,
    "no inline script, style or handler",
  );

  // A form posted without the nonce cookie (another site's page) signs nobody in.
  const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(form.text)![1]!;
  const forged = await fx.fetchPage("/signin", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, token }),
  });
  assert.equal(forged.response.status, 403);
  assert.equal(forged.response.headers.get("set-cookie")?.includes("hermes_console="), false);

  const wrong = await fx.signIn("hms_nope");
  assert.equal(wrong.status, 400);

  const signed = await fx.signIn(token);
  assert.equal(signed.status, 303);
  assert.equal(signed.headers.get("location"), "/runs");
  const setCookie = signed.headers.get("set-cookie") ?? "";
  assert.match(setCookie, /hermes_console=[^;]+;.*HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  assert.doesNotMatch(setCookie, /Secure/, "plain HTTP: not Secure (the browser would drop it)");
  const cookie = fx.cookieOf(signed);
  assert.doesNotMatch(cookie, new RegExp(token), "the cookie does not show the token in clear");
  const page = await fx.fetchPage("/runs", { cookie });
  assert.equal(page.response.status, 200);
  assert.match(page.text, /<h1>Runs<\/h1>/);

  // After signing in the browser goes back where it was, on this console only.
  assert.equal(
    (await fx.signIn(token, undefined, "/runs?status=failed")).headers.get("location"),
    "/runs?status=failed",
  );
  for (const elsewhere of ["//evil.test/x", "/\\evil.test", "https://evil.test/", "/signin?next=/x"]) {
    assert.equal((await fx.signIn(token, undefined, elsewhere)).headers.get("location"), "/runs", elsewhere);
  }

  // A cookie altered by one character is no session.
  const tampered = cookie.slice(0, -1) + (cookie.endsWith("0") ? "1" : "0");
  assert.equal((await fx.fetchPage("/runs", { cookie: tampered })).response.status, 303);

  // Over TLS the cookie is Secure and __Host- prefixed.
  const secure = await fx.signIn(token, "https://console.test");
  assert.match(secure.headers.get("set-cookie") ?? "", /^__Host-hermes_console=[^;]+;.*Secure/);
  const overTls = await fx.fetchPage("/runs", { base: "https://console.test", cookie: fx.cookieOf(secure) });
  assert.equal(overTls.response.status, 200);
});

Deno.test("console: a revoked token ends the session at once; a missing scope is 403", async () => {
  await using fx = await fixture();
  const reader = await fx.app.createToken({ scopes: ["sessions:read"] });
  const cookie = fx.cookieOf(await fx.signIn(reader.token));
  const denied = await fx.fetchPage("/runs", { cookie });
  assert.equal(denied.response.status, 403);
  assert.match(denied.text, /lacks the scope <code>runs:read<\/code>/);

  const runs = await fx.app.createToken({ scopes: ["runs:read"] });
  const session = fx.cookieOf(await fx.signIn(runs.token));
  assert.equal((await fx.fetchPage("/runs", { cookie: session })).response.status, 200);
  await fx.app.revokeToken(runs.info.id);
  const after = await fx.fetchPage("/runs", { cookie: session });
  assert.equal(after.response.status, 303);
  assert.match(after.response.headers.get("location") ?? "", /reason=the%20token%20is%20revoked/);
});

Deno.test("console: the runs list filters by status, job, label and time and pages by keyset", async () => {
  await using fx = await fixture();
  const { token } = await fx.app.createToken({ scopes: ["runs:read"] });
  const cookie = fx.cookieOf(await fx.signIn(token));
  for (let i = 0; i < 120; i++) {
    await fx.store.submitRun(
      newRun(i % 2 ? "odd" : "even", NOW - (120 - i) * 60_000, { team: i % 3 ? "x" : "y" }),
    );
  }
  const ids = (text: string) => [...text.matchAll(/data-run="([^"]+)"/g)].map((m) => m[1]!);
  const first = await fx.fetchPage("/runs", { cookie });
  assert.equal(ids(first.text).length, 50);
  assert.match(first.text, /data-live="\/runs\/stream"/, "the first page is live");
  const seen = new Set(ids(first.text));
  let next = /href="(\/runs\?before=[^"]+)" rel="next"/.exec(first.text)?.[1]?.replace(/&amp;/g, "&");
  let pages = 1;
  while (next) {
    const page = await fx.fetchPage(next, { cookie });
    assert.doesNotMatch(page.text, /data-live=/, "a later page is fixed history");
    for (const id of ids(page.text)) {
      assert.ok(!seen.has(id), `run ${id} on two pages`);
      seen.add(id);
    }
    pages++;
    next = /href="(\/runs\?before=[^"]+)" rel="next"/.exec(page.text)?.[1]?.replace(/&amp;/g, "&");
  }
  assert.equal(pages, 3);
  assert.equal(seen.size, 120);

  const odd = await fx.fetchPage("/runs?job=odd&label=team%3Dy", { cookie });
  assert.equal(ids(odd.text).length, 20);
  const hour = await fx.fetchPage("/runs?since=1h", { cookie });
  assert.equal(ids(hour.text).length, 50);
  const recent = await fx.fetchPage("/runs?since=1h&job=even", { cookie });
  assert.equal(ids(recent.text).length, 30);
  const bad = await fx.fetchPage("/runs?label=nolabel", { cookie });
  assert.equal(bad.response.status, 400);
  assert.match(bad.text, /label: &quot;nolabel&quot; is not KEY=VALUE/);
  const rows = await fx.fetchPage("/runs/rows?status=queued", { cookie });
  assert.match(rows.text, /^<tbody id="runs-rows"/);
  assert.match(rows.text, /◐|○/);
  assert.match(rows.text, /> queued</, "the status is a word, not only a colour");
});

Deno.test("console: cancel needs the session's CSRF token and runs:write", async () => {
  await using fx = await fixture();
  const { run } = await fx.store.submitRun(newRun("slow", NOW));
  const reader = await fx.app.createToken({ scopes: ["runs:read"] });
  const writer = await fx.app.createToken({ scopes: ["runs:read", "runs:write"] });

  const readOnly = fx.cookieOf(await fx.signIn(reader.token));
  const page = await fx.fetchPage(`/runs/${run.id}`, { cookie: readOnly });
  assert.equal(page.response.status, 200);
  assert.doesNotMatch(page.text, /Cancel run/, "no cancel button without runs:write");

  const cookie = fx.cookieOf(await fx.signIn(writer.token));
  const withButton = await fx.fetchPage(`/runs/${run.id}`, { cookie });
  assert.match(withButton.text, /Cancel run/);
  const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(withButton.text)![1]!;
  const post = (c: string, body: Record<string, string>) =>
    fx.fetchPage(`/runs/${run.id}/cancel`, {
      method: "POST",
      cookie: c,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body),
    });

  const without = await post(cookie, {});
  assert.equal(without.response.status, 403);
  assert.match(without.text, /no valid CSRF token/);
  const other = await post(cookie, { _csrf: "0".repeat(64) });
  assert.equal(other.response.status, 403);
  assert.equal((await fx.app.getRun(run.id)).status, "queued", "refused requests changed nothing");
  const noScope = await post(readOnly, { _csrf: csrf });
  assert.equal(noScope.response.status, 403);
  assert.equal((await fx.app.getRun(run.id)).status, "queued");

  const done = await post(cookie, { _csrf: csrf });
  assert.equal(done.response.status, 303);
  assert.equal(done.response.headers.get("location"), `/runs/${run.id}`);
  assert.equal((await fx.app.getRun(run.id)).status, "cancelled");
});

Deno.test("console: the API keeps its paths and its problem+json; assets are served from the program", async () => {
  await using fx = await fixture();
  const missingApi = await fx.fetchPage("/v1/nothing");
  assert.equal(missingApi.response.status, 404);
  assert.match(missingApi.response.headers.get("content-type") ?? "", /application\/problem\+json/);
  const health = await fx.fetchPage("/healthz");
  assert.equal(JSON.parse(health.text).status, "ok");
  const { token } = await fx.app.createToken({ scopes: ["runs:read"] });
  const cookie = fx.cookieOf(await fx.signIn(token));
  const missingPage = await fx.fetchPage("/nothing", { cookie });
  assert.equal(missingPage.response.status, 404);
  assert.match(missingPage.response.headers.get("content-type") ?? "", /text\/html/);
  const htmx = await fx.fetchPage("/assets/htmx.min.js");
  assert.equal(htmx.response.status, 200);
  assert.match(htmx.response.headers.get("content-type") ?? "", /text\/javascript/);
  assert.match(htmx.text, /htmx/);
  for (const name of ["uplot.min.js", "uplot.min.css", "console.css", "console.js"]) {
    assert.equal((await fx.fetchPage(`/assets/${name}`)).response.status, 200, name);
  }
  assert.equal((await fx.fetchPage("/assets/nope.js")).response.status, 404);
});
