import assert from "node:assert/strict";
import { cgroupCandidates, commandCgroups } from "./cgroup.ts";

// A systemd host with cgroup v2 only, pids delegated to the user's service (as `Delegate=yes` does).
const V2_CGROUPS = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/hermes.service\n";
const V2_MOUNTS =
  "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw\n";
// A hybrid host (this one's layout): v1 controllers, v2 without them; a container's mount roots.
const V1_CGROUPS = "8:pids:/docker/abc\n4:memory:/docker/abc\n0::/docker/abc\n";
const V1_MOUNTS = [
  "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "39 31 0:36 /docker/abc /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "41 31 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
].join("\n");

Deno.test("cgroupCandidates: a v2 cgroup with the controller delegated, or the controller's v1 hierarchy", () => {
  const dir = "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/hermes.service";
  const delegated = (path: string) => path === `${dir}/cgroup.subtree_control` ? "memory pids" : null;
  for (const controller of ["pids", "memory"] as const) {
    assert.deepEqual(cgroupCandidates(controller, V2_CGROUPS, V2_MOUNTS, delegated), [
      { parent: dir, version: 2 },
    ]);
  }
  assert.deepEqual(cgroupCandidates("pids", V2_CGROUPS, V2_MOUNTS, () => "memory"), [], "pids not delegated");
  assert.deepEqual(
    cgroupCandidates("memory", V2_CGROUPS, V2_MOUNTS, () => "pids"),
    [],
    "memory not delegated",
  );
  assert.deepEqual(cgroupCandidates("pids", V1_CGROUPS, V1_MOUNTS, () => ""), [
    { parent: "/sys/fs/cgroup/pids", version: 1 },
  ]);
  assert.deepEqual(cgroupCandidates("memory", V1_CGROUPS, V1_MOUNTS, () => ""), [
    { parent: "/sys/fs/cgroup/memory", version: 1 },
  ]);
  assert.deepEqual(cgroupCandidates("pids", "", V1_MOUNTS, () => ""), []);
});

// Plain directories stand in for the cgroup parents: the same calls, minus the kernel's files (so the swap
// caps, whose files the kernel makes only where it accounts swap, are left out, as on such a kernel).
async function withParents(fn: (a: string, b: string) => Promise<void>): Promise<void> {
  const a = await Deno.makeTempDir({ prefix: "hermes-cgroup-" });
  const b = await Deno.makeTempDir({ prefix: "hermes-cgroup-" });
  try {
    await fn(a, b);
  } finally {
    await Deno.remove(a, { recursive: true });
    await Deno.remove(b, { recursive: true });
  }
}

const LIMITS = { processes: 64, memory: 256 * 1024 ** 2 };
const now = 1_800_000_000_000;

Deno.test("commandCgroups: v1 has a cgroup per controller, each with its cap; none found, none made", async () => {
  await withParents(async (pids, memory) => {
    const made = commandCgroups(
      { pids: { parent: pids, version: 1 }, memory: { parent: memory, version: 1 } },
      LIMITS,
      now,
    );
    assert.equal(made.length, 2);
    assert.match(made[0]!, new RegExp(`^${pids}/hermes\\.${now}\\.[0-9a-f]{8}$`));
    assert.match(made[1]!, new RegExp(`^${memory}/hermes\\.${now}\\.[0-9a-f]{8}$`));
    assert.equal(await Deno.readTextFile(`${made[0]}/pids.max`), "64");
    assert.equal(await Deno.readTextFile(`${made[1]}/memory.limit_in_bytes`), String(256 * 1024 ** 2));
    assert.deepEqual([...Deno.readDirSync(made[1]!)].map((e) => e.name), ["memory.limit_in_bytes"]);
    assert.deepEqual(commandCgroups({ pids: null, memory: null }, LIMITS, now), []);
  });
});

Deno.test("commandCgroups: on v2 one cgroup holds both caps when both controllers share a parent", async () => {
  await withParents(async (parent, other) => {
    const both = commandCgroups(
      { pids: { parent, version: 2 }, memory: { parent, version: 2 } },
      LIMITS,
      now,
    );
    assert.equal(both.length, 1);
    assert.deepEqual([...Deno.readDirSync(both[0]!)].map((e) => e.name).sort(), ["memory.max", "pids.max"]);
    assert.equal(await Deno.readTextFile(`${both[0]}/memory.max`), String(256 * 1024 ** 2));
    const apart = commandCgroups(
      { pids: { parent, version: 2 }, memory: { parent: other, version: 2 } },
      LIMITS,
      now,
    );
    assert.equal(apart.length, 2);
  });
});

Deno.test("commandCgroups: stale empty cgroups of Hermes are removed, busy and young ones stay", async () => {
  await withParents(async (parent) => {
    await Deno.mkdir(`${parent}/hermes.${now - 60_000}.old`);
    await Deno.mkdir(`${parent}/hermes.${now - 1_000}.young`);
    await Deno.mkdir(`${parent}/hermes.${now - 60_000}.busy`);
    await Deno.writeTextFile(`${parent}/hermes.${now - 60_000}.busy/cgroup.procs`, "123\n");
    await Deno.mkdir(`${parent}/other.service`);
    const [made] = commandCgroups({ pids: { parent, version: 1 }, memory: null }, LIMITS, now);
    const left = [...Deno.readDirSync(parent)].map((e) => e.name).sort();
    assert.deepEqual(
      left,
      [
        `hermes.${now - 1_000}.young`,
        `hermes.${now - 60_000}.busy`,
        made!.slice(parent.length + 1),
        "other.service",
      ].sort(),
    );
  });
});
