/** Plugin loading through `hermes run`: same-named single-file plugins, and plugins that may run programs. */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const counter = (command: string) =>
  `export function register(ctx) {
  ctx.registerCommand("${command}", {
    description: "count in my own state",
    handler: async () => {
      const n = ((await ctx.state.get("n")) ?? 0) + 1;
      await ctx.state.set("n", n);
      return "${command} " + n;
    },
  });
}
`;

async function finals(dir: string, job: string, prompts: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const prompt of prompts) {
    const { code, stdout, stderr } = await hermes(["run", job, "-p", prompt, "--output", "json"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(code, 0, stderr);
    out.push(JSON.parse(stdout).final);
  }
  return out;
}

Deno.test({
  name: "single-file plugins with the same file name in different directories load together",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "r.yaml": "- content: hi\n",
    "a/mod.ts": counter("from-a"),
    "b/mod.ts": counter("from-b"),
    "x/memory.ts": counter("from-x"),
    "y/memory.ts": counter("from-y"),
    "job.yaml": `name: two\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n` +
      `plugins: [{ path: ./a/mod.ts }, { path: ./b/mod.ts }, { path: ./x/memory.ts }, { path: ./y/memory.ts }]\n`,
  });
  // Each keeps its own state: two plugins never share an identity because their files share a name.
  assert.deepEqual(await finals(dir, "job.yaml", ["/from-a", "/from-b", "/from-a", "/from-x", "/from-y"]), [
    "from-a 1",
    "from-b 1",
    "from-a 2",
    "from-x 1",
    "from-y 1",
  ]);
  const check = await hermes(["plugins", "check", "job.yaml", "--json"], { cwd: dir, home: dir });
  assert.equal(check.code, 0, check.stderr);
  const names = (JSON.parse(check.stdout) as { name: string }[]).map((p) => p.name);
  assert.deepEqual(names, ["a", "b", "x.memory", "y.memory"]);
  const list = await hermes(["plugins", "list", "job.yaml", "--json"], { cwd: dir, home: dir });
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual((JSON.parse(list.stdout) as { name: string }[]).map((p) => p.name), names);
});

Deno.test({
  name: "the same plugin listed twice, or two commands of one name, are still refused",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "r.yaml": "- content: hi\n",
    "a/mod.ts": counter("same"),
    "b/mod.ts": counter("same"),
    "twice.yaml": `name: twice\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n` +
      `plugins: [{ path: ./a/mod.ts }, { path: ./a/mod.ts }]\n`,
    "clash.yaml": `name: clash\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n` +
      `plugins: [{ path: ./a/mod.ts }, { path: ./b/mod.ts }]\n`,
  });
  const twice = await hermes(["run", "twice.yaml"], { cwd: dir, home: dir });
  assert.equal(twice.code, 2);
  assert.match(twice.stderr, /plugin "a" is already registered by plugin "a"/);
  const clash = await hermes(["run", "clash.yaml"], { cwd: dir, home: dir });
  assert.equal(clash.code, 2);
  assert.match(clash.stderr, /command "\/same" is already registered by plugin "a"/);
});

const RUNNER = `export function register(ctx) {
  ctx.registerCommand("run-it", {
    description: "run the granted program",
    handler: async (args) => {
      try {
        const out = await new Deno.Command(args.trim() || "echo", { args: ["from", "plugin"] }).output();
        return "ran: " + new TextDecoder().decode(out.stdout).trim();
      } catch (error) {
        return "refused: " + error.message;
      }
    },
  });
}
`;

Deno.test({
  name: "a plugin granted run: [prog] starts and can run it; other programs stay refused",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), {
    "r.yaml": "- content: hi\n",
    "runner.ts": RUNNER,
    "job.yaml": `name: runs\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n` +
      `plugins: [{ path: ./runner.ts, permissions: { run: [echo] } }]\n`,
    "none.yaml": `name: none\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n` +
      `plugins: [{ path: ./runner.ts }]\n`,
    "missing.yaml": `name: missing\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n` +
      `plugins: [{ path: ./runner.ts, permissions: { run: [no-such-program-h10] } }]\n`,
  });
  assert.deepEqual(await finals(dir, "job.yaml", ["/run-it echo"]), ["ran: from plugin"]);
  const [other] = await finals(dir, "job.yaml", ["/run-it ls"]);
  assert.match(other!, /^refused: .*(run|Requires)/i);
  const [ungranted] = await finals(dir, "none.yaml", ["/run-it echo"]);
  assert.match(ungranted!, /^refused: /);
  const missing = await hermes(["run", "missing.yaml"], { cwd: dir, home: dir });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Cannot grant run "no-such-program-h10": no such program on PATH/);
});
