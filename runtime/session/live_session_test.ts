/**
 * openSession against the real scripted OpenAI-compatible server on 127.0.0.1 (a local endpoint, so the
 * provider asks it for its window), on a real SQLite store: the window probe starts as the session opens,
 * its answer is applied before the first request, and a probe that hangs neither holds the first request
 * past its own timeout nor outlives the session or a failed assembly (the tests run with --sanitize-ops and
 * --sanitize-resources).
 */
import assert from "node:assert/strict";
import { systemClock } from "../core/clock.ts";
import { ValidationError } from "../core/errors.ts";
import { EventBus } from "../core/events.ts";
import { silentLogger } from "../core/log.ts";
import { loadJob } from "../config/prechecked.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import type { Store } from "../store/store.ts";
import { type OpenAIServer, type ServerInfo, startOpenAIServer } from "../../tests/_testing/openai_server.ts";
import { openSession, type OpenSessionOptions } from "./live_session.ts";

interface Setup {
  server: OpenAIServer;
  store: Store;
  open: (extra?: Partial<OpenSessionOptions>) => ReturnType<typeof openSession>;
}

/**
 * A server whose info routes hang, for the whole file: started before the tests and closed by the last one,
 * so that a probe a session failed to stop is still waiting on it when the sanitizers look at the end of a
 * test (closing a server inside the test would end the probe's request and hide the leak).
 */
const hanging = await startOpenAIServer({ serverInfo: { hang: true } });

async function withSession(
  server: OpenAIServer | ServerInfo,
  fn: (setup: Setup) => Promise<void>,
): Promise<void> {
  const own = "url" in server
    ? undefined
    : await startOpenAIServer({ script: [{ content: "hello back" }], serverInfo: server });
  const used = own ?? server as OpenAIServer;
  used.probes.length = 0;
  const dir = await Deno.makeTempDir({ prefix: "hermes-live-session-" });
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    `name: window
model: { name: m, base_url: "${used.url}", api_key_env: TEST_KEY, context_window: 100000 }
prompt: say hello
`,
  );
  const job = await loadJob(`${dir}/job.yaml`);
  const store = openSqliteStore(`${dir}/state.db`);
  const open = (extra: Partial<OpenSessionOptions> = {}) =>
    openSession({
      job,
      store,
      events: new EventBus(systemClock),
      clock: systemClock,
      log: silentLogger,
      env: { TEST_KEY: "k", PATH: "/usr/bin:/bin" },
      host: "test-host",
      ...extra,
    });
  try {
    await fn({ server: used, store, open });
  } finally {
    await store.close();
    await own?.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Waits (bounded) until the server was asked for its window. */
async function probed(server: OpenAIServer): Promise<void> {
  for (let i = 0; i < 500 && server.probes.length < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.deepEqual(server.probes.toSorted(), ["GET /props", "POST /api/show"]);
}

Deno.test("live session: the server's window is asked as the session opens, before any prompt, and applied before the first request", async () => {
  await withSession({ llamaCpp: { n_ctx: 6000 } }, async ({ server, open }) => {
    const session = await open();
    try {
      await probed(server);
      assert.equal(server.requests.length, 0, "no model request yet");
      assert.equal((await session.compactor.occupancy(session.id)).window_tokens, 100000);
      const turn = await session.agent.prompt("hi", { source: "cli" });
      assert.equal(turn.final, "hello back");
      assert.equal((await session.compactor.occupancy(session.id)).window_tokens, 6000);
      assert.equal(server.probes.length, 2, "asked once");
    } finally {
      await session.finish("success", "completed");
    }
  });
});

Deno.test("live session: a probe that hangs is given up at its timeout; the first request goes, with the job's window", async () => {
  await withSession({ hang: true }, async ({ server, open }) => {
    const session = await open();
    try {
      // Hangs until the server closes: only the probe's own timeout lets the first request go.
      const turn = await session.agent.prompt("hi", { source: "cli" });
      assert.equal(turn.final, "hello back");
      assert.equal(server.requests.length, 1);
      assert.equal(server.probes.length, 2);
      assert.equal((await session.compactor.occupancy(session.id)).window_tokens, 100000);
    } finally {
      await session.finish("success", "completed");
    }
  });
});

Deno.test("live session: a session finished while its probe hangs lets go of the probe's requests", async () => {
  await withSession(hanging, async ({ server, open }) => {
    const session = await open();
    await probed(server);
    await session.finish("success", "completed");
    assert.equal(server.requests.length, 0);
  });
});

Deno.test("live session: the session's signal stops a hanging probe and the step waiting for it", async () => {
  await withSession(hanging, async ({ server, open }) => {
    const stop = new AbortController();
    const session = await open({ signal: stop.signal });
    try {
      await probed(server);
      const turn = session.agent.prompt("hi", { source: "cli" });
      stop.abort(new DOMException("stopped", "AbortError"));
      await assert.rejects(turn, /stopped/);
      assert.equal(server.requests.length, 0, "no model request after the stop");
    } finally {
      await session.finish("idle", "cancelled");
    }
  });
});

Deno.test("live session: an assembly that fails after the probe started stops it (a session in use elsewhere)", async () => {
  await withSession(hanging, async ({ server, store, open }) => {
    const row = await store.createSession({ job: "window" });
    const claimed = await store.claimSession(row.id, {
      host: "another-host",
      pid: 4242,
      started: "elsewhere",
      nonce: crypto.randomUUID(),
    });
    assert.equal(claimed.claimed, true);
    await assert.rejects(open({ resume: row.id }), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.match(error.message, /Cannot resume session .*: it is in use by pid 4242 on another-host/);
      return true;
    });
    assert.equal(server.requests.length, 0);
  });
});

Deno.test({
  name: "live session: (the hanging server closes)",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => hanging.close(),
});
