/**
 * `hermes serve` under the requests of a hostile client, over real HTTP (and raw TCP where fetch cannot send
 * the bytes): every form of Authorization header, a token of each scope on every route of the OpenAPI
 * document it serves, bodies that are not UTF-8, unknown filter values, request heads with bare LF line
 * endings or over the size limit, bodies over the limit on the console's forms, and webhook deliveries
 * replayed, forged or carrying template syntax. Each refusal is a
 * problem+json, its allowed neighbour passes, and the server keeps serving.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { call, readSse, type Reply, startServe } from "../_testing/serve.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import { selfSigned } from "../_testing/tls.ts";

const SCOPES = ["runs:read", "runs:write", "sessions:read", "sessions:write", "approvals"] as const;

async function token(home: string, ...scopes: string[]): Promise<string> {
  const made = await hermes(["tokens", "create", ...scopes.flatMap((s) => ["--scope", s])], { home });
  assert.equal(made.code, 0, made.stderr);
  return made.stdout.trim();
}

function assertProblem(reply: Reply, status: number, detail?: RegExp): void {
  assert.equal(reply.status, status, JSON.stringify(reply.body));
  assert.equal(reply.headers.get("content-type"), "application/problem+json");
  assert.equal(reply.body.status, status);
  if (detail) assert.match(reply.body.detail, detail);
  assert.doesNotMatch(JSON.stringify(reply.body), /internal error|\bat .*\.ts:\d+/i);
}

/** Whether `text` holds a whole response, sized or chunked (the server may keep the connection). */
function complete(text: string): boolean {
  const end = text.indexOf("\r\n\r\n");
  if (end !== -1 && /\r\ntransfer-encoding: chunked/i.test(text.slice(0, end))) {
    return text.endsWith("\r\n0\r\n\r\n");
  }
  const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, end))?.[1];
  return end !== -1 && length !== undefined &&
    new TextEncoder().encode(text.slice(end + 4)).length >= Number(length);
}

/** One request as raw bytes over TCP; the answer as text (once whole, when the server closes, or after `ms`). */
async function raw(url: string, request: Uint8Array | string, ms = 10_000): Promise<string> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  try {
    const bytes = typeof request === "string" ? new TextEncoder().encode(request) : request;
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(64 * 1024);
    const timer = setTimeout(() => conn.close(), ms);
    try {
      for (;;) {
        const n = await conn.read(buffer).catch(() => null);
        if (n === null) break;
        chunks.push(buffer.slice(0, n));
        if (complete(new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c]))))) break;
      }
    } finally {
      clearTimeout(timer);
    }
    return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  } finally {
    try {
      conn.close();
    } catch { /* closed by the timer or the server */ }
  }
}

