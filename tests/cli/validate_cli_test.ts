/** `hermes validate` and RPC `job.validate` refuse what `run` or `daemon` would, each with file:line:col. */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { RpcClient } from "../_testing/rpc_client.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const MODEL = "model: { provider: scripted, script: ./r.yaml }";

/** Job bodies that validate before, each refused by run or daemon; the line:col is where the key path is. */
const REFUSED: Record<string, { yaml: string; error: RegExp }> = {
  "cron.yaml": {
    yaml: `name: c\n${MODEL}\nprompt: x\nschedule:\n  cron: "61 * * * *"\n`,
    error: /cron\.yaml:5:9: schedule\.cron: invalid cron "61 \* \* \* \*"/,
  },
  "zone.yaml": {
    yaml: `name: z\n${MODEL}\nprompt: x\nschedule: { cron: "0 9 * * *", timezone: Mars/Olympus }\n`,
    error: /zone\.yaml:4:42: schedule\.timezone: unknown time zone "Mars\/Olympus"/,
  },
  "schema.yaml": {
    yaml: `name: s\n${MODEL}\nprompt: x\noutput:\n  schema: { type: objec }\n`,
    error:
      /schema\.yaml:5:19: output\.schema\.type: not a usable JSON Schema: must be equal to one of the allowed/,
  },
  "noscript.yaml": {
    yaml: `name: n\nmodel:\n  provider: scripted\nprompt: x\n`,
    error: /noscript\.yaml:3:13: model\.provider: provider scripted needs model\.script/,
  },
  "plugin.yaml": {
    yaml: `name: p\n${MODEL}\nprompt: x\nplugins:\n  - path: ./plugins/missing.ts\n`,
    error: /plugin\.yaml:5:11: plugins\[0\]\.path: no such file or directory "\.\/plugins\/missing\.ts"/,
  },
  "escape.yaml": {
    yaml: `name: e\n${MODEL}\nprompt: x\noutput: { file: ../outside.md }\n`,
    error: /escape\.yaml:4:17: output\.file: "\.\.\/outside\.md" is outside the job directory/,
  },
  "escape_template.yaml": {
    yaml: `name: t\n${MODEL}\ninputs: { n: { type: string, default: a } }\nprompt: x\n` +
      `output: { file: "../{{ inputs.n }}.md" }\n`,
    error: /escape_template\.yaml:5:17: output\.file: "\.\.\/\{\{ inputs\.n \}\}\.md" is outside/,
  },
};

/** The valid neighbours of each refused case: they must keep validating and running. */
const ACCEPTED = {
  "ok.yaml": `name: ok\n${MODEL}\nprompt: x\nschedule: { cron: "0 9 * * 1-5", timezone: Europe/Paris }\n` +
    `output: { file: "./out/{{ inputs.n }}.md", schema: { type: object } }\n` +
    `inputs: { n: { type: string, default: report } }\nplugins: [{ path: ./plugin.ts }]\n`,
  "r.yaml": `- content: '{"ok": true}'\n`,
  "plugin.ts": "export function register() {}\n",
};

async function fixture(): Promise<string> {
  const dir = await tempDir();
  await writeFiles(dir, ACCEPTED);
  for (const [name, { yaml }] of Object.entries(REFUSED)) await writeFiles(dir, { [`bad/${name}`]: yaml });
  await writeFiles(dir, { "bad/r.yaml": ACCEPTED["r.yaml"], "bad/x.replies.yaml": "- content: hi\n" });
  await writeFiles(dir, { "bad/config.yaml": "not: a job\n" });
  return dir;
}

Deno.test("validate refuses what run or daemon would, each with file:line:col and the key path", async () => {
  const dir = await fixture();
  for (const [name, { error }] of Object.entries(REFUSED)) {
    const { code, stdout, stderr } = await hermes(["validate", `bad/${name}`], { cwd: dir, home: dir });
    assert.equal(code, 2, `${name}: ${stderr}`);
    assert.equal(stdout, "");
    assert.match(stderr, error, name);
  }
  const ok = await hermes(["validate", "ok.yaml"], { cwd: dir, home: dir });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "ok.yaml: ok (ok)\n");
});

