/**
 * Every boundary of the sandbox, through the real bubblewrap: each denial next to the allowed case that
 * makes it meaningful. Skipped (with the reason printed) where bwrap cannot run, except in CI, where
 * `.ci/run` installs bubblewrap and a missing sandbox must fail.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { probeSandbox } from "./probe.ts";
import { sandboxTests } from "./_testing.ts";
import { type Bubblewrap, type SandboxPolicy, wrapCommand } from "./sandbox.ts";

const { probe, ignore } = await sandboxTests("sandbox tests");

function bwrap(): Bubblewrap {
  if (!probe.ok) throw new Error(`the sandbox does not work here: ${probe.reason}; ${probe.hint}`);
  return probe;
}

const PATH = "/usr/local/bin:/usr/bin:/bin";

/** A test through the real sandbox, given a fresh real temp directory that is removed afterwards. */
function sandboxTest(name: string, fn: (dir: string) => Promise<void>): void {
  Deno.test({
    name: `sandbox: ${name}`,
    ignore,
    async fn() {
      const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-sandbox-" }));
      try {
        await fn(dir);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

/** Polls until `done()` holds (the kernel reaps a namespace asynchronously); the assertion follows. */
async function settle(done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function policyFor(cwd: string, policy: Partial<SandboxPolicy>): SandboxPolicy {
  return { read: [cwd], write: [], net: false, env: { PATH }, cwd, ...policy };
}

async function sandboxed(script: string, cwd: string, policy: Partial<SandboxPolicy> = {}): Promise<Run> {
  const wrapped = wrapCommand(["bash", "-c", script], policyFor(cwd, policy), { bwrap: bwrap() });
  const out = await new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "null" }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Host processes running exactly `sleep <seconds>` (what `pgrep -x -f` would see), by pid. */
function hostSleeps(seconds: string): number[] {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (argv[0]?.endsWith("sleep") && argv[1] === seconds) found.push(Number(entry.name));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

sandboxTest("probe finds a working bubblewrap, and names the fix when there is none", async (_dir) => {
  assert.equal(bwrap().path.endsWith("/bwrap"), true);
  assert.match(bwrap().version, /^\d+\.\d+/);
  const missing = await probeSandbox({ bwrap: "/nonexistent/bwrap" });
  assert.equal(missing.ok, false);
  assert.match(missing.ok ? "" : missing.hint, /apt-get install bubblewrap/);
  assert.match(missing.ok ? "" : missing.hint, /sandbox: off/);
  const notFound = await probeSandbox({ path: "/nonexistent", bwrap: "/nonexistent/bwrap" });
  assert.match(notFound.ok ? "" : notFound.reason, /bubblewrap/);
});

sandboxTest("writes outside the write roots fail, inside they land on the host", async (dir) => {
  await Deno.mkdir(join(dir, "out"));
  const run = await sandboxed(`echo no > ${dir}/outside.txt; echo yes > ${dir}/out/inside.txt`, dir, {
    write: [join(dir, "out")],
    read: [dir],
  });
  assert.match(run.stderr, /Read-only file system/);
  assert.equal(await exists(join(dir, "outside.txt")), false);
  assert.equal(await Deno.readTextFile(join(dir, "out/inside.txt")), "yes\n");
});

sandboxTest("the host root is read-only in `all` mode, and readable", async (dir) => {
  const target = `/etc/hermes-sandbox-${crypto.randomUUID()}`;
  try {
    const run = await sandboxed(`head -c 5 /etc/passwd; touch ${target} && echo WROTE`, dir);
    assert.equal(run.stdout.includes("WROTE"), false);
    assert.match(run.stdout, /^root:/);
    assert.equal(await exists(target), false);
  } finally {
    await Deno.remove(target).catch(() => {});
  }
});

sandboxTest("only granted paths are visible in `only_granted` mode", async (dir) => {
  await Deno.mkdir(join(dir, "granted"));
  await Deno.mkdir(join(dir, "secret"));
  await Deno.writeTextFile(join(dir, "granted/a.txt"), "granted content");
  await Deno.writeTextFile(join(dir, "secret/key.txt"), "secret content");
  const run = await sandboxed(
    `cat a.txt; echo; cat /etc/passwd; cat ${dir}/secret/key.txt; ls /root; echo x > a.txt || echo READONLY`,
    join(dir, "granted"),
    { read: [join(dir, "granted")], visible: "only_granted" },
  );
  assert.match(run.stdout, /^granted content\n/);
  assert.match(run.stdout, /READONLY/);
  assert.equal(run.stdout.includes("secret content"), false);
  assert.equal(run.stdout.includes("root:"), false);
  assert.match(run.stderr, /\/etc\/passwd: No such file or directory/);
  assert.match(run.stderr, /key\.txt: No such file or directory/);
  assert.equal(await Deno.readTextFile(join(dir, "granted/a.txt")), "granted content");
});

sandboxTest(
  "`only_granted`: a cwd that is not granted is an empty directory; the root is read-only",
  async (dir) => {
    await Deno.mkdir(join(dir, "job/notes"), { recursive: true });
    await Deno.writeTextFile(join(dir, "job/secret.txt"), "job secret");
    await Deno.writeTextFile(join(dir, "job/notes/n.txt"), "granted note");
    const run = await sandboxed(
      "pwd; ls -A | tr '\\n' ' '; echo; cat notes/n.txt; echo; cat secret.txt; " +
        "touch /planted || echo ROOT-READONLY; touch x; touch /tmp/t && echo TMP-OK",
      join(dir, "job"),
      { read: [join(dir, "job/notes")], visible: "only_granted" },
    );
    const lines = run.stdout.split("\n");
    assert.equal(lines[0], join(dir, "job"));
    assert.equal(lines[1], "notes "); // only the grant's mount point
    assert.equal(lines[2], "granted note");
    assert.match(run.stdout, /ROOT-READONLY/);
    assert.match(run.stdout, /TMP-OK/);
    // This cwd lies in /tmp, private inside: what is written there never reaches the host.
    assert.equal(await exists(join(dir, "job/x")), false);
    assert.equal(run.stdout.includes("job secret"), false);
    assert.match(run.stderr, /secret\.txt: No such file or directory/);
  },
);

sandboxTest("scratch_bytes bounds /tmp and /dev/shm; /dev is read-only but its devices work", async (dir) => {
  const run = await sandboxed(
    "head -c 500000 /dev/zero > /tmp/small && echo SMALL-OK; rm /tmp/small; " +
      "head -c 3000000 /dev/zero > /tmp/big; echo tmp $(stat -c %s /tmp/big); " +
      "head -c 3000000 /dev/zero > /dev/shm/big; echo shm $(stat -c %s /dev/shm/big); " +
      "echo x > /dev/planted || echo DEV-READONLY; echo y > /dev/null && echo NULL-OK",
    dir,
    { scratch_bytes: 1024 * 1024 },
  );
  assert.ok(Number(/tmp (\d+)/.exec(run.stdout)?.[1]) <= 1024 * 1024, run.stdout);
  assert.ok(Number(/shm (\d+)/.exec(run.stdout)?.[1]) <= 1024 * 1024, run.stdout);
  assert.match(run.stderr, /No space left on device/);
  assert.match(run.stdout, /DEV-READONLY/);
  assert.match(run.stdout, /NULL-OK/);
  // Unbounded without it (the shell tool's scratch space), and a write under the bound always fits.
  const free = await sandboxed("head -c 3000000 /dev/zero > /tmp/big; stat -c %s /tmp/big", dir);
  assert.equal(free.stdout.trim(), "3000000");
  assert.match(run.stdout, /SMALL-OK/);
});

sandboxTest(
  "a symlink to / inside a granted root reaches the sandbox's root, not the host's",
  async (dir) => {
    await Deno.mkdir(join(dir, "plugin"));
    await Deno.mkdir(join(dir, "other"));
    await Deno.writeTextFile(join(dir, "other/state.db"), "another store");
    await Deno.writeTextFile(join(dir, "plugin/own.txt"), "own file");
    await Deno.symlink("/", join(dir, "plugin/root"));
    const run = await sandboxed(
      `cat own.txt; echo; cat root/etc/passwd; cat root${dir}/other/state.db; ls root/usr/bin/bash`,
      join(dir, "plugin"),
      { read: [join(dir, "plugin")], visible: "only_granted" },
    );
    assert.match(run.stdout, /^own file\n/);
    assert.match(run.stdout, /root\/usr\/bin\/bash/); // the link works, inside the sandbox
    assert.equal(run.stdout.includes("another store"), false);
    assert.equal(run.stdout.includes("root:"), false);
  },
);

sandboxTest(
  "/proc shows only the sandbox's processes; no other process's environ is readable",
  async (dir) => {
    const secret = `sk-fake-host-${crypto.randomUUID()}`;
    const victim = new Deno.Command("sleep", {
      args: ["1000"],
      clearEnv: true,
      env: { OPENAI_API_KEY: secret, PATH },
      stdin: "null",
    }).spawn();
    try {
      const granted = `granted-${crypto.randomUUID()}`;
      const run = await sandboxed(
        `cat /proc/${victim.pid}/environ; cat /proc/1/environ; cat /proc/*/environ | tr '\\0' '\\n'; ` +
          `ls /proc | grep -E '^[0-9]+$' | wc -l`,
        dir,
        { env: { PATH, HERMES_GRANTED: granted } },
      );
      assert.equal(run.stdout.includes(secret), false);
      assert.match(run.stdout, new RegExp(`HERMES_GRANTED=${granted}`)); // its own environ is there
      const count = Number(run.stdout.trim().split("\n").at(-1));
      assert.ok(count >= 2 && count <= 6, `expected only the sandbox's processes in /proc, saw ${count}`);
      // Seen from the host, the victim's environ does hold the secret: the denial above is the sandbox.
      assert.match(await Deno.readTextFile(`/proc/${victim.pid}/environ`), new RegExp(secret));
    } finally {
      victim.kill("SIGKILL");
      await victim.status;
    }
  },
);

sandboxTest("kernel knobs in /proc/sys are read-only (uid 0 inside may not set them)", async (dir) => {
  // domainname belongs to the sandbox's own UTS namespace, so even a broken sandbox harms nothing here;
  // a knob like kernel.core_pattern is global, and writable by a root-run command without this cover.
  const run = await sandboxed(
    "cat /proc/sys/kernel/domainname && echo hermes > /proc/sys/kernel/domainname",
    dir,
  );
  assert.notEqual(run.code, 0);
  assert.match(run.stdout, /\S/);
  assert.match(run.stderr, /Read-only file system/);
});

sandboxTest("the environment is only what was granted, nothing of the parent's", async (dir) => {
  const name = "HERMES_TEST_OPENAI_API_KEY";
  Deno.env.set(name, "sk-fake-parent");
  try {
    const run = await sandboxed("env", dir, { env: { PATH, GIT_PAGER: "cat" } });
    assert.equal(run.stdout.includes("sk-fake-parent"), false);
    assert.match(run.stdout, /^GIT_PAGER=cat$/m);
    assert.match(run.stdout, /^PATH=/m);
  } finally {
    Deno.env.delete(name);
  }
});

sandboxTest("no network unless granted", async (dir) => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    try {
      for await (const conn of listener) conn.close();
    } catch {
      // closed
    }
  })();
  try {
    const script = `exec 3<>/dev/tcp/127.0.0.1/${listener.addr.port} && echo CONNECTED`;
    const denied = await sandboxed(script, dir, { net: false });
    assert.equal(denied.stdout.includes("CONNECTED"), false);
    assert.notEqual(denied.code, 0);
    const allowed = await sandboxed(script, dir, { net: true });
    assert.equal(allowed.stdout.trim(), "CONNECTED");
    // A host list needs its bridge (net_bridge_test.ts); without one nothing is wrapped.
    assert.throws(
      () => wrapCommand(["true"], policyFor(dir, { net: ["127.0.0.1"] }), { bwrap: probe as Bubblewrap }),
      /no network bridge was opened/,
    );
  } finally {
    listener.close();
    await accepting;
  }
});

sandboxTest("a setsid child dies with the command", async (dir) => {
  const marker = `4242.${Math.floor(Math.random() * 1e9)}`;
  const wrapped = wrapCommand(
    ["bash", "-c", `setsid sleep ${marker} </dev/null >/dev/null 2>&1 & echo started; read line || true`],
    policyFor(dir, {}),
    { bwrap: bwrap() },
  );
  const child = new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "piped", stdout: "piped" }).spawn();
  const reader = child.stdout.getReader();
  const first = await reader.read();
  assert.equal(new TextDecoder().decode(first.value), "started\n");
  await settle(() => hostSleeps(marker).length > 0); // `started` may come before sleep's exec
  assert.equal(hostSleeps(marker).length, 1); // it runs, seen from the host
  await child.stdin.close();
  assert.equal((await child.status).code, 0);
  reader.releaseLock();
  await child.stdout.cancel();
  // bwrap returns the command's status at once; its init, killed by --die-with-parent, takes the PID
  // namespace down right after (the kernel kills every process left in it): wait for that, unbounded by
  // any timing assertion.
  await settle(() => hostSleeps(marker).length === 0);
  assert.deepEqual(hostSleeps(marker), []);
});

sandboxTest("killing bwrap (a timeout) kills everything inside", async (dir) => {
  const marker = `4343.${Math.floor(Math.random() * 1e9)}`;
  const wrapped = wrapCommand(
    ["bash", "-c", `setsid sleep ${marker} </dev/null >/dev/null 2>&1 & echo started; sleep 1000`],
    policyFor(dir, {}),
    { bwrap: bwrap() },
  );
  const child = new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "null", stdout: "piped" }).spawn();
  const reader = child.stdout.getReader();
  await reader.read();
  await settle(() => hostSleeps(marker).length > 0);
  assert.equal(hostSleeps(marker).length, 1);
  child.kill("SIGKILL");
  await child.status;
  reader.releaseLock();
  await child.stdout.cancel();
  // bwrap's init gets SIGKILL from the kernel when bwrap dies, and the namespace goes with it.
  await settle(() => hostSleeps(marker).length === 0);
  assert.deepEqual(hostSleeps(marker), []);
});

