/**
 * One turn at a time per session across processes. A second `hermes run --resume S` while another
 * process runs S is refused (exit 2, naming the holder), never interleaved; once the holder is done, resuming
 * works. A transcript that two writers interleaved before is repaired when it is loaded. Real CLI processes.
 */
import assert from "node:assert/strict";
import { sqliteHandle } from "../../runtime/store/sqlite/_testing.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

async function waitForUserRow(dbPath: string, content: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const store = openSqliteStore(dbPath);
    try {
      const row = sqliteHandle(store).db.prepare("SELECT count(*) AS n FROM messages WHERE content = ?")
        .get(content) as { n: number };
      if (Number(row.n) > 0) return;
    } finally {
      await store.close();
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no message "${content}" was stored`);
}

Deno.test("session claim: a second --resume of a running session is refused naming the holder, then works", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: chat\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hello\n",
    // "other" first: after the interrupted "slow", the model sees both in one user message.
    "r.yaml": "- { match: hello, content: hi }\n- { match: other, content: other answer }\n" +
      "- { match: slow, content: late, delay: 60s }\n",
  });
  const first = await hermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(first.code, 0, first.stderr);
  const id = JSON.parse(first.stdout).session_id;

  const holder = spawnHermes(["run", "--resume", id, "-p", "slow"], { cwd: dir, home: dir });
  try {
    await waitForUserRow(`${dir}/state.db`, "slow");
    const refused = await hermes(["run", "--resume", id, "-p", "other", "--output", "json"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(refused.code, 2);
    assert.equal(JSON.parse(refused.stdout).exit_code, 2, "the refusal is a result object too");
    assert.match(
      refused.stderr,
      new RegExp(`Cannot resume session ${id}: it is in use by pid ${holder.pid} on `),
    );
  } finally {
    holder.kill("SIGTERM");
    await holder.output();
  }
  const after = await hermes(["run", "--resume", id, "-p", "other", "--output", "json"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(after.code, 0, after.stderr);
  assert.equal(JSON.parse(after.stdout).final, "other answer");
  const store = openSqliteStore(`${dir}/state.db`);
  try {
    const roles = (await store.allMessages(id)).map((m) => [m.role, m.content]);
    assert.deepEqual(roles, [
      ["user", "hello"],
      ["assistant", "hi"],
      ["user", "slow"],
      ["user", "other"],
      ["assistant", "other answer"],
    ], "the refused run stored nothing");
  } finally {
    await store.close();
  }
});

Deno.test("session claim: HERMES_HOST_ID names the owner; a killed owner is provably dead only on its own host", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": "name: chat\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hello\n",
    "r.yaml": "- { match: hello, content: hi }\n- { match: other, content: other answer }\n" +
      "- { match: slow, content: late, delay: 60s }\n",
  });
  const onHost = (host: string) => ({ cwd: dir, home: dir, env: { HERMES_HOST_ID: host } });
  const first = await hermes(["run", "job.yaml", "--output", "json"], onHost("host-a"));
  assert.equal(first.code, 0, first.stderr);
  const id = JSON.parse(first.stdout).session_id;
  const holder = spawnHermes(["run", "--resume", id, "-p", "slow"], onHost("host-a"));
  await waitForUserRow(`${dir}/state.db`, "slow");
  holder.kill("SIGKILL");
  await holder.output();

  // From another (simulated) host the dead owner cannot be proven dead: refused, naming its host.
  const elsewhere = await hermes(
    ["run", "--resume", id, "-p", "other", "--output", "json"],
    onHost("host-b"),
  );
  assert.equal(elsewhere.code, 2, elsewhere.stderr);
  assert.match(
    elsewhere.stderr,
    new RegExp(`Cannot resume session ${id}: it is in use by pid ${holder.pid} on host-a `),
  );
  // On its own host it is: the session is taken over.
  const here = await hermes(["run", "--resume", id, "-p", "other", "--output", "json"], onHost("host-a"));
  assert.equal(here.code, 0, here.stderr);
  assert.equal(JSON.parse(here.stdout).final, "other answer");
});

Deno.test("session claim: a transcript two writers interleaved is sent repaired, tool results behind their calls", async () => {
  const server = await startOpenAIServer([{ content: "repaired" }]);
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml":
        `name: mixed\nmodel: { name: m, base_url: "${server.url}", api_key_env: K }\nprompt: unused\n`,
    });
    const first = await hermes(["run", "job.yaml", "-p", "start", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: { K: "k" },
    });
    const id = JSON.parse(first.stdout).session_id;
    const store = openSqliteStore(`${dir}/state.db`);
    try {
      const call = (n: string) => ({
        role: "assistant" as const,
        content: "",
        tool_calls: [{ id: n, name: "list_dir", arguments: "{}" }],
      });
      const result = (n: string) => ({
        role: "tool" as const,
        content: `out ${n}`,
        tool_call_id: n,
        name: "list_dir",
      });
      await store.appendMessages(id, [
        { role: "user", content: "five" },
        { role: "user", content: "six" },
        call("call_5"),
        call("call_6"),
        result("call_5"),
        result("call_6"),
      ]);
    } finally {
      await store.close();
    }
    server.replace([{ content: "repaired" }]);
    const resumed = await hermes(["run", "--resume", id, "-p", "go on", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: { K: "k" },
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(JSON.parse(resumed.stdout).final, "repaired");
    const sent = server.requests.at(-1)!.messages!.map((m) =>
      m.role === "tool" ? `tool:${m.tool_call_id}` : m.role === "assistant" && m.tool_calls ? "call" : m.role
    );
    assert.deepEqual(sent.slice(2), ["user", "call", "tool:call_5", "call", "tool:call_6", "user"]);
  } finally {
    await server.close();
  }
});
