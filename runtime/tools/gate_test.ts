import assert from "node:assert/strict";
import type { EventInput } from "../core/events.ts";
import { type Hooks, noHooks } from "../core/hooks.ts";
import { builtinTools } from "./builtin.ts";
import { type ApprovalRequest, ToolGate } from "./gate.ts";
import { nameVerdict } from "./name_rules.ts";
import type { Tool, ToolOutcome } from "./tool.ts";
import { shellTool } from "./shell/tool.ts";
import { evaluateShellCommand } from "./shell/policy.ts";

async function setup() {
  const dir = await Deno.makeTempDir({ prefix: "hermes-gate-" });
  const outside = await Deno.makeTempDir({ prefix: "hermes-gate-outside-" });
  await Deno.writeTextFile(`${outside}/note.txt`, "outside text");
  await Deno.writeTextFile(`${dir}/inside.txt`, "inside text");
  const ran: string[] = [];
  // A plugin-like tool whose entry says tools: {allow: ["look*"], deny: ["drop*"]}.
  const pluginTool = (name: string): Tool => ({
    spec: { name, description: name, parameters: { type: "object" } },
    permitted: nameVerdict(name, { allow: ["look*"], deny: ["drop*"] }, {
      exposed: name,
      where: "plugins[0].tools",
    }),
    run: () => {
      ran.push(name);
      return Promise.resolve({ status: "ok", content: `${name} ran` });
    },
  });
  const tools = [
    ...await builtinTools({ read_file: { paths: ["."] }, write_file: { paths: ["."] } }, { job_dir: dir }),
    pluginTool("lookup"),
    pluginTool("drop_all"),
    pluginTool("other"),
  ];
  const cleanup = async () => {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  };
  return { dir, outside, tools, ran, cleanup };
}

function gateOf(
  tools: Tool[],
  options: { answer?: boolean | Error; hooks?: Hooks } = {},
) {
  const events: EventInput[] = [];
  const asked: ApprovalRequest[] = [];
  const gate = new ToolGate({
    tools,
    hooks: options.hooks ?? noHooks,
    emit: (event) => events.push(event),
    ...(options.answer !== undefined
      ? {
        asker: (request: ApprovalRequest) => {
          asked.push(request);
          const answer = options.answer!;
          return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
        },
        askerName: "the test",
      }
      : {}),
  });
  let n = 0;
  const call = (name: string, args: Record<string, unknown>): Promise<ToolOutcome> =>
    gate.call({ id: `c${++n}`, name, arguments: JSON.stringify(args) }, {
      session_id: "s1",
      job_dir: "/",
      env: {},
      host_env: {},
      signal: new AbortController().signal,
      keep: (outcome) => Promise.resolve(outcome),
    });
  return { gate, call, events, asked };
}

Deno.test("gate: a tool not permitted by its rules is not offered; a deny rule is never asked about", async () => {
  const { tools, ran, cleanup } = await setup();
  try {
    const { gate, call, events, asked } = gateOf(tools, { answer: true });
    assert.deepEqual(gate.offered.map((t) => t.spec.name), ["lookup", "read_file", "write_file"]);
    const dropped = await call("drop_all", {});
    assert.equal(dropped.status, "denied");
    assert.equal(dropped.content, 'denied: drop_all is denied by plugins[0].tools.deny "drop*"');
    assert.equal(asked.length, 0, "a deny rule is not put to the approver");
    assert.deepEqual(ran, []);
    assert.ok(events.some((e) => e.type === "tool.denied" && e.tool === "drop_all"));
    // Outside tools.allow: the approver is asked, and its yes runs the call once.
    assert.deepEqual(await call("other", {}), { status: "ok", content: "other ran" });
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.rule, 'plugins[0].tools.allow: ["other"]');
    assert.deepEqual(await call("lookup", {}), { status: "ok", content: "lookup ran" });
    assert.equal(asked.length, 1, "an allowed call is not asked about");
  } finally {
    await cleanup();
  }
});

