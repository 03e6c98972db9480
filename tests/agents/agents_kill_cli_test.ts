/**
 * Subagents and SIGKILL: a real `hermes run` killed while three delegated tasks are at different points
 * (one ended, one in a sandboxed shell command, one in a model call) leaves nothing of theirs running, and
 * `hermes run --resume` of the parent finishes each task exactly once: the ended one's kept answer is used
 * (no model call), the others' sessions are resumed (their prompts are not sent again, no fourth child).
 * Requests are counted per child at the scripted OpenAI server.
 */
import assert from "node:assert/strict";
import { sqliteHandle } from "../../runtime/store/sqlite/_testing.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { type ChatRequestBody, startOpenAIServer, textOf } from "../_testing/openai_server.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";

const userOf = (body: ChatRequestBody) => textOf(body.messages?.find((m) => m.role === "user")?.content);
const toolMessages = (body: ChatRequestBody) => (body.messages ?? []).filter((m) => m.role === "tool");

/** A `sleep` no other test runs: its process is the child's shell command. */
const MARKER = `${600 + Math.floor(Math.random() * 100)}.${Math.floor(Math.random() * 1000)}`;

function markerRunning(): boolean {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (cmdline[0]?.endsWith("sleep") && cmdline[1] === MARKER) return true;
    } catch {
      // the process ended meanwhile
    }
  }
  return false;
}

interface Row {
  id: string;
  status: string;
  parent_id: string | null;
}

async function sessions(dbPath: string): Promise<Row[]> {
  try {
    const store = openSqliteStore(dbPath);
    try {
      return sqliteHandle(store).db.prepare("SELECT id, status, parent_id FROM sessions ORDER BY created_at")
        .all() as unknown as Row[];
    } finally {
      await store.close();
    }
  } catch {
    return []; // not created yet
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never: ${what}`);
}

Deno.test({
  name:
    "agents: SIGKILL of the parent mid-delegation leaves no child running; a resume finishes each task once",
  ignore: withoutSandbox,
}, async () => {
  let releaseHeld = () => {};
  const held = new Promise<void>((resolve) => releaseHeld = resolve);
  let firstProcess = true;
  const server = await startOpenAIServer({
    // Task c's model call is in flight when the parent is killed: held until then.
    gate: async (body) => {
      if (firstProcess && userOf(body) === "task c") await held;
    },
    respond: (body): ScriptEntry => {
      const task = userOf(body);
      const tools = toolMessages(body);
      if (task === "task a") return { content: "a done" };
      if (task === "task b") {
        return tools.length === 0
          ? { tool_calls: [{ name: "shell", arguments: { command: `sleep ${MARKER}` } }] }
          : { content: "b done" };
      }
      if (task === "task c") return { content: "c done" };
      if (tools.length === 0) {
        return {
          tool_calls: // a ends first, but its result is stored after b's: the parent has not seen it when killed.
            ["b", "a", "c"].map((t) => ({
              id: `call_${t}`,
              name: "delegate",
              arguments: { agent: "worker", prompt: `task ${t}` },
            })),
        };
      }
      return { content: `all done: ${tools.map((m) => textOf(m.content)).join(", ")}` };
    },
  });
  const dir = await writeFiles(await tempDir("hermes-agents-kill-"), {
    "job.yaml": `name: lead
model: { provider: openai, name: m }
system: You are the lead.
prompt: split the work
tools:
  shell: { allow: ["sleep *"], timeout: 10m }
agents:
  worker: { description: Does one task, system: You are a worker. }
`,
  });
  const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, HOME: dir };
  const db = `${dir}/state.db`;
  try {
    const child = spawnHermes(["run", "job.yaml"], { cwd: dir, home: dir, env });
    await until("task a ended, task b in its shell command, task c in its model call", async () => {
      const rows = await sessions(db);
      return rows.some((r) => r.parent_id !== null && r.status === "success") && markerRunning() &&
        server.requests.some((b) => userOf(b) === "task c");
    });
    child.kill("SIGKILL");
    await child.output();
    firstProcess = false;
    releaseHeld();
    // The sandboxed command dies with the process that ran it (bwrap --die-with-parent): nothing is left.
    await until("the child's shell command is gone", () => !markerRunning());
    const killed = await sessions(db);
    const parent = killed.find((r) => r.parent_id === null)!;
    assert.deepEqual(
      killed.filter((r) => r.parent_id === parent.id).map((r) => r.status).sort(),
      ["running", "running", "success"],
    );
    const before = server.requests.length;

    const resumed = await hermes(["run", "--resume", parent.id, "--output", "json"], {
      cwd: dir,
      home: dir,
      env,
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    const result = JSON.parse(resumed.stdout);
    assert.equal(result.status, "success");
    assert.equal(result.final, "all done: b done, a done, c done");

    // Per task, the requests of both processes: a once (the answer its session kept is used), b twice (its tool call,
    // then its answer after the interrupted command), c twice (the killed call, then the resumed one).
    const count = (task: string) => server.requests.filter((b) => userOf(b) === task).length;
    assert.deepEqual([count("task a"), count("task b"), count("task c")], [1, 2, 2]);
    const after = server.requests.slice(before);
    assert.equal(after.filter((b) => userOf(b) === "split the work").length, 1, "the parent answers once");
    const bAgain = after.find((b) => userOf(b) === "task b")!;
    assert.match(textOf(toolMessages(bAgain)[0]!.content), /^error: interrupted, may have run/);

    // Three children, no fourth; none left running; each prompt stored once in its own session.
    const rows = await sessions(db);
    const children = rows.filter((r) => r.parent_id === parent.id);
    assert.equal(children.length, 3);
    assert.ok(rows.every((r) => r.status === "success"), JSON.stringify(rows));
    const store = openSqliteStore(db);
    try {
      for (const kid of children) {
        const users = (await store.allMessages(kid.id)).filter((m) => m.role === "user");
        assert.equal(users.length, 1);
      }
      const tools = (await store.allMessages(parent.id)).filter((m) => m.role === "tool");
      assert.deepEqual(tools.map((m) => [m.tool_call_id, m.content]), [
        ["call_b", "b done"],
        ["call_a", "a done"],
        ["call_c", "c done"],
      ]);
    } finally {
      await store.close();
    }
    assert.deepEqual(
      result.agents.map((a: { session_id: string }) => a.session_id).sort(),
      children.map((r) => r.id).sort(),
    );
  } finally {
    releaseHeld();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
