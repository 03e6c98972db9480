import assert from "node:assert/strict";
import { commandCgroup, pidsCgroupCandidates } from "./cgroup.ts";

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

Deno.test("pidsCgroupCandidates: a v2 cgroup with pids delegated, or the v1 pids hierarchy", () => {
  const dir = "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/hermes.service";
  const delegated = (path: string) => path === `${dir}/cgroup.subtree_control` ? "memory pids" : null;
  assert.deepEqual(pidsCgroupCandidates(V2_CGROUPS, V2_MOUNTS, delegated), [{ parent: dir, version: 2 }]);
  assert.deepEqual(pidsCgroupCandidates(V2_CGROUPS, V2_MOUNTS, () => "memory"), [], "pids not delegated");
  assert.deepEqual(pidsCgroupCandidates(V1_CGROUPS, V1_MOUNTS, () => ""), [
    { parent: "/sys/fs/cgroup/pids", version: 1 },
  ]);
  assert.deepEqual(pidsCgroupCandidates("", V1_MOUNTS, () => ""), []);
});

Deno.test("commandCgroup: a fresh cgroup with pids.max; stale empty ones of Hermes are removed", async () => {
  // A plain directory stands in for the cgroup parent: the same calls, minus the kernel's files.
  const parent = await Deno.makeTempDir({ prefix: "hermes-cgroup-" });
  try {
    const now = 1_800_000_000_000;
    await Deno.mkdir(`${parent}/hermes.${now - 60_000}.old`);
    await Deno.mkdir(`${parent}/hermes.${now - 1_000}.young`);
    await Deno.mkdir(`${parent}/hermes.${now - 60_000}.busy`);
    await Deno.writeTextFile(`${parent}/hermes.${now - 60_000}.busy/cgroup.procs`, "123\n");
    await Deno.mkdir(`${parent}/other.service`);
    const made = commandCgroup(parent, 64, now);
    assert.match(made, new RegExp(`^${parent}/hermes\\.${now}\\.[0-9a-f]{8}$`));
    assert.equal(await Deno.readTextFile(`${made}/pids.max`), "64");
    const left = [...Deno.readDirSync(parent)].map((e) => e.name).sort();
    assert.deepEqual(
      left,
      [
        `hermes.${now - 1_000}.young`,
        `hermes.${now - 60_000}.busy`,
        made.slice(parent.length + 1),
        "other.service",
      ].sort(),
    );
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