Deno.test("gate: a path outside the roots is asked about; yes reads it, no and failure deny it", async () => {
  const { dir, outside, tools, cleanup } = await setup();
  try {
    const yes = gateOf(tools, { answer: true });
    assert.deepEqual(await yes.call("read_file", { path: `${dir}/inside.txt` }), {
      status: "ok",
      content: "inside text",
    });
    assert.equal(yes.asked.length, 0);
    assert.deepEqual(await yes.call("read_file", { path: `${outside}/note.txt` }), {
      status: "ok",
      content: "outside text",
    });
    assert.equal(yes.asked[0]!.tool, "read_file");
    assert.equal(yes.asked[0]!.session_id, "s1");
    assert.match(yes.asked[0]!.reason, /is outside tools\.read_file\.paths/);
    assert.equal(yes.asked[0]!.rule, `tools.read_file.paths: ["${await Deno.realPath(outside)}"]`);

    const no = gateOf(tools, { answer: false });
    const rejected = await no.call("read_file", { path: `${outside}/note.txt` });
    assert.equal(rejected.status, "denied");
    assert.match(
      rejected.content,
      /the test rejected the call; to allow such calls without asking, add tools/,
    );

    const failing = gateOf(tools, { answer: new Error("the approver is down") });
    assert.equal((await failing.call("read_file", { path: `${outside}/note.txt` })).status, "denied");

    const nobody = gateOf(tools);
    const alone = await nobody.call("read_file", { path: `${outside}/note.txt` });
    assert.equal(alone.status, "denied");
    assert.match(
      alone.content,
      /; to allow it, add tools\.read_file\.paths: \[".*"\] to the job, or name an approver \(approval: \{command \| url\}\)$/,
    );
    // A .git write is a prohibition: nobody is asked, nothing is written.
    const git = await yes.call("write_file", { path: ".git/config", content: "x" });
    assert.equal(git.status, "denied");
    assert.equal(yes.asked.length, 1);
  } finally {
    await cleanup();
  }
});

Deno.test("gate: arguments a pre_tool_call hook modifies run under the rules alone, not the approval", async () => {
  const { dir, outside, tools, cleanup } = await setup();
  try {
    const hooks: Hooks = {
      ...noHooks,
      preToolCall: (payload) =>
        Promise.resolve(
          payload.args.path === `${dir}/inside.txt`
            ? { action: "modify", args: { path: `${outside}/note.txt` } }
            : { action: "allow" },
        ),
    };
    const { call, asked } = gateOf(tools, { answer: true, hooks });
    const modified = await call("read_file", { path: `${dir}/inside.txt` });
    assert.equal(modified.status, "denied");
    assert.match(modified.content, /the arguments pre_tool_call gave are outside the rules/);
    assert.equal(asked.length, 0);
  } finally {
    await cleanup();
  }
});

Deno.test("gate: the approver is shown where a path leads; the approved call opens that object alone", async () => {
  const { dir, outside, cleanup } = await setup();
  try {
    await Deno.symlink(`${outside}/note.txt`, `${dir}/link.txt`);
    await Deno.mkdir(`${outside}/sub`);
    await Deno.writeTextFile(`${outside}/sub/other.txt`, "other text");
    const real = await Deno.realPath(outside);
    // read_file's roots here are ".", the job directory "/": a narrower tool for the case.
    const narrow = await builtinTools({ read_file: { paths: [dir] } }, { job_dir: dir });
    const yes = gateOf(narrow, { answer: true });
    assert.deepEqual(await yes.call("read_file", { path: `${dir}/link.txt` }), {
      status: "ok",
      content: "outside text",
    });
    assert.equal(yes.asked[0]!.subject, `${real}/note.txt`);
    // Swapped by the approver (as a racing command would): the approval does not follow the new link.
    const swapping = new ToolGate({
      tools: narrow,
      hooks: noHooks,
      emit: () => {},
      asker: async () => {
        await Deno.remove(`${dir}/link.txt`);
        await Deno.symlink(`${outside}/sub/other.txt`, `${dir}/link.txt`);
        return true;
      },
    });
    const swapped = await swapping.call({
      id: "c1",
      name: "read_file",
      arguments: `{"path":"${dir}/link.txt"}`,
    }, {
      session_id: "s1",
      job_dir: "/",
      env: {},
      host_env: {},
      signal: new AbortController().signal,
      keep: (outcome) => Promise.resolve(outcome),
    });
    assert.equal(swapped.status, "denied");
    assert.match(swapped.content, /now leads to .*sub\/other\.txt, not to .*note\.txt the approver allowed/);
  } finally {
    await cleanup();
  }
});

