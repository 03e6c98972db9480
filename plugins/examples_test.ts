/** The example plugins in examples/plugins/, each loaded from its real location and exercised. */
import assert from "node:assert/strict";
import { ValidationError } from "../runtime/core/errors.ts";
import { fixture, notAborted, pluginTest, rejection } from "./_testing.ts";
import { pluginIdentity, PluginStateTable } from "./state.ts";
import { NO_SCOPE } from "../runtime/tools/tool.ts";

const EXAMPLES = new URL("../examples/plugins/", import.meta.url).pathname;
const RULES = "Never push to main.\nAlways run the tests.";

pluginTest("whoami answers with the session id and the command's source", async () => {
  await using f = await fixture();
  const host = await f.start([{ path: `${EXAMPLES}whoami.ts` }]);
  const [whoami] = host.commands();
  assert.equal(whoami!.name, "whoami");
  for (const source of ["cli", "rpc", "acp", "job"] as const) {
    assert.equal(
      await whoami!.run("", { session_id: "s-42", source, signal: notAborted }),
      `session s-42 via ${source}`,
    );
  }
});

pluginTest("memory injects the rules from its notes file on every model call by default", async () => {
  await using f = await fixture();
  await f.write({ "notes/rules.md": `${RULES}\n` });
  const refused = await rejection(f.start([{ path: `${EXAMPLES}memory` }]));
  assert.ok(refused instanceof ValidationError);
  assert.match(refused.message, /does not grant: read \.\/notes$/);
  const host = await f.start([{ path: `${EXAMPLES}memory`, permissions: { read: ["./notes"] } }]);
  for (const turn of [1, 2]) {
    assert.deepEqual(await host.hooks.preLlmCall({ session_id: "s1", user_message: "go", turn }), [
      `Project rules (keep following them):\n${RULES}`,
    ]);
  }
  await f.write({ "notes/rules.md": "Edited rule." });
  assert.deepEqual(await host.hooks.preLlmCall({ session_id: "s1", user_message: "go", turn: 3 }), [
    "Project rules (keep following them):\nEdited rule.",
  ]);
});

pluginTest(
  "memory with every_turn: false re-injects the rules on the first call after each compaction",
  async () => {
    await using f = await fixture();
    const host = await f.start([{
      path: `${EXAMPLES}memory`,
      permissions: { read: ["./notes"] },
      config: { rules: RULES, every_turn: false },
    }]);
    const call = (session_id: string, turn: number) =>
      host.hooks.preLlmCall({ session_id, user_message: "go", turn });
    const injected = [`Project rules (keep following them):\n${RULES}`];
    assert.deepEqual(await call("s1", 1), injected, "the session's first call");
    assert.deepEqual(await call("s1", 2), []);
    await host.hooks.postCompaction({
      session_id: "s1",
      old_session_id: "",
      kind: "micro_summarize",
      reason: "between_turns",
      before_tokens: 9000,
      after_tokens: 2000,
      messages_removed: 30,
    });
    assert.deepEqual(await call("s1", 3), injected, "the first call after the compaction");
    assert.deepEqual(await call("s1", 4), []);
    assert.deepEqual(await call("s2", 1), injected, "another session starts with the rules");
    await host.hooks.onSessionDelete({ session_id: "s1", reason: "delete", deleted_ids: ["s1", "s2"] });
    assert.deepEqual(
      await new PluginStateTable(f.store, pluginIdentity({ root: Deno.realPathSync(`${EXAMPLES}memory`) }))
        .list(),
      [],
    );
    const badConfig = await rejection(
      f.start([{
        path: `${EXAMPLES}memory`,
        permissions: { read: ["./notes"] },
        config: { every_turn: "yes" },
      }]),
    );
    assert.match(badConfig.message, /config\.every_turn: .*expected boolean/);
  },
);

pluginTest(
  "sidecar-index keeps per-session entries and drops them all in one on_session_delete",
  async () => {
    await using f = await fixture();
    const host = await f.start([{ path: `${EXAMPLES}sidecar-index` }]);
    const tool = (session_id: string, tool_name: string) =>
      host.hooks.postToolCall({ session_id, tool_name, args: {}, result: "", duration_ms: 3, status: "ok" });
    for (const id of ["a", "b", "c", "keep"]) await tool(id, "shell");
    await tool("a", "read_file");
    const index = host.commands().find((c) => c.name === "index")!;
    assert.equal(
      await index.run("", { session_id: "a", source: "cli", signal: notAborted }),
      "2 tool calls\n- shell (ok, 3 ms)\n- read_file (ok, 3 ms)",
    );
    const state = new PluginStateTable(
      f.store,
      pluginIdentity({ root: Deno.realPathSync(`${EXAMPLES}sidecar-index`) }),
    );
    assert.deepEqual(await state.list(), ["session/a", "session/b", "session/c", "session/keep"]);
    await host.hooks.onSessionDelete({ session_id: "a", reason: "prune", deleted_ids: ["a", "b", "c"] });
    assert.deepEqual(await state.list(), ["session/keep"]);
    assert.ok(
      f.logs.some((line) => line.includes("[sidecar-index] prune: dropped the index of 3 of 3 sessions")),
    );
  },
);

pluginTest("lookup's tool reaches the one host:port it is granted and nothing else", async () => {
  await using f = await fixture();
  const glossary = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const term = decodeURIComponent(new URL(request.url).pathname.slice(1));
    return term === "lease"
      ? new Response("a lease is a lock with an expiry")
      : new Response("unknown", { status: 404 });
  });
  const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => new Response("other"));
  try {
    const granted = `127.0.0.1:${glossary.addr.port}`;
    const host = await f.start([{
      path: `${EXAMPLES}lookup`,
      permissions: { net: [granted] },
      config: { url: `http://${granted}/` },
    }]);
    const [lookup] = host.tools();
    assert.equal(lookup!.spec.name, "lookup");
    const context = { session_id: "s1", job_dir: f.dir, env: {}, host_env: {}, signal: notAborted };
    assert.deepEqual(await lookup!.run({ term: "lease" }, context, NO_SCOPE), {
      status: "ok",
      content: "a lease is a lock with an expiry",
    });
    const notFound = await lookup!.run({ term: "nope" }, context, NO_SCOPE);
    assert.equal(notFound.status, "error");
    assert.match(notFound.content, /HTTP 404/);
    assert.match(
      (await lookup!.run({ term: 3 }, context, NO_SCOPE)).content,
      /invalid arguments for lookup: term/,
    );

    // The same plugin pointed at another port is denied by its sandbox.
    const elsewhere = await f.start([{
      path: `${EXAMPLES}lookup`,
      permissions: { net: [granted] },
      config: { url: `http://127.0.0.1:${other.addr.port}/` },
    }]);
    const denied = await elsewhere.tools()[0]!.run({ term: "lease" }, context, NO_SCOPE);
    assert.equal(denied.status, "error");
    assert.match(denied.content, /Requires net access to "127\.0\.0\.1:\d+"/);
  } finally {
    await glossary.shutdown();
    await other.shutdown();
  }
});
