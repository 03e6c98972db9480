/**
 * An approval approves the real thing: the approver is shown where a path leads (symlinks resolved), the
 * approval covers that object alone and is checked again at open (a symlink planted after the approval is
 * not followed); an approver runs in its own process group, which dies whole at its timeout; the titles a
 * person reads (ACP permission requests, the approver's `title`) show control and bidi characters as escapes
 * and keep the tail of a long call. Real CLI and a real ACP client; the approvers are shell scripts.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { runEvents, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";

type Event = Record<string, unknown>;
const results = (events: Event[]) => events.filter((e) => e.type === "tool.result");
const SECRET = "home-config-secret-7c1f";

/**
 * A job directory that is also the Hermes home (its config.yaml holds SECRET); read_file may read `in/`
 * only, so the reads of `out/` go to `approve.sh`.
 */
async function project(reads: string[], approver: string, timeout = "10s") {
  const dir = await tempDir("hermes-approve-subject-");
  const replies = reads.map((path) =>
    `- tool_calls: [{ name: read_file, arguments: { path: "${path}" } }]\n`
  );
  await writeFiles(dir, {
    "config.yaml": `# ${SECRET}\nlimits: { max_turns: 20 }\n`,
    "in/a.txt": "inside",
    "out/report.txt": "the report",
    "out/ok.txt": "an ordinary file",
    "job.yaml": `name: subject
model: { provider: scripted, script: ./r.yaml }
prompt: go
tools: { read_file: { paths: [./in] } }
approval: { command: [./approve.sh], timeout: ${timeout} }
`,
    "r.yaml": `${replies.join("")}- content: done\n`,
    "approve.sh": `#!/bin/sh\ninput=$(cat)\nprintf '%s\\n' "$input" >> asked.jsonl\n${approver}`,
  });
  await Deno.chmod(`${dir}/approve.sh`, 0o755);
  return dir;
}

async function asked(dir: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(`${dir}/asked.jsonl`);
  return text.trim().split("\n").map((line) => JSON.parse(line));
}