sandboxTest("/tmp is private", async (dir) => {
  const name = `/tmp/hermes-sandbox-${crypto.randomUUID()}`;
  const run = await sandboxed(`echo inside > ${name} && cat ${name}; ls /tmp | wc -l`, dir, { read: [dir] });
  assert.match(run.stdout, /^inside\n/);
  assert.equal(await exists(name), false);
  // The host's /tmp holds at least our temp dir, the sandbox's only the file and the grant's mount point.
  assert.equal(run.stdout.trim().split("\n").at(-1), "2");
});

sandboxTest("a hidden path is empty inside, a grant below it still shows", async (dir) => {
  await Deno.mkdir(join(dir, "store/plugins"), { recursive: true });
  await Deno.writeTextFile(join(dir, "store/state.db"), "raw rows");
  await Deno.writeTextFile(join(dir, "store/plugins/p.js"), "plugin code");
  await Deno.writeTextFile(join(dir, "token"), "a token");
  const run = await sandboxed(
    `cat store/state.db; cat token; cat store/plugins/p.js; echo; ls -A store`,
    dir,
    { read: [dir, join(dir, "store/plugins")], hide: [join(dir, "store"), join(dir, "token")] },
  );
  assert.equal(run.stdout.includes("raw rows"), false);
  assert.equal(run.stdout.includes("a token"), false);
  assert.match(run.stdout, /^plugin code\nplugins\n$/);
});

