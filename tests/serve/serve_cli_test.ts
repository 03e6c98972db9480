/**
 * `hermes serve` as a real subprocess over HTTP: tokens from `hermes tokens` (401 without one, 401 for a
 * wrong or revoked one, 403 without the scope), problem+json errors (404, 413, 429 with Retry-After), health
 * and metrics, and the session routes against a session run on the scripted model.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { call, startServe } from "../_testing/serve.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

async function token(home: string, ...args: string[]): Promise<string> {
  const made = await hermes(["tokens", "create", ...args], { home });
  assert.equal(made.code, 0, made.stderr);
  return made.stdout.trim();
}

function assertProblem(
  response: { status: number; headers: Headers; body: Record<string, unknown> },
  status: number,
) {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.equal(response.headers.get("content-type"), "application/problem+json");
  assert.equal(response.body.status, status);
  assert.equal(typeof response.body.title, "string");
  assert.equal(typeof response.body.detail, "string");
}

Deno.test("serve: tokens guard every /v1 route: 401 without or with a wrong token, 403 without the scope, revoke holds at once", async () => {
  const home = await tempDir();
  const reader = await token(home, "--scope", "sessions:read", "--name", "reader");
  const runsOnly = await token(home, "--scope", "runs:read");
  const admin = await token(home, "--scope", "admin");
  assert.match(reader, /^hermes_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
  const listed = await hermes(["tokens", "list", "--json"], { home });
  const tokens = JSON.parse(listed.stdout) as { id: string; name: string | null; scopes: string[] }[];
  assert.deepEqual(tokens.map((t) => t.scopes), [["sessions:read"], ["runs:read"], ["admin"]]);
  assert.ok(!listed.stdout.includes(reader.slice(25)), "the list shows no secret");
  const db = await Deno.readFile(`${home}/state.db`);
  assert.ok(!new TextDecoder("latin1").decode(db).includes(reader), "the store keeps no token");

  await using server = await startServe(home);
  const health = await call(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  assert.equal(health.body.status, "ok");
  assert.equal((await call(`${server.url}/readyz`)).status, 200);

  const none = await call(`${server.url}/v1/sessions`);
  assertProblem(none, 401);
  assert.match(none.headers.get("www-authenticate")!, /^Bearer realm="hermes"/);
  const wrong = await call(`${server.url}/v1/sessions`, {
    token: reader.slice(0, -1) + (reader.endsWith("A") ? "B" : "A"),
  });
  assertProblem(wrong, 401);
  assert.match(wrong.headers.get("www-authenticate")!, /error="invalid_token"/);
  const forbidden = await call(`${server.url}/v1/sessions`, { token: runsOnly });
  assertProblem(forbidden, 403);
  assert.match(
    forbidden.headers.get("www-authenticate")!,
    /error="insufficient_scope", scope="sessions:read"/,
  );
  const allowed = await call(`${server.url}/v1/sessions`, { token: reader });
  assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  assert.deepEqual(allowed.body, { sessions: [] });
  assert.equal(
    (await call(`${server.url}/v1/sessions`, { token: admin })).status,
    200,
    "admin holds every scope",
  );

  assertProblem(await call(`${server.url}/v1/sessions/nope`, { token: reader }), 404);
  assertProblem(await call(`${server.url}/v1/nothing-here`, { token: reader }), 404);
  const writeWithReader = await call(`${server.url}/v1/sessions/nope/prompt`, {
    token: reader,
    body: { text: "hi" },
  });
  assertProblem(writeWithReader, 403);

  const revoked = await hermes(["tokens", "revoke", tokens[0]!.id], { home });
  assert.equal(revoked.code, 0, revoked.stderr);
  const after = await call(`${server.url}/v1/sessions`, { token: reader });
  assertProblem(after, 401);
  assert.match(after.body.detail, /revoked/);
  assert.equal((await call(`${server.url}/v1/sessions`, { token: admin })).status, 200);

  const metrics = await call(`${server.url}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(
    metrics.body,
    /hermes_http_requests_total\{method="GET",route="\/v1\/sessions",code="401"\} 3/,
  );
  assert.match(
    metrics.body,
    /hermes_http_requests_total\{method="GET",route="\/v1\/sessions",code="403"\} 1/,
  );
  assert.match(
    metrics.body,
    /hermes_http_requests_total\{method="GET",route="\/v1\/sessions",code="200"\} 3/,
  );
  assert.equal(await server.stop(), 0, server.stderr());
  await Deno.remove(home, { recursive: true });
});

Deno.test("serve: a body over --max-body is 413, requests over --rate-limit are 429 with Retry-After", async () => {
  const home = await tempDir();
  const writer = await token(home, "--scope", "sessions:write");
  const other = await token(home, "--scope", "sessions:read");
  await using server = await startServe(home, ["--max-body", "1KiB", "--rate-limit", "3"]);
  const big = await call(`${server.url}/v1/sessions/x/prompt`, {
    token: writer,
    body: { text: "x".repeat(2000) },
  });
  assertProblem(big, 413);
  const small = await call(`${server.url}/v1/sessions/x/prompt`, {
    token: writer,
    body: { text: "x".repeat(500) },
  });
  assertProblem(small, 404);
  const notJson = await call(`${server.url}/v1/sessions/x/prompt`, { token: writer, body: "{", headers: {} });
  assertProblem(notJson, 400);
  const missing = await call(`${server.url}/v1/sessions/x/prompt`, { token: writer, body: { prompt: "hi" } });
  assertProblem(missing, 400);
  assert.match(missing.body.detail, /^body/);
  // Three requests counted (the 413 was refused before its token was read); the fourth is over.
  const limited = await call(`${server.url}/v1/sessions`, { token: writer });
  assertProblem(limited, 429);
  assert.ok(Number(limited.headers.get("retry-after")) >= 1);
  assert.equal(
    (await call(`${server.url}/v1/sessions`, { token: other })).status,
    200,
    "another token has its own limit",
  );
  assert.equal(await server.stop(), 0);
  await Deno.remove(home, { recursive: true });
});

Deno.test("serve: a stored session is listed, shown, its messages read, and prompted over HTTP", async () => {
  const model = await startOpenAIServer({
    script: [{ content: "first answer" }, { content: "second answer" }],
  });
  const home = await writeFiles(await tempDir(), {
    "job.yaml":
      `name: chat\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\nprompt: hello\n`,
  });
  try {
    const ran = await hermes(["run", "job.yaml", "--output", "json"], { home, cwd: home });
    assert.equal(ran.code, 0, ran.stderr);
    const id = JSON.parse(ran.stdout).session_id as string;
    const reader = await token(home, "--scope", "sessions:read", "--scope", "sessions:write");
    await using server = await startServe(home, [], { cwd: home });
    const list = await call(`${server.url}/v1/sessions?job=chat`, { token: reader });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.sessions.map((s: { id: string }) => s.id), [id]);
    assertProblem(await call(`${server.url}/v1/sessions?limit=zero`, { token: reader }), 400);
    const shown = await call(`${server.url}/v1/sessions/${id.slice(0, 8)}`, { token: reader });
    assert.equal(shown.status, 200);
    assert.equal(shown.body.session.id, id);
    assert.equal(shown.body.session.status, "success");
    const messages = await call(`${server.url}/v1/sessions/${id}/messages`, { token: reader });
    assert.equal(messages.status, 200);
    assert.deepEqual(messages.body.messages.map((m: { content: string }) => m.content).slice(-2), [
      "hello",
      "first answer",
    ]);
    const prompted = await call(`${server.url}/v1/sessions/${id}/prompt`, {
      token: reader,
      body: { text: "again" },
    });
    assert.equal(prompted.status, 200, JSON.stringify(prompted.body));
    assert.equal(prompted.body.status, "success");
    assert.equal(prompted.body.session_id, id);
    assert.equal(prompted.body.final, "second answer");
    const again = await call(`${server.url}/v1/sessions/${id}/messages`, { token: reader });
    assert.deepEqual(again.body.messages.map((m: { content: string }) => m.content).slice(-2), [
      "again",
      "second answer",
    ]);
    assert.equal(await server.stop(), 0);
  } finally {
    await model.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve: a client that stalls mid-body gets 408 after --body-timeout; others are served meanwhile", async () => {
  const home = await tempDir();
  const writer = await token(home, "--scope", "sessions:write");
  await using server = await startServe(home, ["--body-timeout", "1s"]);
  const { hostname, port } = new URL(server.url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  try {
    const head =
      `POST /v1/sessions/x/prompt HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${writer}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text": "par`;
    await conn.write(new TextEncoder().encode(head));
    assert.equal((await call(`${server.url}/healthz`)).status, 200, "the stalled request blocks no one");
    const buffer = new Uint8Array(4096);
    let text = "";
    while (!text.includes("\r\n\r\n")) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    assert.match(text, /^HTTP\/1\.1 408 /);
    assert.match(text, /content-type: application\/problem\+json/i);
  } finally {
    conn.close();
  }
  assert.equal(await server.stop(), 0);
  await Deno.remove(home, { recursive: true });
});
