/**
 * A long-lived `hermes rpc` whose sessions fail to open at different steps of their assembly leaves nothing
 * behind: no child process (plugin, MCP server) and no session left `running` under it. Each failing job
 * first starts a plugin that loads fine, so a step that did not release what came before it shows up as a
 * live child of the server.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient, type RpcMessage } from "../_testing/rpc_client.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const GOOD = `export function register(ctx) {
  ctx.registerCommand("hi", { description: "says hi", handler: () => "hi" });
}
`;
const THROWS = `export function register() {
  throw new Error("this plugin cannot load");
}
`;
const head = (name: string) =>
  `name: ${name}\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\nstore: { retry: 1s }\n`;

/** Every process below `pid`, found through /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...children.get(ppid) ?? [], Number(entry.name)]);
    } catch {
      // exited meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function failure(message: RpcMessage): string {
  assert.ok(message.error, `expected an error, got ${JSON.stringify(message.result)}`);
  return message.error.message;
}

Deno.test({
  name: "rpc: 50 sessions failing at different assembly steps leave no child process and no running session",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "config.yaml": "store: { retry: 1s }\n",
    "r.yaml": "- content: hi\n",
    "good/mod.ts": GOOD,
    "bad/mod.ts": THROWS,
    "plugin-throws.yaml": head("plugin-throws") +
      "plugins: [{ path: ./good/mod.ts }, { path: ./bad/mod.ts }]\n",
    "mcp-fails.yaml": head("mcp-fails") +
      "plugins: [{ path: ./good/mod.ts }]\nmcp_servers: { gone: { command: ./no-such-server, required: true } }\n",
    "starts.yaml": head("starts") + "plugins: [{ path: ./good/mod.ts }]\n",
  });
  await using server = new RpcClient({ home: dir, cwd: dir });
  const pid = server.child.pid;
  // A session owned by another live process: loading it here is refused.
  await using other = new RpcClient({ home: dir, cwd: dir });
  const owned = await other.request("session.create", { job: "starts.yaml" });
  const ownedId = (owned.result as { session_id: string }).session_id;

  let opened = 0;
  for (let round = 0; opened < 49; round++) {
    assert.match(
      failure(await server.request("session.create", { job: "plugin-throws.yaml" })),
      /this plugin cannot load/,
    );
    assert.match(failure(await server.request("session.create", { job: "mcp-fails.yaml" })), /gone/);
    assert.match(
      failure(await server.request("session.prompt", { session_id: ownedId, text: "hi" })),
      /in use|busy/i,
    );
    opened += 3;
    assert.deepEqual(descendants(pid), [], `round ${round}: a failed session left a process behind`);
  }
  // The store refusing the session's row (another process holds its write lock past store.retry): the plugin
  // that started before it is stopped, and nothing is left running.
  const db = new DatabaseSync(join(dir, "state.db"));
  try {
    db.exec("BEGIN IMMEDIATE");
    assert.match(
      failure(await server.request("session.create", { job: "starts.yaml" })),
      /store|locked|unavailable/i,
    );
    db.exec("ROLLBACK");
    opened++;
    assert.deepEqual(descendants(pid), [], "the locked store's session left a process behind");
    const running = db.prepare("SELECT id, job FROM sessions WHERE status = 'running' AND owner_pid = ?")
      .all(pid);
    assert.deepEqual(running, [], "no session is left running under the server");
  } finally {
    db.close();
  }
  assert.ok(opened >= 50, `${opened} sessions`);
  // The server is still serving: a session that can start does.
  const ok = await server.request("session.create", { job: "starts.yaml" });
  assert.equal(ok.error, undefined, JSON.stringify(ok.error));
  assert.ok(descendants(pid).length > 0, "the started session's plugin runs as a child");
});
