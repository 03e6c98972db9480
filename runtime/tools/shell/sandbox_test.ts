/**
 * The shell tool's sandbox through the real bubblewrap, from the job keys (`builtinTools` +
 * `checkToolSandbox`) to what a command can see: each known attack next to the granted case that
 * makes the denial meaningful. Skipped with the reason where bwrap cannot run, except in CI.
 */
import assert from "node:assert/strict";
import { builtinTools } from "../builtin.ts";
import { checkToolSandbox, sandboxMode, type ToolSandbox } from "./sandbox.ts";
import type { Tool, ToolContext } from "../tool.ts";
import { ToolsConfig } from "../../config/job_schema.ts";
import { ValidationError } from "../../core/errors.ts";
import { createLogger } from "../../core/log.ts";
import { sandboxTests } from "../../sandbox/_testing.ts";
import { callTool } from "../_testing.ts";
import { probeOnce, probeOptions } from "../../sandbox/probe.ts";

const PATH = "/usr/local/bin:/usr/bin:/bin";
const { ignore, probe: real } = await sandboxTests("shell sandbox tests", PATH);

interface Job {
  dir: string;
  home: string;
  store: string;
  run(command: string): Promise<{ status: string; content: string }>;
}

/**
 * A job directory (with a fake $HOME holding secrets, and a fake Hermes home) whose tools come from `tools`,
 * its sandbox checked as the session does it.
 */
async function job(tools: unknown, test: (job: Job) => Promise<void>): Promise<void> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-shell-sandbox-" }));
  // All inside the job directory: /tmp, where tests make it, is private in the sandbox except for the cwd.
  const dir = `${base}/job`;
  const home = `${dir}/home`;
  const store = `${dir}/hermes-home`;
  await Deno.mkdir(`${home}/.ssh`, { recursive: true });
  await Deno.writeTextFile(`${home}/.ssh/id_ed25519`, "PRIVATE KEY");
  await Deno.writeTextFile(`${home}/notes.txt`, "public notes");
  await Deno.mkdir(store);
  await Deno.writeTextFile(`${store}/state.db`, "RAW STORE");
  await Deno.writeTextFile(`${dir}/job.yaml`, "name: x\n");
  const config = ToolsConfig.parse(tools);
  const env = { PATH, HOME: home, HERMES_TEST_VALUE: "from-context" };
  const sandbox = await checkToolSandbox(config, { job_dir: dir, env, hide: [store, `${store}/state.db`] });
  const shell = (await builtinTools(config, { job_dir: dir, sandbox })).find((t) => t.spec.name === "shell")!;
  const context: ToolContext = {
    session_id: "s",
    job_dir: dir,
    env,
    host_env: env,
    signal: new AbortController().signal,
  };
  try {
    await test({ dir, home, store, run: (command) => callTool(shell, { command }, context) });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

function sandboxTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name: `shell sandbox: ${name}`, ignore, fn });
}

sandboxTest("by default the host is read-only and no path is writable but a private /tmp", async () => {
  await job({ shell: {} }, async ({ dir, run }) => {
    assert.deepEqual(await run("cat job.yaml"), { status: "ok", content: "name: x\n" });
    const touched = await run("touch made.txt");
    assert.equal(touched.status, "error");
    assert.match(touched.content, /Read-only file system/);
    assert.equal(await exists(`${dir}/made.txt`), false);
    assert.deepEqual(await run("echo scratch | tee /tmp/h6-scratch.txt"), {
      status: "ok",
      content: "scratch\n",
    });
    assert.equal(await exists("/tmp/h6-scratch.txt"), false, "/tmp inside is private");
  });
});

sandboxTest(
  "the write roots default to tools.write_file.paths; sandbox.write names them explicitly",
  async () => {
    await job({ shell: {}, write_file: { paths: ["./out"] } }, async ({ dir, run }) => {
      await Deno.mkdir(`${dir}/out`);
      assert.deepEqual(await run("touch out/a.txt && echo done"), { status: "ok", content: "done\n" });
      assert.equal(await exists(`${dir}/out/a.txt`), true);
      assert.match((await run("touch b.txt")).content, /Read-only file system/);
    });
    await job({ shell: { sandbox: { write: ["./build"] } } }, async ({ dir, run }) => {
      assert.equal(await exists(`${dir}/build`), true, "a listed write root is created by the check");
      assert.deepEqual(await run("touch build/a.txt && echo done"), { status: "ok", content: "done\n" });
      assert.match((await run("touch a.txt")).content, /Read-only file system/);
    });
  },
);

