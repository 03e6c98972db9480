import assert from "node:assert/strict";
import { type HttpFetchOptions, httpFetchTool } from "./http_fetch.ts";
import type { ToolContext } from "./tool.ts";
import { ValidationError } from "../core/errors.ts";
import { callTool } from "./_testing.ts";

const context = (signal = new AbortController().signal): ToolContext => ({
  session_id: "s",
  job_dir: "/",
  env: {},
  host_env: {},
  signal,
});

/** A local server with fixed routes; `requested` records every path it served; /slow waits for releaseSlow. */
function startServer() {
  const requested: string[] = [];
  const slow = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const url = new URL(request.url);
    requested.push(url.pathname);
    switch (url.pathname) {
      case "/hello":
        return new Response("hello world");
      case "/big":
        return new Response("y".repeat(5000));
      case "/missing":
        return new Response("no such thing", { status: 404 });
      case "/to-hello":
        return Response.redirect(new URL("/hello", url), 302);
      case "/to-relative":
        return new Response(null, { status: 301, headers: { location: "hello" } });
      case "/to-other-port":
        return Response.redirect(`http://127.0.0.1:${Number(url.port) + 1}/hello`, 307);
      case "/to-other-host":
        return Response.redirect(`http://localhost:${url.port}/hello`, 302);
      case "/loop":
        return Response.redirect(new URL("/loop", url), 302);
      case "/slow":
        await slow.promise;
        return new Response("late");
      default:
        return new Response("?", { status: 500 });
    }
  });
  return { server, port: server.addr.port, requested, releaseSlow: () => slow.resolve() };
}

function tool(port: number, options: Partial<HttpFetchOptions> = {}) {
  return httpFetchTool({
    hosts: [`127.0.0.1:${port}`],
    timeoutMs: 10_000,
    maxOutput: 1024,
    fetch: globalThis.fetch,
    ...options,
  });
}