Deno.test("gate: the shell policy is evaluated once per call, allowed, approved or denied", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-gate-shell-" }));
  try {
    // The real evaluator, counted as the tool is given it.
    const evaluated: string[] = [];
    const evaluate: typeof evaluateShellCommand = (command, rules) => {
      evaluated.push(command);
      return evaluateShellCommand(command, rules);
    };
    // On the host (`sandbox: off`): what is counted is the policy, not the sandbox.
    const shell = shellTool({
      allow: ["echo *"],
      deny: ["rm *"],
      cwd: dir,
      timeoutMs: 10_000,
      maxOutput: 4096,
      sandbox: "off",
      evaluate,
    });
    const { call, asked } = gateOf([shell], { answer: true });
    assert.deepEqual(await call("shell", { command: "echo hi" }), { status: "ok", content: "hi\n" });
    assert.deepEqual(evaluated, ["echo hi"]);
    // Outside `allow`, approved: asked once, evaluated once, and the line judged is the line run.
    assert.deepEqual(await call("shell", { command: "printf ok" }), { status: "ok", content: "ok" });
    assert.deepEqual(evaluated, ["echo hi", "printf ok"]);
    assert.equal(asked.length, 1);
    // Forbidden by deny: never asked, never run, evaluated once.
    await Deno.writeTextFile(`${dir}/keep.txt`, "kept");
    assert.equal((await call("shell", { command: "rm keep.txt" })).status, "denied");
    assert.deepEqual(evaluated, ["echo hi", "printf ok", "rm keep.txt"]);
    assert.equal(asked.length, 1);
    assert.equal(await Deno.readTextFile(`${dir}/keep.txt`), "kept");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gate: an approval widens the scope of that call alone; the next identical call is asked again", async () => {
  const { dir, outside, cleanup } = await setup();
  try {
    const narrow = await builtinTools({ read_file: { paths: [dir] } }, { job_dir: dir });
    const answers = [true, false];
    const asked: ApprovalRequest[] = [];
    const gate = new ToolGate({
      tools: narrow,
      hooks: noHooks,
      emit: () => {},
      asker: (request) => {
        asked.push(request);
        return Promise.resolve(answers.shift() ?? false);
      },
    });
    let n = 0;
    const call = (path: string) =>
      gate.call({ id: `c${++n}`, name: "read_file", arguments: JSON.stringify({ path }) }, {
        session_id: "s1",
        job_dir: dir,
        env: {},
        host_env: {},
        signal: new AbortController().signal,
        keep: (outcome) => Promise.resolve(outcome),
      });
    assert.deepEqual(await call(`${outside}/note.txt`), { status: "ok", content: "outside text" });
    // The same call again: the approval was not remembered, so it is asked about (and this time refused).
    const again = await call(`${outside}/note.txt`);
    assert.equal(again.status, "denied");
    assert.equal(asked.length, 2);
    // The allowed neighbour: a call inside the roots is not asked about.
    assert.deepEqual(await call(`${dir}/inside.txt`), { status: "ok", content: "inside text" });
    assert.equal(asked.length, 2);
  } finally {
    await cleanup();
  }
});

Deno.test("gate: only the gate (and the approvers it asks) knows whether a call was approved; no tool module reads it", () => {
  const root = new URL(".", import.meta.url).pathname;
  const mentions: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory) walk(`${path}/`);
      // Tests aside, and the approvers the gate asks (approval*.ts), where a decision is stored as such.
      else if (/\.ts$/.test(entry.name) && !/_test\.ts$|^approval/.test(entry.name)) {
        if (/approved/i.test(Deno.readTextFileSync(path))) mentions.push(path.slice(root.length));
      }
    }
  };
  walk(root);
  // The gate itself does (the neighbour that shows the search finds what it looks for).
  assert.deepEqual(mentions, ["gate.ts"]);
});
