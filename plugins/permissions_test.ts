import assert from "node:assert/strict";
import {
  entryRelativeTo,
  grantedEnv,
  missingGrants,
  permissionFlags,
  resolveRunGrant,
} from "./permissions.ts";

const where = { root: "/plugins/memory", job_dir: "/jobs/nightly" };

Deno.test("a grant becomes exactly its --allow-* flags; nothing granted means reading the plugin only", () => {
  assert.deepEqual(permissionFlags({}, where), ["--allow-read=/plugins/memory"]);
  assert.deepEqual(
    permissionFlags({
      read: ["./notes", "/etc/hosts"],
      write: ["./out"],
      net: ["api.example.com:443", "127.0.0.1"],
      env: ["HOME", "TOKEN"],
      run: ["git"],
      ffi: ["./lib.so"],
      sys: ["hostname"],
    }, where),
    [
      "--allow-read=/plugins/memory,/jobs/nightly/notes,/etc/hosts",
      "--allow-write=/jobs/nightly/out",
      "--allow-net=api.example.com:443,127.0.0.1",
      "--allow-env=HOME,TOKEN",
      "--allow-run=git",
      "--allow-ffi=/jobs/nightly/lib.so",
      "--allow-sys=hostname",
    ],
  );
  assert.deepEqual(
    permissionFlags(
      { read: true, write: true, net: true, env: true, run: true, ffi: true, sys: true },
      where,
    ),
    [
      "--allow-read",
      "--allow-write",
      "--allow-net",
      "--allow-env",
      "--allow-run",
      "--allow-ffi",
      "--allow-sys",
    ],
  );
  // An empty list must not become `--allow-net=` (which Deno reads as "all hosts").
  assert.deepEqual(
    permissionFlags({ read: false, write: [], net: [], env: false, run: [], ffi: false, sys: [] }, where),
    ["--allow-read=/plugins/memory"],
  );
  assert.throws(() => permissionFlags({ read: ["a,b"] }, where), /Cannot grant read "a,b": .*comma/);
  assert.throws(() => permissionFlags({ net: [" "] }, where), /expected a non-empty value/);
});

Deno.test("missingGrants names every requested item the grant does not cover", () => {
  assert.deepEqual(missingGrants({}, {}, "/j"), []);
  assert.deepEqual(
    missingGrants(
      {
        read: ["./notes/a.md", "./notes/../secrets"],
        net: ["api.x.com:443", "db:5432"],
        env: ["A", "B"],
        run: true,
      },
      { read: ["./notes"], net: ["api.x.com", "db:5433"], env: ["A"], run: ["git"] },
      "/j",
    ),
    ["read ./notes/../secrets", "net db:5432", "env B", "run (any)"],
  );
  // `true` covers anything; a host:port does not cover the whole host.
  assert.deepEqual(missingGrants({ read: ["/etc"], net: ["h"] }, { read: true, net: ["h:80"] }, "/j"), [
    "net h",
  ]);
  // Paths compare after resolution: a sibling with a common prefix is not inside.
  assert.deepEqual(missingGrants({ write: ["./out-other"] }, { write: ["./out"] }, "/j"), [
    "write ./out-other",
  ]);
  assert.deepEqual(missingGrants({ write: ["/j/out/x"] }, { write: ["./out"] }, "/j"), []);
});

Deno.test("grantedEnv passes only the granted variables that exist", () => {
  const env = { HOME: "/root", OPENAI_API_KEY: "sk-123456", PATH: "/bin" };
  assert.deepEqual(grantedEnv({}, env), {});
  assert.deepEqual(grantedEnv({ env: ["HOME", "MISSING"] }, env), { HOME: "/root" });
  assert.deepEqual(grantedEnv({ env: true }, env), env);
});

Deno.test("entryRelativeTo anchors a config.yaml entry's paths at HERMES_HOME", () => {
  assert.deepEqual(
    entryRelativeTo({
      path: "./plugins/memory",
      permissions: { read: ["./notes", "/abs"], write: true, net: ["h:1"], ffi: ["lib.so"] },
      config: { file: "./notes/x.md" },
    }, "/home/u/.hermes"),
    {
      path: "/home/u/.hermes/plugins/memory",
      permissions: {
        read: ["/home/u/.hermes/notes", "/abs"],
        write: true,
        net: ["h:1"],
        ffi: ["/home/u/.hermes/lib.so"],
      },
      config: { file: "./notes/x.md" },
    },
  );
  assert.deepEqual(entryRelativeTo({ path: "/p.ts" }, "/h"), { path: "/p.ts" });
});

Deno.test("run grants resolve to absolute programs on the host's PATH, and the plugin gets their directories", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/bin`);
    await Deno.writeTextFile(`${dir}/bin/tool`, "#!/bin/sh\n");
    await Deno.chmod(`${dir}/bin/tool`, 0o755);
    await Deno.writeTextFile(`${dir}/bin/data`, "not executable");
    const path = `/nonexistent:${dir}/bin`;
    const resolved = resolveRunGrant({ run: ["tool", "./local.sh"] }, { job_dir: "/jobs/j", path });
    assert.deepEqual(resolved.run, [`${dir}/bin/tool`, "/jobs/j/local.sh"]);
    assert.deepEqual(grantedEnv(resolved, { PATH: path, SECRET: "x" }), { PATH: `${dir}/bin:/jobs/j` });
    assert.throws(
      () => resolveRunGrant({ run: ["data"] }, { job_dir: "/", path }),
      /Cannot grant run "data": no such program on PATH/,
    );
    // Nothing to run: no PATH; run: true: the host's; a granted PATH is kept as granted.
    assert.deepEqual(grantedEnv({}, { PATH: path }), {});
    assert.deepEqual(grantedEnv({ run: true }, { PATH: path }), { PATH: path });
    assert.deepEqual(grantedEnv({ run: [`${dir}/bin/tool`], env: ["PATH"] }, { PATH: "/mine" }), {
      PATH: "/mine",
    });
    assert.deepEqual(resolveRunGrant({ run: false }, { job_dir: "/", path }), { run: false });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
