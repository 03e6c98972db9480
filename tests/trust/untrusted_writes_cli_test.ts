/**
 * Nothing an untrusted job writes makes the host run code, through `hermes run`: under `--untrusted` (and a
 * policy's `protect_job`) the job's repository `.git`, its job file and the other job files at the top of its
 * directory stay read-only for `output.file`, `write_file` and the shell sandbox's write roots (real bwrap),
 * while ordinary files there are still written. `output.file` refuses `.git/` for every job.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { referenceServers } from "../../runtime/mcp/_testing.ts";

const OTHER_JOB = "name: other\nprompt: a later, trusted run loads this\n";

/** A git repository holding the job, another job file and the replies. */
async function repo(job: string, replies = "- content: report text\n"): Promise<string> {
  const dir = await tempDir("hermes-protect-");
  await writeFiles(dir, { "job.yaml": job, "other.yaml": OTHER_JOB, "r.yaml": replies });
  const init = await new Deno.Command("git", { args: ["init", "-q"], cwd: dir, stderr: "piped" }).output();
  assert.ok(init.success, new TextDecoder().decode(init.stderr));
  return dir;
}

const HEAD = "name: protect\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: go\n";

async function text(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}

Deno.test("protect: output.file refuses .git everywhere (exit 2, located); a file beside it is written", async () => {
  const dir = await repo(HEAD + "output: { file: .git/config }\n");
  try {
    const config = await text(`${dir}/.git/config`);
    const r = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^hermes: job\.yaml:4:\d+: output\.file: "\.git\/config" is inside a \.git directory/m,
    );
    assert.equal(await text(`${dir}/.git/config`), config);

    await writeFiles(dir, { "job.yaml": HEAD + "output: { file: out/report.md }\n" });
    const ok = await hermes(["run", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(await text(`${dir}/out/report.md`), "report text");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("protect: --untrusted output.file may not replace another job file; report.md is written", async () => {
  const dir = await repo(HEAD + "output: { file: ./other.yaml }\n");
  try {
    const r = await hermes(["run", "job.yaml", "--untrusted"], { cwd: dir, home: dir });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^hermes: job\.yaml:4:\d+: output\.file: refused by --untrusted: "\.\/other\.yaml" is one of the job's protected files/m,
    );
    assert.equal(await text(`${dir}/other.yaml`), OTHER_JOB);

    await writeFiles(dir, { "job.yaml": HEAD + "output: { file: report.md }\n" });
    const ok = await hermes(["run", "job.yaml", "--untrusted"], { cwd: dir, home: dir });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(await text(`${dir}/report.md`), "report text");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("protect: --untrusted write_file keeps job files read-only under paths: [.]; notes.txt is written", async () => {
  const dir = await repo(
    HEAD + "tools: { write_file: { paths: [.] } }\n",
    `- tool_calls: [{ name: write_file, arguments: { path: other.yaml, content: "name: evil" } }]
- tool_calls: [{ name: write_file, arguments: { path: ./sub/../job.yaml, content: "name: evil" } }]
- tool_calls: [{ name: write_file, arguments: { path: notes.txt, content: "fine" } }]
- content: done
`,
  );
  try {
    const job = await text(`${dir}/job.yaml`);
    const { code, stderr, events } = await runEvents(dir, { args: ["--untrusted"] });
    assert.equal(code, 0, stderr);
    const results = events.filter((e) => e.type === "tool.result");
    assert.deepEqual(results.map((e) => e.status), ["denied", "denied", "ok"], JSON.stringify(results));
    assert.match(String(results[0]!.content), /protected job's \.git, job files/);
    assert.equal(await text(`${dir}/other.yaml`), OTHER_JOB);
    assert.equal(await text(`${dir}/job.yaml`), job);
    assert.equal(await text(`${dir}/notes.txt`), "fine");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "protect: --untrusted shell sandbox write [.] cannot change .git or job files; other files are written",
  ignore: withoutSandbox,
  async fn() {
    const command = [
      "echo '[core] fsmonitor = touch /tmp/pwned' | tee -a .git/config",
      "echo '#!/bin/sh' | tee .git/hooks/post-checkout",
      "echo 'prompt: evil' | tee -a other.yaml",
      "rm -f other.yaml",
      "mv job.yaml moved.yaml",
      "echo fine | tee written.txt",
    ].map((line) => `${line} >/dev/null 2>&1 || echo "refused: ${line.split("|").pop()!.trim()}"`)
      .join("; ");
    const dir = await repo(
      HEAD + "tools: { shell: { sandbox: { write: [.] } } }\n",
      `- tool_calls: [{ name: shell, arguments: { command: ${JSON.stringify(command)} } }]
- content: done
`,
    );
    try {
      const config = await text(`${dir}/.git/config`);
      const job = await text(`${dir}/job.yaml`);
      const { code, stderr, events } = await runEvents(dir, { args: ["--untrusted"] });
      assert.equal(code, 0, stderr);
      const output = String(events.find((e) => e.type === "tool.result")?.content ?? "");
      for (const refused of ["tee -a .git/config", "tee .git/hooks/post-checkout", "tee -a other.yaml"]) {
        assert.match(output, new RegExp(`refused: ${refused.replaceAll(".", "\\.")}\\n`), output);
      }
      assert.equal(await text(`${dir}/.git/config`), config);
      assert.equal(await text(`${dir}/.git/hooks/post-checkout`), null);
      assert.equal(await text(`${dir}/other.yaml`), OTHER_JOB);
      assert.equal(await text(`${dir}/job.yaml`), job);
      assert.equal(await text(`${dir}/moved.yaml`), null);
      assert.equal(await text(`${dir}/written.txt`), "fine\n");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("protect: a policy's protect_job holds write_file too, and refuses sandbox: off", async () => {
  const dir = await repo(
    HEAD + "tools: { write_file: { paths: [.] } }\n",
    `- tool_calls: [{ name: write_file, arguments: { path: .git/hooks/pre-commit, content: "#!/bin/sh" } }]
- tool_calls: [{ name: write_file, arguments: { path: other.yaml, content: "name: evil" } }]
- tool_calls: [{ name: write_file, arguments: { path: notes.txt, content: "fine" } }]
- content: done
`,
  );
  try {
    await writeFiles(dir, { "policy.yaml": "protect_job: true\n" });
    const { code, stderr, events } = await runEvents(dir, { args: ["--policy", "policy.yaml"] });
    assert.equal(code, 0, stderr);
    const results = events.filter((e) => e.type === "tool.result");
    assert.deepEqual(results.map((e) => e.status), ["denied", "denied", "ok"], JSON.stringify(results));
    assert.equal(await text(`${dir}/other.yaml`), OTHER_JOB);
    assert.equal(await text(`${dir}/notes.txt`), "fine");

    await writeFiles(dir, { "job.yaml": HEAD + "tools: { shell: { sandbox: off } }\n" });
    const off = await hermes(["--policy", "policy.yaml", "run", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(off.code, 2, off.stderr);
    assert.match(
      off.stderr,
      /job\.yaml:4:\d+: tools\.shell\.sandbox: refused by policy policy\.yaml \(protect_job at policy\.yaml:1:\d+\)/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "protect: --untrusted keeps config.yaml's MCP server (write grant on the job directory) off .git and job files",
  ignore: withoutSandbox,
  async fn() {
    const { filesystem } = await referenceServers();
    const write = (path: string, content: string) =>
      `- tool_calls: [{ name: mcp__fs__write_file, arguments: { path: "${path}", content: "${content}" } }]\n`;
    const dir = await tempDir("hermes-protect-");
    const replies = write(`${dir}/.git/config`, "[core] fsmonitor = x") +
      write(`${dir}/other.yaml`, "name: evil") +
      write(`${dir}/notes.txt`, "fine") + "- content: done\n";
    await writeFiles(dir, {
      "job.yaml": HEAD,
      "other.yaml": OTHER_JOB,
      "r.yaml": replies,
      // The host's own server, granted the job directory (as a checkout's tooling would be).
      "config.yaml": `mcp_servers:
  fs: { command: ${filesystem}, args: ["${dir}"], sandbox: { write: ["${dir}"] }, required: true }
`,
    });
    const init = await new Deno.Command("git", { args: ["init", "-q"], cwd: dir }).output();
    assert.ok(init.success);
    try {
      const config = await text(`${dir}/.git/config`);
      const { code, stderr, events } = await runEvents(dir, { args: ["--untrusted"] });
      assert.equal(code, 0, stderr);
      const results = events.filter((e) => e.type === "tool.result");
      assert.deepEqual(results.map((e) => e.status), ["error", "error", "ok"], JSON.stringify(results));
      assert.equal(await text(`${dir}/.git/config`), config);
      assert.equal(await text(`${dir}/other.yaml`), OTHER_JOB);
      assert.equal(await text(`${dir}/notes.txt`), "fine");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