Deno.test({
  name: "run refuses the same (before any model call, but output.schema); the valid neighbour runs",
  ignore: withoutSandbox,
}, async () => {
  const dir = await fixture();
  for (const name of ["noscript.yaml", "plugin.yaml", "escape.yaml", "escape_template.yaml"]) {
    const { code, stderr } = await hermes(["run", `bad/${name}`, "--output", "json"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(code, 2, `${name}: ${stderr}`);
    // run checks output.file after substitution: the whole resolved path.
    const substituted = /escape_template\.yaml:5:17: output\.file: "\.\.\/a\.md" is outside/;
    assert.match(stderr, name === "escape_template.yaml" ? substituted : REFUSED[name]!.error);
  }
  const sessions = await hermes(["sessions", "list", "--json"], { cwd: dir, home: dir });
  assert.deepEqual(JSON.parse(sessions.stdout), [], "no session was started: no model call");
  // output.schema is compiled while the model works on the first request: the run stops there, exit 2.
  const schema = await hermes(["run", "bad/schema.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(schema.code, 2, schema.stderr);
  assert.match(schema.stderr, REFUSED["schema.yaml"]!.error);
  assert.equal(JSON.parse(schema.stdout).terminal_reason, "invalid_input");
  const ok = await hermes(["run", "ok.yaml", "--output", "json"], { cwd: dir, home: dir });
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(`${dir}/out/report.md`)), { ok: true });
  const daemon = await hermes(["daemon", "bad/cron.yaml"], { cwd: dir, home: dir });
  assert.equal(daemon.code, 2);
  assert.match(daemon.stderr, REFUSED["cron.yaml"]!.error);
});

Deno.test("validate DIR checks the job files in it, names the other YAML files skipped, and every error of a file", async () => {
  const dir = await fixture();
  await writeFiles(dir, {
    "many/two.yaml": `name: Two\n${MODEL}\npromt: x\nlimits: { max_turns: 0 }\noutput: { file: /etc/x }\n`,
    "many/r.yaml": ACCEPTED["r.yaml"],
  });
  const { code, stdout, stderr } = await hermes(["validate", "bad", "--json"], { cwd: dir, home: dir });
  assert.equal(code, 2);
  const results = JSON.parse(stdout) as { file: string; valid: boolean; errors?: string[] }[];
  const names = results.map((r) => r.file.replace(/^bad\//, ""));
  assert.deepEqual(names, Object.keys(REFUSED).sort());
  for (const r of results) {
    assert.equal(r.valid, false, r.file);
    assert.match(r.errors!.join("\n"), REFUSED[r.file.replace(/^bad\//, "")]!.error);
  }
  // Replies, config.yaml and any other YAML are not job files: each is named as skipped.
  assert.deepEqual(
    stderr.trim().split("\n").map((line) => /^hermes: skipped (\S+): not a job file/.exec(line)?.[1]),
    ["bad/config.yaml", "bad/r.yaml", "bad/x.replies.yaml"],
  );
  // Every error of one file, each on its own line with its position.
  const many = await hermes(["validate", "many/two.yaml"], { cwd: dir, home: dir });
  assert.equal(many.code, 2);
  const lines = many.stderr.trim().split("\n");
  assert.equal(lines.length, 3, many.stderr);
  assert.match(lines.join("\n"), /two\.yaml:1:7: name: /);
  assert.match(lines.join("\n"), /two\.yaml:3:1: unknown key "promt" \(did you mean "prompt"\?\)/);
  assert.match(lines.join("\n"), /two\.yaml:4:22: limits\.max_turns: /);
  const semantic = await hermes(["validate", "bad/escape.yaml", "bad/plugin.yaml", "ok.yaml"], {
    cwd: dir,
    home: dir,
  });
  assert.equal(semantic.code, 2);
  assert.equal(semantic.stderr.trim().split("\n").length, 2);
  assert.match(semantic.stdout, /ok\.yaml: ok/);
  const both = await writeFiles(dir, {
    "both.yaml":
      `name: b\nmodel: { provider: scripted }\nprompt: x\noutput: { file: ../x, schema: { type: nope } }\n`,
  });
  const all = await hermes(["validate", `${both}/both.yaml`], { cwd: dir, home: dir });
  assert.equal(all.stderr.trim().split("\n").length, 3, all.stderr);
});

Deno.test("RPC job.validate refuses the same, with every error", async () => {
  const dir = await fixture();
  await using client = new RpcClient({ home: dir, cwd: dir });
  for (const [name, { error }] of Object.entries(REFUSED)) {
    const reply = (await client.request("job.validate", { path: `bad/${name}` })).result as {
      valid: boolean;
      error: string;
      errors: string[];
    };
    assert.equal(reply.valid, false, name);
    assert.match(reply.error, error);
    assert.match(reply.errors[0]!, error);
  }
  const inline = (await client.request("job.validate", {
    job: { name: "i", model: { provider: "scripted" }, prompt: "x", output: { file: "../x" } },
  })).result as { valid: boolean; errors: string[] };
  assert.equal(inline.valid, false);
  assert.deepEqual(inline.errors.map((e) => e.replace(/: [^:]*$/, "")), [
    "job: model.provider",
    "job: output.file",
  ]);
  const ok = (await client.request("job.validate", { path: "ok.yaml" })).result;
  assert.deepEqual(ok, { valid: true, name: "ok" });
});

Deno.test("validate: a job's plugin is located in the job even after config.yaml's global plugins", async () => {
  const dir = await fixture();
  const home = await writeFiles(await tempDir(), {
    "global.ts": "export function register() {}\n",
    "config.yaml": "plugins: [{ path: ./global.ts }, { path: ./gone.ts }]\n",
  });
  const { code, stderr } = await hermes(["validate", "bad/plugin.yaml"], { cwd: dir, home });
  assert.equal(code, 2);
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 2, stderr);
  assert.match(lines[0]!, /config\.yaml: plugins\[1\]\.path: no such file or directory ".*\/gone\.ts"/);
  assert.match(lines[1]!, REFUSED["plugin.yaml"]!.error);
  await writeFiles(home, { "config.yaml": "plugins: [{ path: ./global.ts }]\n" });
  const ok = await hermes(["validate", "ok.yaml"], { cwd: dir, home });
  assert.equal(ok.code, 0, ok.stderr);
});

Deno.test("validate DIR: a workflow or compose file is skipped; a job without prompt (run with -p) or with the modeline is checked", async () => {
  const dir = await writeFiles(await tempDir(), {
    "jobs/ci.yaml": "name: CI\non: [push]\njobs: { build: { runs-on: ubuntu-latest } }\n",
    "jobs/compose.yaml": "name: app\nservices: { db: { image: postgres } }\n",
    "jobs/tools-only.yaml": `name: t\n${MODEL}\ntools: { list_dir: {} }\n`,
    "jobs/modeline.yml": "# yaml-language-server: $schema=../job.schema.json\nname: m\npromt: typo\n",
    "jobs/r.yaml": "- content: hi\n",
  });
  const { code, stderr } = await hermes(["validate", "jobs"], { cwd: dir, home: dir });
  assert.equal(code, 2, stderr);
  assert.match(stderr, /^hermes: skipped jobs\/ci\.yaml: not a job file/m);
  assert.match(stderr, /^hermes: skipped jobs\/compose\.yaml: not a job file/m);
  assert.match(stderr, /^hermes: jobs\/modeline\.yml:3:1: unknown key "promt"/m);
  const only = await hermes(["validate", "jobs/tools-only.yaml"], { cwd: dir, home: dir });
  assert.equal(only.code, 0, only.stderr);
  const none = await hermes(["validate", "jobs/none"], { cwd: dir, home: dir });
  assert.equal(none.code, 2);
});

Deno.test("validate agrees with run on this machine: a sandboxed shell tool, plugin or MCP server without a working sandbox is exit 2", async () => {
  const dir = await writeFiles(await tempDir(), {
    "shell.yaml": `name: s\n${MODEL}\nprompt: x\ntools:\n  shell: { allow: ["git *"] }\n`,
    "off.yaml": `name: o\n${MODEL}\nprompt: x\ntools:\n  shell: { allow: ["git *"], sandbox: off }\n`,
    "plugin.yaml": `name: p\n${MODEL}\nprompt: x\nplugins:\n  - path: ./plugin.ts\n`,
    "plugin.ts": "export function register() {}\n",
    "r.yaml": "- content: hi\n",
  });
  const env = { HERMES_BWRAP: `${dir}/no-bwrap-here` };
  const v = await hermes(["validate", "shell.yaml", "off.yaml", "plugin.yaml"], { cwd: dir, home: dir, env });
  assert.equal(v.code, 2, v.stderr);
  assert.match(
    v.stderr,
    /^hermes: shell\.yaml:5:10: tools\.shell: Cannot run the shell tool in its OS sandbox here: /m,
  );
  assert.match(
    v.stderr,
    /^hermes: plugin\.yaml:5:5: plugins\[0\]: Cannot run plugin \.\/plugin\.ts in its OS sandbox here: /m,
  );
  assert.match(v.stdout, /^off\.yaml: ok \(o\)$/m, "the explicit opt-out validates there, as it runs");
  const run = await hermes(["run", "shell.yaml"], { cwd: dir, home: dir, env });
  assert.equal(run.code, 2, "run refuses it too");
});

Deno.test({
  name:
    "validate --deep starts plugins and MCP servers as run does: one that cannot start is exit 2; the others pass",
  ignore: withoutSandbox,
  fn: async () => {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: d\n${MODEL}\nprompt: x\nplugins:\n  - path: ./broken.ts\n`,
      "broken.ts": "export function register() { throw new Error('cannot register'); }\n",
      "mcp.yaml":
        `name: m\n${MODEL}\nprompt: x\nmcp_servers:\n  gone: { command: ./no-such-server, required: true }\n` +
        `  optional: { command: ./no-such-server }\n`,
      "good.yaml": `name: g\n${MODEL}\nprompt: x\nplugins:\n  - path: ./good.ts\n`,
      "good.ts": "export function register() {}\n",
      "r.yaml": "- content: hi\n",
    });
    const shallow = await hermes(["validate", "job.yaml", "mcp.yaml"], { cwd: dir, home: dir });
    assert.equal(shallow.code, 0, shallow.stderr);
    const deep = await hermes(["validate", "--deep", "job.yaml", "mcp.yaml", "good.yaml"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(deep.code, 2, deep.stderr);
    assert.match(
      deep.stderr,
      /^hermes: job\.yaml:5:3: plugins: Cannot load plugin "broken" .*cannot register/m,
    );
    assert.match(deep.stderr, /^hermes: mcp\.yaml:5:9: mcp_servers\.gone: the server does not start: /m);
    assert.match(
      deep.stderr,
      /^hermes: warning: mcp\.yaml:6:13: mcp_servers\.optional: the server does not start/m,
    );
    assert.match(deep.stdout, /^good\.yaml: ok \(g\)$/m);
  },
});
