/**
 * The layering of docs/architecture.md, enforced: every production import points down a layer (or stays in its folder),
 * and no two folders import each other. A failure names the offending import.
 */
import assert from "node:assert/strict";
import { checkFrontEnds, checkLayers, isFrontEnd, productionImports } from "../_testing/layers.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test("layers: no production import points up a layer or closes a cycle between folders", async () => {
  const imports = await productionImports(ROOT);
  assert.ok(imports.length > 100, `expected the program's imports, found ${imports.length}`);
  assert.deepEqual(checkLayers(imports), []);
});

Deno.test("layers: an upward import and a cycle are reported with the importing file", () => {
  const problems = checkLayers([
    { from: "runtime/store/store.ts", to: "commands/run.ts", line: 3 },
    { from: "loops/daemon.ts", to: "plugins/host.ts", line: 7 },
    { from: "plugins/host.ts", to: "loops/recurring.ts", line: 9 },
    { from: "runtime/session/run_job.ts", to: "runtime/core/errors.ts", line: 1 },
  ]);
  assert.deepEqual(problems, [
    "runtime/store/store.ts:3 imports commands/run.ts: store (layer 1) may not import commands (layer 8)",
    "loops/daemon.ts:7 imports plugins/host.ts: loops and plugins import each other (cycle between folders)",
  ]);
});

Deno.test("layers: front-ends reach sessions only through the App — no session_admin/, live or served session", async () => {
  const imports = await productionImports(ROOT);
  assert.deepEqual(checkFrontEnds(imports), []);
  const named: string[] = [];
  for (const file of new Set(imports.map((edge) => edge.from).filter(isFrontEnd))) {
    const text = await Deno.readTextFile(`${ROOT}${file}`);
    if (/\bServedSession\b/.test(text)) named.push(file);
  }
  assert.deepEqual(named, []);
  // The check sees what it looks for.
  assert.deepEqual(
    checkFrontEnds([
      { from: "commands/sessions/show.ts", to: "runtime/session_admin/transcript.ts", line: 3 },
      { from: "runtime/acp/agent.ts", to: "runtime/session/served_session.ts", line: 9 },
      { from: "runtime/rpc/methods.ts", to: "runtime/session/live_session.ts", line: 4 },
      { from: "runtime/app/app.ts", to: "runtime/session_admin/transcript.ts", line: 2 },
      { from: "commands/run.ts", to: "runtime/app/mod.ts", line: 5 },
    ]),
    [
      "commands/sessions/show.ts:3 imports runtime/session_admin/transcript.ts: a front-end goes through runtime/app/",
      "runtime/acp/agent.ts:9 imports runtime/session/served_session.ts: a front-end goes through runtime/app/",
      "runtime/rpc/methods.ts:4 imports runtime/session/live_session.ts: a front-end goes through runtime/app/",
    ],
  );
});

/** What only a front-end may name: its wire format's validation, its protocol modules and error types, exit codes. */
const TRANSPORT = [
  /from "zod"/,
  /@agentclientprotocol/,
  /from "[^"]*\/(rpc|acp)\//,
  /\bRpcError\b/,
  /\bExitCode\b/,
];

Deno.test("layers: the app core names no transport — no zod, no JSON-RPC or ACP module, no exit codes", async () => {
  const dir = new URL("../../runtime/app/", import.meta.url).pathname;
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.name.endsWith(".ts") || entry.name.endsWith("_test.ts")) continue;
    const text = await Deno.readTextFile(`${dir}${entry.name}`);
    for (const pattern of TRANSPORT) {
      if (pattern.test(text)) found.push(`${entry.name}: ${pattern.source}`);
    }
  }
  assert.ok(found.length === 0, found.join("\n"));
  // The check sees what it looks for: the JSON-RPC method table does name them.
  const methods = await Deno.readTextFile(new URL("../../runtime/rpc/methods.ts", import.meta.url));
  assert.match(methods, /from "zod"/);
  assert.match(methods, /\bRpcError\b/);
});