Deno.test("approval: a symlink planted after the approval is not followed; the approved file itself is read", async () => {
  // The approver is asked about out/report.txt (a regular file), swaps it for a symlink to the home's
  // config.yaml — as a sandboxed command racing the approval would — and allows.
  const dir = await project(
    ["out/report.txt", "out/ok.txt"],
    `case "$input" in
  *report.txt*) rm out/report.txt && ln -s "$PWD/config.yaml" out/report.txt ;;
esac
echo allow
`,
  );
  try {
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const [swapped, ok] = results(events);
    assert.equal(swapped!.status, "denied", JSON.stringify(swapped));
    assert.match(
      String(swapped!.content),
      /now leads to .*config\.yaml, not to .*out\/report\.txt the approver allowed/,
    );
    assert.doesNotMatch(JSON.stringify(events), new RegExp(SECRET));
    // The allowed neighbour: an approved read of an ordinary file outside the roots.
    assert.deepEqual([ok!.status, ok!.content], ["ok", "an ordinary file"]);
    const [first] = await asked(dir);
    assert.equal(first!.subject, `${await Deno.realPath(dir)}/out/report.txt`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("approval: the approver sees where a symlink leads and can refuse it; titles keep the end", async () => {
  const dir = await project(
    ["out/link.txt", "out/ok.txt"],
    `case "$input" in
  *config.yaml*) echo deny ;;
  *) echo allow ;;
esac
`,
  );
  try {
    await Deno.symlink(`${dir}/config.yaml`, `${dir}/out/link.txt`);
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const [link, ok] = results(events);
    assert.equal(link!.status, "denied");
    assert.match(String(link!.content), /the approval command rejected the call/);
    assert.doesNotMatch(JSON.stringify(events), new RegExp(SECRET));
    assert.deepEqual([ok!.status, ok!.content], ["ok", "an ordinary file"]);
    const [first, second] = await asked(dir);
    const real = await Deno.realPath(dir);
    assert.equal(first!.subject, `${real}/config.yaml`);
    assert.equal(first!.title, `read_file: out/link.txt → ${real}/config.yaml`);
    assert.equal(second!.subject, `${real}/out/ok.txt`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("approval: an approver's input shows control and bidi characters as escapes, and a long title keeps its tail", async () => {
  const path = `out/${`${"a".repeat(60)}/`.repeat(5)}\u202etxt.exe\x1b[2K-the-end`;
  const dir = await project([path.replace("\x1b", "\\e").replace("\u202e", "\\u202e")], "echo deny\n");
  try {
    const { code, stderr } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const raw = await Deno.readTextFile(`${dir}/asked.jsonl`);
    // deno-lint-ignore no-control-regex -- matching control characters is the point
    assert.doesNotMatch(raw, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    const [first] = await asked(dir);
    assert.equal((first!.args as { path: string }).path, path, "the exact arguments, once parsed");
    const title = String(first!.title);
    assert.ok(title.length <= 240, title);
    assert.match(title, /^read_file: out\/aaa/);
    assert.match(title, / …\[\d+ characters cut\]… /);
    assert.ok(title.endsWith("\\u202etxt.exe\\x1b[2K-the-end"), title);
    // The progress line of the call: the same, its tail kept.
    const line = stderr.split("\n").find((l) => l.startsWith("hermes info: tool read_file {"))!;
    assert.ok(line.endsWith('\\u202etxt.exe\\u001b[2K-the-end"}'), line);
    assert.match(line, / …\[\d+ characters cut\]… /);
    assert.doesNotMatch(line, /\u202e/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** True while `pid` runs (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
}

Deno.test("approval: at the timeout the approver's whole process group dies; no child survives the run", async () => {
  const dir = await project(["out/ok.txt"], "sleep 300 &\necho $! > child.pid\nsleep 300\n", "1s");
  let pid = 0;
  try {
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const [result] = results(events);
    assert.equal(result!.status, "denied");
    pid = Number((await Deno.readTextFile(`${dir}/child.pid`)).trim());
    assert.ok(pid > 0);
    // Reparented and reaped asynchronously: wait for it generously, never on a tight clock.
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(!alive(pid), `the approver's child ${pid} outlived the run`);
  } finally {
    if (pid > 0 && alive(pid)) Deno.kill(pid, "SIGKILL");
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("acp: a permission title shows escapes and keeps the tail of a long call", async () => {
  const path = `out/${`${"b".repeat(60)}/`.repeat(5)}\u202etxt.exe-the-end`;
  const dir = await writeFiles(await tempDir("hermes-acp-title-"), {
    "job.yaml": `name: acptitle
model: { provider: scripted, script: ./replies.yaml }
tools: { read_file: { paths: [./in] } }
`,
    "replies.yaml": `- { match: go, tool_calls: [{ name: read_file, arguments: { path: "${
      path.replace("\u202e", "\\u202e")
    }" } }] }
- { match: go, content: done }
`,
    "in/a.txt": "inside",
  });
  const child = spawnHermes(["acp", "--home", dir], { cwd: dir, stdin: "piped" });
  const stderr = new Response(child.stderr).text();
  const permissions: acp.RequestPermissionRequest[] = [];
  const client = acp.client({ name: "hermes-test" })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      return { outcome: { outcome: "selected", optionId: "reject_once" } };
    })
    .onNotification(acp.methods.client.session.update, () => {});
  try {
    await client.connectWith(acp.ndJsonStream(child.stdin, child.stdout), async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, {
        cwd: dir,
        mcpServers: [],
        _meta: { hermes: { job: "job.yaml" } },
      });
      await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "go" }],
      });
    });
  } finally {
    await child.stdin.close().catch(() => {});
    await child.status;
    await stderr;
  }
  try {
    assert.equal(permissions.length, 1);
    const title = permissions[0]!.toolCall.title!;
    assert.ok(title.length <= 240, title);
    assert.doesNotMatch(title, /\u202e/);
    assert.ok(title.endsWith("\\u202etxt.exe-the-end"), title);
    assert.match(title, / …\[\d+ characters cut\]… /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
