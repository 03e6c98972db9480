/**
 * Host programs never take their environment from the job, through `hermes run`: the network bridge of a
 * shell host list uses Hermes's own deno (a job's `env: {HERMES_DENO}` is not run on the host) and still
 * reaches the granted host; the approval command runs without the job's `BASH_ENV` and `PATH` and still
 * approves. Under a trust policy a job may not set variables that steer programs unless the policy names
 * them (exit 2 naming the key and the rule); `--untrusted` names none; ordinary variables still pass.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { netTargets } from "../../runtime/sandbox/_testing.ts";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name: "host env: a job's HERMES_DENO does not choose the bridge's deno; the host list still works",
  ignore: withoutSandbox,
  async fn() {
    const s = netTargets();
    const dir = await tempDir("hermes-host-env-");
    try {
      // The job's "deno": leaves a mark on the host, then behaves, so only the mark tells whether it ran.
      await writeFiles(dir, {
        "job.yaml": `name: bridged
model: { provider: scripted, script: ./replies.yaml }
prompt: Fetch.
env: { HERMES_DENO: ./fake-deno.sh }
tools:
  shell: { sandbox: { net: ["127.0.0.1:${s.granted}"] } }
`,
        "fake-deno.sh": `#!/bin/sh\necho ran > ${dir}/host-mark\nexec ${Deno.execPath()} "$@"\n`,
        "replies.yaml":
          `- tool_calls: [{ name: shell, arguments: { command: "curl -sS -m 10 http://127.0.0.1:${s.granted}/" } }]
- content: Done.
`,
      });
      await Deno.chmod(`${dir}/fake-deno.sh`, 0o755);
      const { code, stderr, events } = await runEvents(dir);
      assert.equal(code, 0, stderr);
      const result = events.find((e) => e.type === "tool.result");
      assert.equal(result?.content, "granted\n", JSON.stringify(result));
      assert.equal(await exists(`${dir}/host-mark`), false, "the job's HERMES_DENO ran on the host");
    } finally {
      await s.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("host env: the approval command runs without the job's BASH_ENV and PATH, and still approves", async () => {
  const dir = await tempDir("hermes-host-env-");
  const outside = await tempDir("hermes-host-env-outside-");
  try {
    await writeFiles(outside, { "wanted.txt": "approved text" });
    await writeFiles(dir, {
      "in/a.txt": "inside",
      "job.yaml": `name: approved
model: { provider: scripted, script: ./r.yaml }
prompt: go
env: { BASH_ENV: ./evil.sh, PATH: "./bin:/usr/local/bin:/usr/bin:/bin" }
tools: { read_file: { paths: [./in] } }
approval: { command: [./approve.sh], timeout: 20s }
`,
      "r.yaml": `- tool_calls: [{ name: read_file, arguments: { path: "${outside}/wanted.txt" } }]
- content: done
`,
      // The operator's approver: a bash script that reads the call and allows it.
      "approve.sh": "#!/bin/bash\ncat > /dev/null\necho allow\n",
      // What the job would have the host run instead: a start-up file, and a `cat` earlier on its PATH.
      "evil.sh": `echo bash_env > ${dir}/mark-bash-env\n`,
      "bin/cat": `#!/bin/sh\necho path > ${dir}/mark-path\nexec /bin/cat "$@"\n`,
    });
    await Deno.chmod(`${dir}/approve.sh`, 0o755);
    await Deno.chmod(`${dir}/bin/cat`, 0o755);
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const result = events.find((e) => e.type === "tool.result");
    assert.deepEqual([result?.status, result?.content], ["ok", "approved text"], JSON.stringify(result));
    assert.equal(await exists(`${dir}/mark-bash-env`), false, "the job's BASH_ENV ran in the approver");
    assert.equal(await exists(`${dir}/mark-path`), false, "the job's PATH chose the approver's cat");
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

const JOB_HEAD = "name: steer\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n";

async function project(files: Record<string, string>): Promise<string> {
  return await writeFiles(await tempDir("hermes-host-env-"), { "r.yaml": "- content: ran\n", ...files });
}

Deno.test("host env: --untrusted refuses env names that steer programs, each located; others still run", async () => {
  const dir = await project({
    "job.yaml": JOB_HEAD +
      "env:\n  LD_PRELOAD: ./x.so\n  HERMES_DENO: ./x.sh\n  GIT_CONFIG_COUNT: '1'\n  GIT_PAGER: cat\n" +
      "  node_options: --require=./x.js\n",
  });
  try {
    const r = await hermes(["run", "job.yaml", "--untrusted"], { cwd: dir, home: dir });
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.deepEqual(
      lines.map((line) =>
        /job\.yaml:(\d+):\d+: (env\.\w+): refused by --untrusted \(steering_env\)/.exec(line)?.slice(1)
      ),
      [["5", "env.LD_PRELOAD"], ["6", "env.HERMES_DENO"], ["7", "env.GIT_CONFIG_COUNT"], [
        "9",
        "env.node_options",
      ]],
      r.stderr,
    );
    assert.doesNotMatch(r.stderr, /GIT_PAGER|at .*:\d+:\d+\)|\n\s+at /);

    // The neighbours: ordinary variables (a pager, an unbuffered Python, a token) run under --untrusted.
    await writeFiles(dir, {
      "job.yaml": JOB_HEAD + "env: { GIT_PAGER: cat, PYTHONUNBUFFERED: '1', GH_TOKEN: x, CI: 'true' }\n",
    });
    const ok = await hermes(["run", "job.yaml", "--untrusted"], { cwd: dir, home: dir });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.trim(), "ran");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("host env: a policy refuses steering names it does not name, in env: and MCP env mappings", async () => {
  const dir = await project({
    "policy.yaml": "steering_env: [PATH]\n",
    "job.yaml": JOB_HEAD + "env: { PATH: /usr/bin:/bin, BASH_ENV: ./x.sh }\n" +
      "mcp_servers:\n  fs: { command: npx, env: { NODE_OPTIONS: --require=./x.js, LOG: debug } }\n",
  });
  try {
    const r = await hermes(["--policy", "policy.yaml", "run", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 2, r.stderr);
    assert.match(
      lines[0]!,
      /^hermes: job\.yaml:4:\d+: env\.BASH_ENV: refused by policy policy\.yaml \(steering_env at policy\.yaml:1:\d+\): BASH_ENV steers the programs the job's commands run \(allowed: PATH\)$/,
    );
    assert.match(
      lines[1]!,
      /^hermes: job\.yaml:6:\d+: mcp_servers\.fs\.env\.NODE_OPTIONS: refused by policy/,
    );

    // The neighbour: what the policy names (PATH) is admitted.
    await writeFiles(dir, { "job.yaml": JOB_HEAD + "env: { PATH: /usr/bin:/bin }\n" });
    const ok = await hermes(["--policy", "policy.yaml", "run", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.trim(), "ran");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "host env: a job's loader variables reach its sandboxed command, never the host's launcher or bwrap",
  ignore: withoutSandbox,
  async fn() {
    const dir = await writeFiles(await tempDir("hermes-host-env-"), {
      "job.yaml": `name: loader
model: { provider: scripted, script: ./r.yaml }
prompt: go
env: { LD_DEBUG: libs }
tools: { shell: {} }
`,
      "r.yaml": `- tool_calls: [{ name: shell, arguments: { command: "echo seen=$LD_DEBUG" } }]
- content: done
`,
    });
    try {
      const { code, stderr, events } = await runEvents(dir);
      assert.equal(code, 0, stderr);
      const output = String(events.find((e) => e.type === "tool.result")?.content ?? "");
      assert.match(output, /^seen=libs$/m, output);
      // ld.so names every program it starts under LD_DEBUG=libs: the command's, not the host's launcher's.
      const started = [...output.matchAll(/initialize program: (\S+)/g)].map((match) => match[1]!);
      assert.ok(started.length > 0, output);
      assert.deepEqual(started.filter((program) => /bwrap|dash/.test(program)), [], output);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