Deno.test("serve hostile: every Authorization form but one bearer token is 401; each scope is refused (403) on every route of another scope in /v1/openapi.json, allowed on its own", async () => {
  const home = await tempDir();
  try {
    const tokens = Object.fromEntries(await Promise.all(SCOPES.map(async (s) => [s, await token(home, s)])));
    const revoked = await token(home, "runs:read");
    const revokedId = /^hermes_([0-9a-f]{16})_/.exec(revoked)![1]!;
    assert.equal((await hermes(["tokens", "revoke", revokedId], { home })).code, 0);
    await using server = await startServe(home);
    const runs = `${server.url}/v1/runs`;
    const reader = tokens["runs:read"]!;
    const writer = tokens["runs:write"]!;

    const refused: [string, Record<string, string>, string?][] = [
      ["no header", {}],
      ["an empty header", { authorization: "" }],
      ["the scheme alone", { authorization: "Bearer" }],
      ["the scheme and spaces", { authorization: "Bearer    " }],
      ["Basic", { authorization: `Basic ${btoa(`x:${reader}`)}` }],
      ["no scheme", { authorization: reader }],
      ["two tokens", { authorization: `Bearer ${reader} ${writer}` }],
      ["two schemes", { authorization: `Bearer ${reader}, Bearer ${writer}` }],
      ["a truncated token", { authorization: `Bearer ${reader.slice(0, -1)}` }],
      ["a token with a NUL", { authorization: `Bearer ${reader}\u0000` }],
      ["a revoked token", { authorization: `Bearer ${revoked}` }],
      ["a token in the query", {}, `?access_token=${reader}`],
      ["a token in a cookie", { cookie: `token=${reader}` }],
    ];
    for (const [what, headers, query] of refused) {
      let reply: Reply;
      try {
        reply = await call(runs + (query ?? ""), { headers });
      } catch {
        continue; // fetch itself refuses a header it cannot send (a NUL): the server never sees it
      }
      assertProblem(reply, 401);
      assert.match(reply.headers.get("www-authenticate") ?? "", /^Bearer realm="hermes"/, what);
    }
    // The allowed neighbours: the scheme is case-insensitive and spaces around the token do not matter.
    for (const header of [`Bearer ${reader}`, `bearer ${reader}`, `BEARER   ${reader}  `]) {
      assert.equal((await call(runs, { headers: { authorization: header } })).status, 200, header);
    }

    // Every operation of the document the server serves, with a token of every other scope: 403 before the
    // route reads anything; with its own scope, the request gets past the check (whatever the route says then).
    const doc = (await call(`${server.url}/v1/openapi.json`)).body as {
      paths: Record<string, Record<string, { security?: { bearer?: string[] }[] }>>;
    };
    let checked = 0;
    for (const [template, operations] of Object.entries(doc.paths)) {
      const path = template.replace(/\{[^}]+\}/g, "nope");
      for (const [method, operation] of Object.entries(operations)) {
        const needs = operation.security?.[0]?.bearer?.[0];
        if (needs === undefined) continue; // public (health, the document) or signed (hooks)
        assert.ok((SCOPES as readonly string[]).includes(needs), `${method} ${template}: scope ${needs}`);
        const send = (token: string) =>
          call(`${server.url}${path}`, {
            method: method.toUpperCase(),
            token,
            ...(method === "post" ? { body: {} } : {}),
          });
        for (const other of SCOPES.filter((s) => s !== needs)) {
          const reply = await send(tokens[other]!);
          assertProblem(reply, 403, new RegExp(`lacks the scope ${needs}`));
        }
        const own = await send(tokens[needs]!);
        assert.ok(![401, 403].includes(own.status), `${method} ${template}: ${JSON.stringify(own.body)}`);
        if (!(template.endsWith("/events") && own.status === 200)) {
          assert.notEqual(own.status, 500, `${method} ${template}: ${JSON.stringify(own.body)}`);
        }
        checked++;
      }
    }
    assert.ok(checked >= 10, `only ${checked} scoped operations in the document`);
    // Answers quoting what the client sent are never sniffed as HTML, and no cache keeps a token's view; the
    // event stream keeps its own cache-control.
    const quoted = await call(`${server.url}/v1/runs/${encodeURIComponent("<script>alert(1)</script>")}`, {
      token: reader,
    });
    assertProblem(quoted, 404);
    assert.equal(quoted.headers.get("x-content-type-options"), "nosniff");
    assert.equal(quoted.headers.get("cache-control"), "no-store");
    const listed = await call(runs, { token: reader });
    assert.equal(listed.status, 200);
    assert.equal(listed.headers.get("x-content-type-options"), "nosniff");
    assert.equal(listed.headers.get("cache-control"), "no-store");
    assert.equal((await call(`${server.url}/metrics`)).headers.get("x-content-type-options"), "nosniff");
    assert.equal((await call(`${server.url}/healthz`)).status, 200);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve hostile: bodies not in UTF-8, unknown filter values, Last-Event-IDs past any seq, heads with bare LF or over the limit and oversized console forms are refused as problem+json; their neighbours pass", async () => {
  const home = await tempDir();
  try {
    const jobs = await writeFiles(`${home}/jobs`, {
      "plain.yaml":
        `name: plain\nmodel: { name: m, base_url: "http://127.0.0.1:9/v1", api_key_env: none }\n` +
        `prompt: hello\n`,
    });
    const admin = await token(home, "admin");
    await using server = await startServe(home, ["--jobs", jobs, "--no-worker"]);
    const runs = `${server.url}/v1/runs`;

    // JSON is UTF-8: other bytes are refused, not read as U+FFFD.
    const latin1 = new Uint8Array([
      ...new TextEncoder().encode('{"job":"pl'),
      0xe4,
      ...new TextEncoder().encode('in"}'),
    ]);
    const notUtf8 = await fetch(runs, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: latin1,
    });
    assertProblem(
      { status: notUtf8.status, headers: notUtf8.headers, body: await notUtf8.json() },
      400,
      /UTF-8/,
    );
    const queued = await call(runs, { token: admin, body: { job: "plain", key: "k-\u00e4" } });
    assert.equal(queued.status, 202, JSON.stringify(queued.body));

    // A status no run has is a typo to report, not an empty list.
    assertProblem(await call(`${runs}?status=sucess`, { token: admin }), 400, /query\.status/);
    const listed = await call(`${runs}?status=queued`, { token: admin });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.runs.map((r: { id: string }) => r.id), [queued.body.id]);

    // Last-Event-ID past any seq a store holds (PostgreSQL's bigint would refuse it mid-stream): 400 before the
    // stream opens; a seq past the run's last event is a stream that waits for more.
    const events = `${runs}/${queued.body.id}/events`;
    for (const id of ["99999999999999999999", "9007199254740993", "-1", "1e3", "0x10"]) {
      const refused = await readSse(events, { token: admin, lastEventId: id });
      assert.equal(refused.status, 400, id);
      assert.match(JSON.stringify(refused.body), /is not an event's seq/);
    }
    const waiting = await fetch(events, {
      headers: { authorization: `Bearer ${admin}`, "last-event-id": "9007199254740991" },
    });
    assert.equal(waiting.status, 200);
    assert.equal(waiting.headers.get("content-type"), "text/event-stream");
    assert.equal(waiting.headers.get("cache-control"), "no-cache");
    await waiting.body?.cancel();

    // A head with bare LF line endings (the guard and the server would frame it differently): 400, and a
    // connection header smuggled in it reaches nothing. The same head with CRLF is answered.
    const bareLf = await raw(
      server.url,
      "GET /healthz HTTP/1.1\nHost: x\nX-Hermes-Connection: forged\n\n",
    );
    assert.match(bareLf, /^HTTP\/1\.1 400 /);
    assert.match(bareLf, /content-type: application\/problem\+json/i);
    assert.match(bareLf, /bare LF/);
    const crlf = await raw(server.url, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert.match(crlf, /^HTTP\/1\.1 200 /);
    assert.match(crlf, /"status":"ok"/);

    // A head over 64 KiB is 431 problem+json (not a bare 400 or a dropped connection); 60 KB passes.
    const big = await raw(
      server.url,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${"a".repeat(70_000)}\r\n\r\n`,
    );
    assert.match(big, /^HTTP\/1\.1 431 /);
    assert.match(big, /application\/problem\+json/);
    const longUrl = await raw(server.url, `GET /v1/runs/${"a".repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(longUrl, /^HTTP\/1\.1 431 /);
    const fits = await call(`${server.url}/healthz`, { headers: { "x-pad": "a".repeat(60_000) } });
    assert.equal(fits.status, 200);

    // The console's forms are bounded like the API's bodies: an unauthenticated sign-in of 2 MiB is 413
    // before it is read; a small stale one is the form's own refusal.
    const form = (size: number) =>
      call(`${server.url}/signin`, {
        method: "POST",
        body: `token=${"a".repeat(size)}`,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
    assertProblem(await form(2 * 1024 * 1024), 413);
    const stale = await form(10);
    assert.equal(stale.status, 403);
    assert.match(stale.body, /stale or came from another site/);

    assert.equal((await call(`${server.url}/healthz`)).status, 200);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve hostile: a captured GitHub delivery sent again under a new delivery id, as another event or after a restart answers its run and starts none; sha1-only and malformed signatures are 401; template syntax in the body stays text", async () => {
  const model = await startOpenAIServer({
    script: [{ content: "one" }, { content: "two" }, { content: "three" }],
  });
  const home = await tempDir();
  try {
    const line = `model: { name: m, base_url: "${model.url}", api_key_env: none }\n`;
    const jobs = await writeFiles(`${home}/jobs`, {
      "triage.yaml": `name: triage\n${line}inputs: { title: { required: true } }\n` +
        `prompt: "triage: {{ inputs.title }}"\n` +
        `triggers: { webhook: { secret_env: HOOK_SECRET, events: [issues, issue_comment], ` +
        `inputs: { title: "{{ trigger.body.issue.title }}" } } }\n`,
    });
    const reader = await token(home, "runs:read");
    const env = { HOOK_SECRET: "the-hook-secret" };
    const sign = (text: string, algorithm = "sha256") =>
      `${algorithm}=${createHmac(algorithm, env.HOOK_SECRET).update(text).digest("hex")}`;
    // Template syntax in the delivery: rendered once into an input, never evaluated again.
    const body = JSON.stringify({ issue: { title: "{{ env.HOOK_SECRET }} {{ inputs.title }}" } });
    const send = (url: string, text: string, headers: Record<string, string>) =>
      call(`${url}/v1/hooks/triage`, {
        method: "POST",
        body: text,
        headers: { "content-type": "application/json", "x-github-event": "issues", ...headers },
      });

    let first: Reply;
    {
      await using server = await startServe(home, ["--jobs", jobs], { env });
      first = await send(server.url, body, { "x-github-delivery": "d-1", "x-hub-signature-256": sign(body) });
      assert.equal(first.status, 202, JSON.stringify(first.body));
      assert.equal(first.body.deduplicated, false);
      const ended = await readSse(`${server.url}/v1/runs/${first.body.id}/events`, { token: reader });
      assert.equal(JSON.parse(ended.events.at(-1)!.data).status, "success");
      const prompt = JSON.stringify(model.requests[0]);
      assert.ok(prompt.includes("triage: {{ env.HOOK_SECRET }} {{ inputs.title }}"), prompt);
      assert.ok(!prompt.includes(env.HOOK_SECRET), "the secret was not rendered into the prompt");

      // The same signed body under new delivery ids, as another listed event, without an id: the first run.
      for (
        const headers of [
          { "x-github-delivery": "d-2" },
          { "x-github-delivery": "d-3", "x-github-event": "issue_comment" },
          {},
        ]
      ) {
        const again = await send(server.url, body, { ...headers, "x-hub-signature-256": sign(body) });
        assert.equal(again.status, 202, JSON.stringify(again.body));
        assert.equal(again.body.id, first.body.id, JSON.stringify(headers));
        assert.equal(again.body.deduplicated, true);
      }

      // Signatures that are not GitHub's sha256 over this body: each 401 problem+json.
      const forged: Record<string, string>[] = [
        { "x-hub-signature": sign(body, "sha1") },
        { "x-hub-signature-256": sign(body).replace("sha256=", "sha1=") },
        { "x-hub-signature-256": sign(body).slice(0, -2) },
        { "x-hub-signature-256": `${sign(body)}00` },
        { "x-hub-signature-256": sign(body).replace("sha256=", "") },
        { "x-hub-signature-256": sign(`${body} `) },
        { "x-hub-signature-256": `sha256=${"0".repeat(64)}` },
        { "x-hub-signature-256": `${sign(body)}, ${sign(body)}` },
      ];
      for (const headers of forged) {
        const refused = await send(server.url, body, { "x-github-delivery": "d-9", ...headers });
        assertProblem(refused, 401);
      }
      // A body of another content type, signed: 415, nothing queued.
      const typed = await call(`${server.url}/v1/hooks/triage`, {
        method: "POST",
        body,
        headers: {
          "content-type": "text/plain",
          "x-github-event": "issues",
          "x-hub-signature-256": sign(body),
        },
      });
      assertProblem(typed, 415);
      assert.equal((await call(`${server.url}/v1/runs`, { token: reader })).body.runs.length, 1);
    }

    // After a restart the key is in the store: the captured delivery still starts nothing; a new issue does.
    await using server = await startServe(home, ["--jobs", jobs], { env });
    const replay = await send(server.url, body, {
      "x-github-delivery": "d-4",
      "x-hub-signature-256": sign(body),
    });
    assert.equal(replay.body.id, first.body.id);
    assert.equal(replay.body.deduplicated, true);
    const other = JSON.stringify({ issue: { title: "another" } });
    const fresh = await send(server.url, other, {
      "x-github-delivery": "d-5",
      "x-hub-signature-256": sign(other),
    });
    assert.equal(fresh.status, 202, JSON.stringify(fresh.body));
    assert.notEqual(fresh.body.id, first.body.id);
    assert.equal(fresh.body.deduplicated, false);
    const ended = await readSse(`${server.url}/v1/runs/${fresh.body.id}/events`, { token: reader });
    assert.equal(JSON.parse(ended.events.at(-1)!.data).status, "success");
    assert.equal(model.requests.length, 2);
  } finally {
    await model.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve hostile: the console's cookie shows no token at rest, is HttpOnly and SameSite=Strict, and works; sign-in sends nowhere off the site; changes without CSRF are refused; pages carry a strict CSP and no-store", async () => {
  const home = await tempDir();
  try {
    const admin = await token(home, "admin");
    await using server = await startServe(home);
    const page = (path: string, init: RequestInit & { cookie?: string } = {}) =>
      fetch(`${server.url}${path}`, {
        ...init,
        redirect: "manual",
        headers: {
          ...(init.cookie ? { cookie: init.cookie } : {}),
          ...init.headers as Record<string, string>,
        },
      });
    const signIn = async (next: string) => {
      const form = await page("/signin");
      const html = await form.text();
      const nonce = /(hermes_console_signin=[^;]+)/.exec(form.headers.get("set-cookie") ?? "")![1]!;
      const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
      const reply = await page("/signin", {
        method: "POST",
        cookie: nonce,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: csrf, token: admin, next }),
      });
      await reply.body?.cancel();
      return reply;
    };

    const signed = await signIn("/runs");
    assert.equal(signed.status, 303);
    const setCookie = signed.headers.get("set-cookie") ?? "";
    const cookie = /^(hermes_console=[^;]+)/.exec(setCookie)![1]!;
    assert.match(setCookie, /HttpOnly/i);
    assert.match(setCookie, /SameSite=Strict/i);
    const secret = /^hermes_[0-9a-f]{16}_(.+)$/.exec(admin)![1]!; // its own base64url may hold "_"
    const encodings = [admin, secret, btoa(admin), btoa(admin).replace(/\+/g, "-").replace(/\//g, "_")];
    for (const form of encodings) {
      assert.ok(!cookie.includes(form.replace(/=+$/, "")), "the cookie shows the token");
    }
    // The allowed neighbour: the cookie signs the browser in.
    const runs = await page("/runs", { cookie });
    assert.equal(runs.status, 200);
    await runs.body?.cancel();
    const csp = runs.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-/);
    assert.equal(runs.headers.get("x-frame-options"), "DENY");
    assert.equal(runs.headers.get("cache-control"), "no-store");
    // A cookie whose sealed token was changed is no session, whatever else it keeps.
    const [sealed, ...rest] = cookie.slice("hermes_console=".length).split(".");
    const flipped = (sealed!.startsWith("A") ? "B" : "A") + sealed!.slice(1);
    const tampered = await page("/runs", { cookie: `hermes_console=${[flipped, ...rest].join(".")}` });
    assert.equal(tampered.status, 303);
    assert.match(tampered.headers.get("location") ?? "", /^\/signin/);
    await tampered.body?.cancel();

    // Sign-in's `next` leads only to a path of this site.
    for (
      const next of [
        "//evil.example",
        "/\\evil.example",
        "https://evil.example/",
        "/\t/evil.example",
        "javascript:alert(1)",
      ]
    ) {
      const away = await signIn(next);
      assert.equal(away.status, 303, next);
      assert.equal(away.headers.get("location"), "/runs", next);
    }
    assert.equal((await signIn("/schedules")).headers.get("location"), "/schedules");

    // A change without the session's CSRF token (what another site's form would send) changes nothing.
    for (const path of ["/runs/nope/cancel", "/approvals/nope", "/signout"]) {
      const refused = await page(path, {
        method: "POST",
        cookie,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "decision=allow&_csrf=forged",
      });
      assert.equal(refused.status, 403, path);
      await refused.body?.cancel();
    }
    const still = await page("/runs", { cookie });
    assert.equal(still.status, 200, "the forged sign-out did not sign out");
    await still.body?.cancel();
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve hostile: over --cert/--key the console's cookie is Secure and __Host-; over plain HTTP it is not", async () => {
  const home = await tempDir();
  try {
    const admin = await token(home, "runs:read");
    const { cert, key, ca } = await selfSigned(home);
    const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(ca)] });
    try {
      for (const tls of [true, false]) {
        await using server = await startServe(home, tls ? ["--cert", cert, "--key", key] : []);
        const get = (path: string, init: RequestInit = {}) =>
          fetch(`${server.url}${path}`, { ...init, redirect: "manual", ...(tls ? { client } : {}) });
        const form = await get("/signin");
        const html = await form.text();
        const nonce = /((?:__Host-)?hermes_console_signin=[^;]+)/.exec(
          form.headers.get("set-cookie") ?? "",
        )![1]!;
        const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
        const signed = await get("/signin", {
          method: "POST",
          headers: { cookie: nonce, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ _csrf: csrf, token: admin, next: "/runs" }),
        });
        await signed.body?.cancel();
        assert.equal(signed.status, 303, `tls ${tls}`);
        const setCookie = signed.headers.get("set-cookie") ?? "";
        if (tls) {
          assert.match(setCookie, /^__Host-hermes_console=/);
          assert.match(setCookie, /;\s*Secure/i);
          const cookie = /^([^;]+)/.exec(setCookie)![1]!;
          const runs = await get("/runs", { headers: { cookie } });
          assert.equal(runs.status, 200);
          await runs.body?.cancel();
        } else {
          assert.match(setCookie, /^hermes_console=/);
          assert.doesNotMatch(setCookie, /;\s*Secure/i);
        }
      }
    } finally {
      client.close();
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve hostile: markup sent through the API (inputs, labels, a key, an unknown run id) is shown as text on the console's pages", async () => {
  const home = await tempDir();
  try {
    const jobs = await writeFiles(`${home}/jobs`, {
      "plain.yaml":
        `name: plain\nmodel: { name: m, base_url: "http://127.0.0.1:9/v1", api_key_env: none }\n` +
        `inputs: { who: { required: true } }\nlabels: { who: "{{ inputs.who }}" }\nprompt: "hi {{ inputs.who }}"\n`,
    });
    const admin = await token(home, "admin");
    await using server = await startServe(home, ["--jobs", jobs, "--no-worker"]);
    const markup = `<script>alert(1)</script><img src=x onerror=alert(2)>"'><svg onload=alert(3)>`;
    const queued = await call(`${server.url}/v1/runs`, {
      token: admin,
      body: { job: "plain", inputs: { who: markup }, key: markup },
    });
    assert.equal(queued.status, 202, JSON.stringify(queued.body));
    assert.equal(queued.body.labels.who, markup);

    const get = (path: string, cookie?: string) =>
      fetch(`${server.url}${path}`, { redirect: "manual", headers: cookie ? { cookie } : {} });
    const form = await get("/signin");
    const nonce = /(hermes_console_signin=[^;]+)/.exec(form.headers.get("set-cookie") ?? "")![1]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const signed = await fetch(`${server.url}/signin`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: nonce, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, token: admin, next: "/runs" }),
    });
    await signed.body?.cancel();
    const cookie = /^(hermes_console=[^;]+)/.exec(signed.headers.get("set-cookie") ?? "")![1]!;
    const pages = [
      "/runs",
      `/runs/${queued.body.id}`,
      `/runs?label=${encodeURIComponent(`who=${markup}`)}`,
      `/runs/${encodeURIComponent(markup)}`,
      `/signin?reason=${encodeURIComponent(markup)}`,
    ];
    for (const path of pages) {
      const reply = await get(path, cookie);
      const html = await reply.text();
      assert.ok([200, 400, 404].includes(reply.status), `${path}: ${reply.status}`);
      for (const live of ["<script>alert", "<img src=x", "<svg onload"]) {
        assert.ok(!html.includes(live), `${path} renders ${live} as markup`);
      }
    }
    // The allowed neighbour: the run's page shows the text itself (escaped), so it is read, not lost.
    const page = await (await get(`/runs/${queued.body.id}`, cookie)).text();
    assert.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve hostile: a console form trickled slower than --body-timeout is 408 problem+json; one sent whole is the form's own answer", async () => {
  const home = await tempDir();
  try {
    await using server = await startServe(home, ["--body-timeout", "1s"]);
    // 100 bytes announced, 10 sent, then nothing: the server answers 408 and closes (the helper waits 30 s).
    const slow = await raw(
      server.url,
      "POST /signin HTTP/1.1\r\nHost: x\r\ncontent-type: application/x-www-form-urlencoded\r\n" +
        "content-length: 100\r\n\r\ntoken=abcd",
      30_000,
    );
    assert.match(slow, /^HTTP\/1\.1 408 /);
    assert.match(slow, /application\/problem\+json/);
    const whole = await raw(
      server.url,
      "POST /signin HTTP/1.1\r\nHost: x\r\ncontent-type: application/x-www-form-urlencoded\r\n" +
        "content-length: 10\r\nconnection: close\r\n\r\ntoken=abcd",
    );
    assert.match(whole, /^HTTP\/1\.1 403 /);
    assert.match(whole, /stale or came from another site/);
    assert.equal((await call(`${server.url}/healthz`)).status, 200);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