sandboxTest("secrets of $HOME and the Hermes store are hidden; the rest of $HOME is readable", async () => {
  await job({ shell: {} }, async ({ home, store, run }) => {
    assert.deepEqual(await run(`cat ${home}/notes.txt`), { status: "ok", content: "public notes" });
    const key = await run(`cat ${home}/.ssh/id_ed25519`);
    assert.equal(key.status, "error");
    assert.doesNotMatch(key.content, /PRIVATE KEY/);
    assert.deepEqual(await run(`ls -A ${home}/.ssh`), { status: "ok", content: "(no output)" });
    const db = await run(`cat ${store}/state.db`);
    assert.equal(db.status, "error");
    assert.doesNotMatch(db.content, /RAW STORE/);
  });
  await job({ shell: { sandbox: { hide: ["./secret"] } } }, async ({ dir, run }) => {
    await Deno.mkdir(`${dir}/secret`);
    await Deno.writeTextFile(`${dir}/secret/token`, "TOKEN");
    assert.doesNotMatch((await run("cat secret/token")).content, /TOKEN/);
  });
});

sandboxTest("read: [...] shows only those paths (and the system directories)", async () => {
  await job({ shell: {} }, async ({ run }) => {
    assert.equal((await run("cat /etc/passwd")).status, "ok");
  });
  await job({ shell: { sandbox: { read: ["."] } } }, async ({ run }) => {
    assert.deepEqual(await run("cat job.yaml"), { status: "ok", content: "name: x\n" });
    assert.equal((await run("git --version")).status, "ok");
    const passwd = await run("cat /etc/passwd");
    assert.equal(passwd.status, "error");
    assert.match(passwd.content, /No such file or directory/);
  });
});