sandboxTest("exit code, stdin and stdout pass through; cwd is the policy's", async (dir) => {
  const wrapped = wrapCommand(["bash", "-c", "pwd; read line; echo got $line; exit 7"], policyFor(dir, {}), {
    bwrap: bwrap(),
  });
  const child = new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "piped", stdout: "piped" }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("hello\n"));
  await writer.close();
  const out = await child.output();
  assert.equal(out.code, 7);
  assert.equal(new TextDecoder().decode(out.stdout), `${dir}\ngot hello\n`);
});

sandboxTest("a deno plugin process reads its own directory and nothing through its symlinks", async (dir) => {
  await Deno.mkdir(join(dir, "plugin"));
  await Deno.symlink("/", join(dir, "plugin/root"));
  await Deno.writeTextFile(join(dir, "plugin/own.txt"), "own");
  await Deno.writeTextFile(
    join(dir, "plugin/main.js"),
    `console.log(Deno.readTextFileSync("./own.txt"));
     try { console.log(Deno.readTextFileSync("./root/etc/passwd")); } catch (e) { console.log(e.name); }`,
  );
  const deno = await Deno.realPath(Deno.execPath());
  const wrapped = wrapCommand(
    [deno, "run", "--no-prompt", "--no-config", "--no-lock", "--allow-read", "main.js"],
    policyFor(join(dir, "plugin"), {
      visible: "only_granted",
      read: [join(dir, "plugin"), join(deno, "..")],
      env: { NO_COLOR: "1", DENO_DIR: "/tmp/.deno" }, // as plugins get it (passwd is not shown)
    }),
    { bwrap: bwrap() },
  );
  const out = await new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "null" }).output();
  assert.equal(new TextDecoder().decode(out.stdout), "own\nNotFound\n", new TextDecoder().decode(out.stderr));
});

