/**
 * Slow clients are dropped by a real `hermes serve`, through raw sockets: a connection that sends nothing,
 * and one that sends its headers a byte at a time, are closed after --header-timeout without an answer; a
 * connection idle after its response is closed after --idle-timeout. Their neighbours are served: a head
 * sent in pieces within the timeout is answered, requests on one kept-alive connection are answered in turn
 * (after chunked and sized bodies, split across reads or sharing one),
 * and a response that takes longer than both timeouts (an event stream of a slow run) is not cut.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { call, readSse, type ServeProcess, startServe } from "../_testing/serve.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

async function connect(server: ServeProcess): Promise<Deno.TcpConn> {
  const { hostname, port } = new URL(server.url);
  return await Deno.connect({ hostname, port: Number(port) });
}

/** Everything the server sends until it closes the connection (or `until` is seen). */
async function readUntilClosed(conn: Deno.Conn, until?: string): Promise<{ text: string; closed: boolean }> {
  const buffer = new Uint8Array(4096);
  let text = "";
  for (;;) {
    let n: number | null;
    try {
      n = await conn.read(buffer);
    } catch {
      return { text, closed: true };
    }
    if (n === null) return { text, closed: true };
    text += new TextDecoder().decode(buffer.subarray(0, n));
    if (until !== undefined && text.includes(until)) return { text, closed: false };
  }
}

const write = (conn: Deno.Conn, text: string) => conn.write(new TextEncoder().encode(text));

Deno.test("serve timeouts: silent and byte-by-byte clients are dropped; an idle kept-alive connection is closed", async () => {
  const home = await tempDir();
  await using server = await startServe(home, ["--header-timeout", "1s", "--idle-timeout", "1s"]);
  const host = new URL(server.url).host;
  try {
    const silent = await connect(server);
    const dripping = await connect(server);
    const head = `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Padding: ${"x".repeat(200)}\r\n\r\n`;
    let dripped = 0;
    const drip = (async () => {
      // One byte every 50 ms: the head would take 13 s; the server drops it after 1 s.
      for (const byte of head) {
        try {
          await write(dripping, byte);
        } catch {
          return;
        }
        dripped++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    assert.equal((await call(`${server.url}/healthz`)).status, 200, "slow clients block no one");
    const [quiet, slow] = await Promise.all([readUntilClosed(silent), readUntilClosed(dripping)]);
    assert.deepEqual(quiet, { text: "", closed: true });
    assert.deepEqual(slow, { text: "", closed: true }, "dropped without an answer");
    await drip;
    assert.ok(dripped < head.length, "the head was never complete");
    silent.close();
    dripping.close();

    // A head in two pieces within the timeout, then a second request on the same connection: both answered;
    // then the connection sits idle and is closed.
    const kept = await connect(server);
    await write(kept, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n`);
    await new Promise((r) => setTimeout(r, 300));
    await write(kept, "\r\n");
    const first = await readUntilClosed(kept, '"status":"ok"');
    assert.match(first.text, /^HTTP\/1\.1 200 /);
    await write(kept, `GET /readyz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const second = await readUntilClosed(kept, '"status":"ready"');
    assert.match(second.text, /^HTTP\/1\.1 200 /);
    const idle = await readUntilClosed(kept);
    assert.deepEqual(idle, { text: "", closed: true });
    kept.close();
    assert.equal(await server.stop(), 0, server.stderr());
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve timeouts: a response longer than both timeouts (a slow run's event stream) is not cut", async () => {
  const model = await startOpenAIServer({ script: [{ match: "slow", delay: "2500ms", content: "late" }] });
  const home = await tempDir();
  try {
    const jobs = await writeFiles(`${home}/jobs`, {
      "greet.yaml": `name: greet\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\n` +
        `inputs: { what: { required: true } }\nprompt: "{{ inputs.what }}"\n`,
    });
    const made = await hermes(["tokens", "create", "--scope", "admin"], { home });
    const admin = made.stdout.trim();
    await using server = await startServe(
      home,
      ["--jobs", jobs, "--header-timeout", "1s", "--idle-timeout", "1s", "--ping", "10m"],
      { cwd: home },
    );
    const run = await call(`${server.url}/v1/runs`, {
      token: admin,
      body: { job: "greet", inputs: { what: "slow" } },
    });
    const stream = await readSse(`${server.url}/v1/runs/${run.body.id}/events`, { token: admin });
    assert.equal(stream.events.at(-1)!.event, "result");
    assert.equal(JSON.parse(stream.events.at(-1)!.data).final, "late");
    assert.equal(await server.stop(), 0, server.stderr());
  } finally {
    await model.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("serve timeouts: chunked and sized bodies are followed to the next request on the same connection", async () => {
  const home = await tempDir();
  const made = await hermes(["tokens", "create", "--scope", "sessions:write"], { home });
  const writer = made.stdout.trim();
  await using server = await startServe(home, ["--header-timeout", "5s", "--idle-timeout", "5s"]);
  const host = new URL(server.url).host;
  const conn = await connect(server);
  try {
    const body = '{"text": "hello there"}';
    const chunked =
      `POST /v1/sessions/none/prompt HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${writer}\r\n` +
      `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
      `5;ext=1\r\n${body.slice(0, 5)}\r\n${(body.length - 5).toString(16)}\r\n${
        body.slice(5)
      }\r\n0\r\nX-Trailer: t\r\n\r\n`;
    // Sent in small pieces, so chunk sizes, data and trailers are split across reads.
    for (let i = 0; i < chunked.length; i += 7) await write(conn, chunked.slice(i, i + 7));
    const first = await readUntilClosed(conn, "no such session");
    assert.match(first.text, /^HTTP\/1\.1 404 /, first.text);
    const sized =
      `POST /v1/sessions/none/prompt HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${writer}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    // A sized body and the next request in one write: both answered, in order.
    await write(conn, sized + `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const rest = await readUntilClosed(conn, '"status":"ok"');
    assert.match(rest.text, /^HTTP\/1\.1 404 [\s\S]*HTTP\/1\.1 200 /);
  } finally {
    conn.close();
  }
  assert.equal(await server.stop(), 0, server.stderr());
  await Deno.remove(home, { recursive: true });
});