Deno.test("http_fetch: an allowed host answers with its status and body", async () => {
  const { server, port } = startServer();
  try {
    const fetchTool = tool(port);
    assert.equal(fetchTool.spec.name, "http_fetch");
    assert.deepEqual((fetchTool.spec.parameters as { required: string[] }).required, ["url"]);
    const base = `http://127.0.0.1:${port}`;
    assert.deepEqual(await callTool(fetchTool, { url: `${base}/hello` }, context()), {
      status: "ok",
      content: "HTTP 200\nhello world",
    });
    assert.deepEqual(await callTool(fetchTool, { url: `${base}/missing` }, context()), {
      status: "error",
      content: "HTTP 404\nno such thing",
    });
    assert.deepEqual(await callTool(fetchTool, { url: `${base}/big` }, context()), {
      status: "ok",
      content: `HTTP 200\n${"y".repeat(1024)}\n[output truncated at 1024 bytes]`,
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("http_fetch: other hosts, ports and schemes are denied without a request", async () => {
  const { server, port, requested } = startServer();
  try {
    const fetchTool = tool(port);
    const other = `http://127.0.0.1:${port + 1}/hello`;
    assert.deepEqual(await callTool(fetchTool, { url: other }, context()), {
      status: "denied",
      content: `denied: "${other}" is not in tools.http_fetch.hosts (host 127.0.0.1:${port + 1})`,
    });
    assert.equal(
      (await callTool(fetchTool, { url: `http://localhost:${port}/hello` }, context())).status,
      "denied",
    );
    assert.equal((await callTool(fetchTool, { url: "file:///etc/passwd" }, context())).status, "denied");
    assert.equal((await callTool(fetchTool, { url: "not a url" }, context())).status, "denied");
    assert.deepEqual(requested, []);
  } finally {
    await server.shutdown();
  }
});

Deno.test("http_fetch: redirects are followed and every hop is checked", async () => {
  const { server, port, requested } = startServer();
  try {
    const fetchTool = tool(port);
    const base = `http://127.0.0.1:${port}`;
    assert.deepEqual(await callTool(fetchTool, { url: `${base}/to-hello` }, context()), {
      status: "ok",
      content: "HTTP 200\nhello world",
    });
    assert.deepEqual(await callTool(fetchTool, { url: `${base}/to-relative` }, context()), {
      status: "ok",
      content: "HTTP 200\nhello world",
    });
    const otherPort = await callTool(fetchTool, { url: `${base}/to-other-port` }, context());
    assert.equal(otherPort.status, "denied");
    assert.match(
      otherPort.content,
      /^denied: redirect to "http:\/\/127\.0\.0\.1:\d+\/hello" is not in tools\.http_fetch\.hosts/,
    );
    const otherHost = await callTool(fetchTool, { url: `${base}/to-other-host` }, context());
    assert.equal(otherHost.status, "denied");
    assert.match(otherHost.content, /redirect to "http:\/\/localhost:/);
    const loop = await callTool(fetchTool, { url: `${base}/loop` }, context());
    assert.deepEqual(loop, {
      status: "error",
      content: `error: Cannot fetch "${base}/loop": more than 5 redirects`,
    });
    assert.deepEqual(requested.filter((p) => p === "/loop").length, 6);
  } finally {
    await server.shutdown();
  }
});

Deno.test("http_fetch: a redirect to a disallowed host is never requested", async () => {
  const fetched: string[] = [];
  const recording: typeof fetch = (input, init) => {
    fetched.push(String(input));
    if (String(input).startsWith("https://api.example.com/")) {
      return Promise.resolve(
        new Response(null, { status: 302, headers: { location: "https://evil.test/x" } }),
      );
    }
    return Promise.resolve(new Response("should not happen", init));
  };
  const fetchTool = httpFetchTool({
    hosts: ["api.example.com"],
    timeoutMs: 1000,
    maxOutput: 100,
    fetch: recording,
  });
  const outcome = await callTool(fetchTool, { url: "https://api.example.com/start" }, context());
  assert.deepEqual(outcome, {
    status: "denied",
    content:
      `denied: redirect to "https://evil.test/x" is not in tools.http_fetch.hosts (host evil.test:443)`,
  });
  assert.deepEqual(fetched, ["https://api.example.com/start"]);
});

Deno.test("http_fetch: host entries — port, any port, wildcard subdomains, IPv6", async () => {
  const fetched: string[] = [];
  const ok: typeof fetch = (input) => {
    fetched.push(String(input));
    return Promise.resolve(new Response("ok"));
  };
  const fetchTool = httpFetchTool({
    hosts: ["API.example.com", "pinned.example.com:8443", "*.github.io", "[::1]:9000"],
    timeoutMs: 1000,
    maxOutput: 100,
    fetch: ok,
  });
  const verdict = async (url: string) => (await callTool(fetchTool, { url }, context())).status;
  assert.equal(await verdict("https://api.example.com/x"), "ok");
  assert.equal(await verdict("http://api.example.com:8080/x"), "ok");
  assert.equal(await verdict("https://pinned.example.com:8443/"), "ok");
  assert.equal(await verdict("https://pinned.example.com/"), "denied");
  assert.equal(await verdict("https://a.b.github.io/"), "ok");
  assert.equal(await verdict("https://github.io/"), "denied");
  assert.equal(await verdict("https://evilgithub.io/"), "denied");
  assert.equal(await verdict("http://[::1]:9000/"), "ok");
  assert.equal(await verdict("http://[::1]:9001/"), "denied");
  assert.equal(await verdict("https://example.com/"), "denied");
  assert.equal(fetched.length, 5);

  const none = httpFetchTool({ hosts: [], timeoutMs: 1000, maxOutput: 100, fetch: ok });
  assert.equal((await callTool(none, { url: "https://api.example.com/" }, context())).status, "denied");
  assert.throws(
    () => httpFetchTool({ hosts: ["http://x.com/"], timeoutMs: 1, maxOutput: 1, fetch: ok }),
    ValidationError,
  );
});

Deno.test("http_fetch: a slow server times out", async () => {
  const { server, port, releaseSlow } = startServer();
  try {
    const fetchTool = tool(port, { timeoutMs: 300 });
    const started = performance.now();
    const outcome = await callTool(fetchTool, { url: `http://127.0.0.1:${port}/slow` }, context());
    assert.deepEqual(outcome, {
      status: "error",
      content: `error: Cannot fetch "http://127.0.0.1:${port}/slow": timed out after 300ms`,
    });
    assert.ok(performance.now() - started < 4000);
  } finally {
    releaseSlow();
    await server.shutdown();
  }
});

Deno.test("http_fetch: a name resolving to an internal address is refused; an entry naming the address reaches it", async () => {
  const { server, port, requested } = startServer();
  try {
    const byName = tool(port, { hosts: [`localhost:${port}`] });
    const refused = await callTool(byName, { url: `http://localhost:${port}/hello` }, context());
    assert.equal(refused.status, "denied");
    assert.match(refused.content, /"http:\/\/localhost:\d+\/hello" resolves to an internal address \(/);
    // `*` admits every name, not the host's own network.
    const any = tool(port, { hosts: ["*"] });
    assert.equal(
      (await callTool(any, { url: `http://localhost:${port}/hello` }, context())).status,
      "denied",
    );
    assert.equal(
      (await callTool(any, { url: `http://127.0.0.1:${port}/hello` }, context())).status,
      "denied",
    );
    assert.deepEqual(requested, [], "nothing reached the server");
    // The allowed neighbour: the entry names the address itself.
    const named = await callTool(tool(port), { url: `http://127.0.0.1:${port}/hello` }, context());
    assert.deepEqual(named, { status: "ok", content: "HTTP 200\nhello world" });
    // A redirect from a named address to a name of the same machine is checked again.
    const both = tool(port, { hosts: [`127.0.0.1:${port}`, `localhost:${port}`] });
    const redirected = await callTool(both, { url: `http://127.0.0.1:${port}/to-other-host` }, context());
    assert.equal(redirected.status, "denied");
    assert.match(
      redirected.content,
      /^denied: redirect to "http:\/\/localhost:\d+\/hello" resolves to an internal/,
    );
    assert.deepEqual(requested, ["/hello", "/to-other-host"]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("http_fetch: host entries follow the sandbox host grammar", () => {
  const ok: typeof fetch = () => Promise.resolve(new Response("ok"));
  for (const entry of ["127.0.0.1#.example.com", "a.*.example.com", "user@example.com", "example.com/x"]) {
    assert.throws(
      () => httpFetchTool({ hosts: [entry], timeoutMs: 1, maxOutput: 1, fetch: ok }),
      ValidationError,
      entry,
    );
  }
  httpFetchTool({
    hosts: ["*", "*.example.com:443", "[::1]:8080", "10.0.0.1"],
    timeoutMs: 1,
    maxOutput: 1,
    fetch: ok,
  });
});