sandboxTest(
  "read_only paths stay read-only below a write root, in both visibility modes; the rest is written",
  async (dir) => {
    await Deno.mkdir(join(dir, ".git/hooks"), { recursive: true });
    await Deno.writeTextFile(join(dir, ".git/config"), "[core]\n");
    await Deno.writeTextFile(join(dir, "job.yaml"), "name: job\n");
    for (const visible of ["all", "only_granted"] as const) {
      const run = await sandboxed(
        "for f in .git/config .git/hooks/pre-commit job.yaml; do echo x >> $f 2>/dev/null && echo wrote $f; done; " +
          "rm -f job.yaml 2>/dev/null && echo removed; mv job.yaml j 2>/dev/null && echo moved; " +
          `echo ok > ${visible}.txt && cat .git/config job.yaml`,
        dir,
        {
          visible,
          write: [dir],
          read_only: [join(dir, ".git"), join(dir, "job.yaml"), join(dir, "missing.yaml")],
        },
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "[core]\nname: job\n", visible);
      assert.equal(await Deno.readTextFile(join(dir, `${visible}.txt`)), "ok\n");
    }
    assert.equal(await Deno.readTextFile(join(dir, ".git/config")), "[core]\n");
    assert.equal(await exists(join(dir, ".git/hooks/pre-commit")), false);
  },
);

sandboxTest(
  "loader and shell start-up variables reach the command, never the host's launcher or bwrap",
  async (dir) => {
    const run = await sandboxed('echo "$LD_DEBUG $(declare -f x | head -n 1)"', dir, {
      env: { PATH, LD_DEBUG: "libs", "BASH_FUNC_x%%": "() { :; }" },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "libs x () \n");
    // ld.so names each program it starts with LD_DEBUG=libs: only the ones inside the sandbox may appear.
    const started = [...run.stderr.matchAll(/initialize program: (\S+)/g)].map((match) => match[1]);
    assert.ok(started.length > 0, run.stderr);
    assert.deepEqual(started.filter((program) => /bwrap|dash|bash --posix/.test(program!)), [], run.stderr);
  },
);