sandboxTest(
  "/proc shows only the sandbox's processes: a parent's secret environment is out of reach",
  async () => {
    const secret = `sk-fake-${crypto.randomUUID()}`;
    const host = new Deno.Command("sleep", {
      args: ["60"],
      env: { OPENAI_API_KEY: secret },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      await job({ shell: {} }, async ({ run }) => {
        const all = await run("cat /proc/*/environ | tr '\\0' '\\n'");
        assert.doesNotMatch(all.content, new RegExp(secret));
        assert.match(all.content, /HERMES_TEST_VALUE=from-context/, "the granted environment is there");
        const pids = (await run("ls /proc")).content.split("\n").filter((name) => /^\d+$/.test(name));
        assert.ok(!pids.includes(String(host.pid)), pids.join(" "));
        assert.ok(pids.length < 10, `a fresh PID namespace, found ${pids.length} processes`);
      });
      // The same command on the host (sandbox: off) does read it: the sandbox is what hides it.
      await job({ shell: { sandbox: "off" } }, async ({ run }) => {
        const found = await run(
          "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a OPENAI_API_KEY=sk-fake",
        );
        assert.match(found.content, new RegExp(secret));
      });
    } finally {
      host.kill("SIGKILL");
      await host.status;
    }
  },
);

sandboxTest("no network unless net: true", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const accepting = (async () => {
    for await (const connection of listener) connection.close();
  })();
  // bash's /dev/tcp from a script in the job directory, not a deno client: a deno under /tmp (npx with HOME
  // there) is hidden by the private /tmp, and the tool's policy refuses redirections on the command line.
  const script = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected\n`;
  const connect = "bash ./connect.sh";
  try {
    await job({ shell: {} }, async ({ dir, run }) => {
      await Deno.writeTextFile(`${dir}/connect.sh`, script);
      const refused = await run(connect);
      assert.equal(refused.status, "error", refused.content);
      assert.match(refused.content, /Connection refused/);
      assert.deepEqual(await run("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"), {
        status: "ok",
        content: "lo\n",
      });
    });
    await job({ shell: { sandbox: { net: true } } }, async ({ dir, run }) => {
      await Deno.writeTextFile(`${dir}/connect.sh`, script);
      assert.deepEqual(await run(connect), { status: "ok", content: "connected\n" });
    });
  } finally {
    listener.close();
    await accepting.catch(() => {});
  }
});

Deno.test("shell sandbox: net takes false, true or a host list; a malformed host is refused", () => {
  const parsed = ToolsConfig.safeParse({
    shell: { sandbox: { net: ["api.github.com", "*.example.com:443"] } },
  });
  assert.equal(parsed.success, true);
  const bad = ToolsConfig.safeParse({ shell: { sandbox: { net: ["http://api.github.com/"] } } });
  assert.equal(bad.success, false);
  assert.match(bad.error!.issues[0]!.message, /expected host or host:port/);
  assert.equal(ToolsConfig.safeParse({ shell: { sandbox: { net: [] } } }).success, false);
  assert.equal(ToolsConfig.safeParse({ shell: { sandbox: { net: true } } }).success, true);
  assert.equal(ToolsConfig.safeParse({ shell: { sandbox: "off" } }).success, true);
  assert.match(
    ToolsConfig.safeParse({ shell: { sandbox: false } }).error!.issues[0]!.message,
    /expected "off" or a mapping/,
  );
});

Deno.test("shell sandbox: sandbox: off warns, runs on the host and is what sandboxMode reports", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-shell-off-" }));
  const lines: string[] = [];
  const log = createLogger({ write: (line) => lines.push(line) });
  const config = ToolsConfig.parse({ shell: { sandbox: "off" } });
  const sandbox = await checkToolSandbox(config, { job_dir: dir, env: { PATH }, log });
  assert.deepEqual(sandbox, { mode: "off" } satisfies ToolSandbox);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^hermes warn: tools\.shell\.sandbox is off: shell commands run on this host/);
  const shell = (await builtinTools(config, { job_dir: dir, sandbox }))[0]!;
  const outcome = await callTool(shell, { command: "touch made.txt && echo made" }, context(dir));
  assert.deepEqual(outcome, { status: "ok", content: "made\n" });
  assert.equal(sandboxMode(config), "off");
  assert.equal(sandboxMode(ToolsConfig.parse({ shell: {} })), "on");
  assert.equal(sandboxMode(ToolsConfig.parse({ read_file: {} })), null);
  assert.equal(await checkToolSandbox(ToolsConfig.parse({ read_file: {} }), { job_dir: dir, env: {} }), null);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("shell sandbox: where the sandbox cannot start, the check fails with the reason and the fixes", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-shell-nobwrap-" }));
  const config = ToolsConfig.parse({ shell: {} });
  for (const bwrap of [`${dir}/no-such-bwrap`, "/bin/false"]) {
    await assert.rejects(
      checkToolSandbox(config, { job_dir: dir, env: { PATH, HERMES_BWRAP: bwrap } }),
      (error: unknown) => {
        assert.ok(error instanceof ValidationError);
        assert.equal(error.exitCode, 2);
        assert.match(error.message, /^Cannot run the shell tool in its OS sandbox: /);
        assert.match(error.message, /install bubblewrap .*apt-get install bubblewrap/);
        assert.match(error.message, /sandbox: off/);
        return true;
      },
    );
  }
  await Deno.remove(dir, { recursive: true });
});

sandboxTest("with read: [...] a cwd outside the grants is an empty directory holding only them", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-shell-cwd-" }));
  await Deno.mkdir(`${dir}/docs`);
  await Deno.writeTextFile(`${dir}/docs/a.md`, "doc");
  await Deno.writeTextFile(`${dir}/job.yaml`, "name: secret-job");
  const config = ToolsConfig.parse({ shell: { sandbox: { read: ["./docs"] } } });
  const sandbox = await checkToolSandbox(config, { job_dir: dir, env: { PATH } });
  assert.equal(sandbox?.mode, "on");
  const shell: Tool = (await builtinTools(config, { job_dir: dir, sandbox: sandbox! }))[0]!;
  const run = await callTool(shell, { command: "ls -A; cat docs/a.md; cat job.yaml" }, context(dir));
  assert.match(run.content, /\ndocs\ndoc/); // after "exit code 1": cat job.yaml failed
  assert.match(run.content, /job\.yaml: No such file or directory/);
  await Deno.remove(dir, { recursive: true });
});

sandboxTest(
  "without a checked sandbox the tool asks the session's one probe, never its own, and still sandboxes",
  async () => {
    if (!real.ok) throw new Error(real.reason);
    const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-shell-lazy-" }));
    // The session's probe (probeOnce) over a bwrap that notes each probe (`--version` is asked by probes only).
    const bwrap = `${dir}/bwrap`;
    await Deno.writeTextFile(
      bwrap,
      `#!/bin/sh\n[ "$1" = --version ] && echo probe >> ${dir}/probes\nexec ${real.path} "$@"\n`,
      { mode: 0o755 },
    );
    const probe = probeOnce(probeOptions({ PATH, HERMES_BWRAP: bwrap }));
    const probes = async () => (await Deno.readTextFile(`${dir}/probes`)).split("\n").filter(Boolean).length;
    const config = ToolsConfig.parse({ shell: {}, read_file: {}, write_file: {} });
    const tools = await builtinTools(config, { job_dir: dir, probe });
    const [shell, read, write] = tools;
    assert.match(
      (await callTool(shell!, { command: "touch x" }, context(dir))).content,
      /Read-only file system/,
    );
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(await callTool(shell!, { command: `echo hi ${i}` }, context(dir)), {
        status: "ok",
        content: `hi ${i}\n`,
      });
      assert.equal((await callTool(write!, { path: `f${i}.txt`, content: "x" }, context(dir))).status, "ok");
      assert.equal((await callTool(read!, { path: `f${i}.txt` }, context(dir))).content, "x");
    }
    assert.equal(await probes(), 1);
    // The denied neighbour: without the session's probe the tool does not probe on its own.
    const orphan = (await builtinTools(ToolsConfig.parse({ shell: {} }), { job_dir: dir }))[0]!;
    assert.deepEqual(await callTool(orphan, { command: "echo hi" }, context(dir)), {
      status: "error",
      content: "error: Cannot run shell in its OS sandbox: it was not probed",
    });
    await Deno.remove(dir, { recursive: true });
  },
);

function context(dir: string): ToolContext {
  return {
    session_id: "s",
    job_dir: dir,
    env: { PATH },
    host_env: { PATH },
    signal: new AbortController().signal,
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
