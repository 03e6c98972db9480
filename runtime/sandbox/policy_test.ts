import assert from "node:assert/strict";
import { join } from "node:path";
import { ValidationError } from "../core/errors.ts";
import { resolvePolicy, type SandboxPolicy } from "./policy.ts";

async function withDir(fn: (dir: string) => Promise<void> | void): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-policy-" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function policy(dir: string, more: Partial<SandboxPolicy>): SandboxPolicy {
  return { read: [dir], write: [], net: false, env: {}, cwd: dir, ...more };
}

Deno.test("sandbox policy: a write root must exist; a missing read or hide path is skipped", () =>
  withDir(async (dir) => {
    await Deno.mkdir(join(dir, "out"));
    assert.throws(
      () => resolvePolicy(policy(dir, { write: [join(dir, "missing")] })),
      (error: Error) =>
        error instanceof ValidationError &&
        /write access to ".*missing" .*it does not exist/.test(error.message),
    );
    const resolved = resolvePolicy(
      policy(dir, { write: [join(dir, "out")], read: [dir, join(dir, "gone")], hide: [join(dir, "nope")] }),
    );
    assert.deepEqual(resolved.mounts, [{ kind: "read", path: dir }, {
      kind: "write",
      path: join(dir, "out"),
    }]);
  }));

Deno.test("sandbox policy: relative paths, the root and the sandbox's own /proc and /dev are refused", () =>
  withDir((dir) => {
    assert.throws(
      () => resolvePolicy(policy(dir, { write: ["out"] })),
      /"out" in the sandbox: the path is relative/,
    );
    assert.throws(() => resolvePolicy(policy(dir, { read: ["/"] })), /it is the root directory/);
    assert.throws(() => resolvePolicy(policy(dir, { write: ["/proc/self"] })), /has its own \/proc/);
    assert.throws(() => resolvePolicy(policy(dir, { read: ["/dev/null"] })), /has its own \/dev/);
    assert.throws(() => resolvePolicy(policy(dir, { cwd: "." })), /Cannot run in "\." .*relative/);
  }));

Deno.test("sandbox policy: a symlinked grant binds its target, unless the link lies in a write root", () =>
  withDir(async (dir) => {
    await Deno.mkdir(join(dir, "real"));
    await Deno.mkdir(join(dir, "work"));
    await Deno.symlink(join(dir, "real"), join(dir, "alias"));
    const resolved = resolvePolicy(policy(dir, { read: [], write: [join(dir, "alias")], cwd: "/" }));
    assert.deepEqual(resolved.mounts, [{ kind: "write", path: join(dir, "real") }]);
    // A command allowed to write work/ may have made work/out -> ~/.ssh for the next call.
    await Deno.symlink(join(dir, "real"), join(dir, "work/out"));
    assert.throws(
      () => resolvePolicy(policy(dir, { write: [join(dir, "work"), join(dir, "work/out")] })),
      /passes through the symlink ".*work\/out" inside the write root ".*work"/,
    );
    assert.throws(
      () => resolvePolicy(policy(dir, { write: [join(dir, "work")], read: [join(dir, "work/out/x")] })),
      /could have planted/,
    );
  }));

Deno.test("sandbox policy: parents mount first; a read grant inside a write root is dropped", () =>
  withDir(async (dir) => {
    await Deno.mkdir(join(dir, "a/b/c"), { recursive: true });
    const resolved = resolvePolicy(
      policy(dir, { read: [join(dir, "a/b/c"), dir], write: [join(dir, "a/b"), join(dir, "a/b")] }),
    );
    assert.deepEqual(resolved.mounts, [{ kind: "read", path: dir }, {
      kind: "write",
      path: join(dir, "a/b"),
    }]);
    const same = resolvePolicy(
      policy(dir, { read: [join(dir, "a")], write: [join(dir, "a")], cwd: join(dir, "a") }),
    );
    assert.deepEqual(same.mounts.filter((m) => m.path === join(dir, "a")), [{
      kind: "write",
      path: join(dir, "a"),
    }]);
  }));

Deno.test("sandbox policy: the working directory is visible, or (only granted) shown empty", () =>
  withDir(async (dir) => {
    await Deno.mkdir(join(dir, "plugin"));
    await Deno.mkdir(join(dir, "elsewhere"));
    const only = { visible: "only_granted" as const, read: [join(dir, "plugin")] };
    const inPlugin = resolvePolicy(policy(dir, { ...only, cwd: join(dir, "plugin") }));
    assert.deepEqual([inPlugin.cwd, inPlugin.cwd_empty], [join(dir, "plugin"), false]);
    assert.equal(resolvePolicy(policy(dir, { ...only, cwd: "/usr/bin" })).cwd_empty, false);
    // Not granted: it exists inside, empty, so relative paths keep their meaning and nothing is seen.
    const elsewhere = resolvePolicy(policy(dir, { ...only, cwd: join(dir, "elsewhere") }));
    assert.deepEqual([elsewhere.cwd, elsewhere.cwd_empty], [join(dir, "elsewhere"), true]);
    // In `all` mode the host's /tmp is replaced by a private one: a temp dir is visible only when granted.
    assert.equal(resolvePolicy(policy(dir, { cwd: dir })).cwd, dir);
    assert.throws(() => resolvePolicy(policy(dir, { read: [], cwd: dir })), /it is not visible there/);
    assert.throws(() => resolvePolicy(policy(dir, { hide: [dir], read: [], cwd: dir })), /not visible/);
    assert.throws(() => resolvePolicy(policy(dir, { cwd: join(dir, "missing") })), /it is not a directory/);
  }));

Deno.test("sandbox policy: read_only binds only what a write root would make writable (the root itself too)", () =>
  withDir(async (dir) => {
    await Deno.mkdir(join(dir, "out/.git"), { recursive: true });
    await Deno.mkdir(join(dir, "elsewhere"));
    await Deno.writeTextFile(join(dir, "job.yaml"), "");
    const resolved = resolvePolicy(policy(dir, {
      write: [join(dir, "out")],
      read_only: [join(dir, "out/.git"), join(dir, "job.yaml"), join(dir, "out/missing.yaml")],
    }));
    assert.deepEqual(
      resolved.mounts.filter((mount) => mount.kind === "protect").map((mount) => mount.path),
      [join(dir, "out/.git")],
    );
    const root = resolvePolicy(
      policy(dir, { write: [join(dir, "elsewhere")], read_only: [join(dir, "elsewhere")] }),
    );
    assert.deepEqual(root.mounts.find((mount) => mount.path === join(dir, "elsewhere"))?.kind, "protect");
    // A write root inside a protected directory (write: [.git/hooks]) stays read-only with it.
    await Deno.mkdir(join(dir, "out/.git/hooks"));
    const inside = resolvePolicy(
      policy(dir, { write: [join(dir, "out/.git/hooks")], read_only: [join(dir, "out/.git")] }),
    );
    assert.deepEqual(inside.mounts.map((mount) => [mount.kind, mount.path]), [
      ["read", dir],
      ["protect", join(dir, "out/.git")],
    ]);
  }));
