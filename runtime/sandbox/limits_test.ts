/**
 * Resource limits through the real bubblewrap: a fork bomb stops at the process cap, a /tmp filler at the
 * scratch size, a big file at the file-size cap, a memory hog at the data cap, several processes together
 * at the tree's memory cgroup cap — and a normal command under the same limits runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { processCap, sandboxTests } from "./_testing.ts";
import { type SandboxPolicy, wrapCommand } from "./sandbox.ts";

const { probe, ignore } = await sandboxTests("sandbox limit tests");
const noProcessCap = !ignore && processCap(probe, 1) === null;
if (noProcessCap) {
  console.warn(
    "fork bomb tests skipped: running as root without a writable pids cgroup, nothing caps processes",
  );
}
const noMemoryCgroup = !ignore && probe.ok && probe.cgroups.memory === null;
if (noMemoryCgroup) {
  console.warn(
    "tree memory tests skipped: no writable memory cgroup here, memory is capped per process only",
  );
}
const PATH = "/usr/local/bin:/usr/bin:/bin";

async function sandboxed(script: string, cwd: string, policy: Partial<SandboxPolicy>) {
  if (!probe.ok) throw new Error(`the sandbox does not work here: ${probe.reason}`);
  const wrapped = wrapCommand(["bash", "-c", script], {
    read: [cwd],
    write: [],
    net: false,
    env: { PATH },
    cwd,
    ...policy,
  }, { bwrap: probe });
  const out = await new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "null" }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

function limitTest(name: string, fn: (dir: string) => Promise<void>, skip = false): void {
  Deno.test({
    name: `sandbox limits: ${name}`,
    ignore: ignore || skip,
    async fn() {
      const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-limits-" }));
      try {
        await fn(dir);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

limitTest("processes: a fork bomb is stopped at the cap, the command under it still runs", async (dir) => {
  // Forks up to 1000 sleepers (stopping at the first refusal), then counts what the sandbox's own /proc holds.
  const run = await sandboxed(
    `perl -e '$| = 1; my @kids; for my $i (1..1000) { my $pid = fork;
       if (!defined $pid) { print "refused: $!\n"; last } if ($pid == 0) { sleep 30; exit } push @kids, $pid }
       print "procs ", scalar(grep { m{^/proc/\\d+$} } glob("/proc/*")), "\n"; kill 9, @kids'; echo normal command ran`,
    dir,
    { limits: { processes: processCap(probe, 40)! } },
  );
  const count = Number(/procs (\d+)/.exec(run.stdout)?.[1]);
  assert.ok(count >= 3 && count < 1000, `processes held to the cap: ${run.stdout}${run.stderr}`);
  assert.match(run.stdout, /refused: Resource temporarily unavailable/);
  assert.match(run.stdout, /normal command ran/);
}, noProcessCap);

limitTest("processes: a real fork bomb ends when the command is killed", async (dir) => {
  const wrapped = wrapCommand(["bash", "-c", "b() { b | b & }; b; sleep 5"], {
    read: [dir],
    write: [],
    net: false,
    env: { PATH },
    cwd: dir,
    limits: { processes: processCap(probe, 64)! },
  }, { bwrap: probe.ok ? probe : (() => assert.fail("no sandbox"))() });
  const child = new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "null", stdout: "null", stderr: "null" })
    .spawn();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const inside = descendants(child.pid).length;
  child.kill("SIGKILL");
  await child.status;
  assert.ok(inside <= processCap(probe, 64)! + 2, `at most the cap (+ bwrap's own two): ${inside}`);
  assert.ok(inside < 1000, `stopped: ${inside}`);
}, noProcessCap);

limitTest("scratch: a /tmp filler stops at the size, a small file fits", async (dir) => {
  const run = await sandboxed(
    "echo small > /tmp/small && cat /tmp/small; head -c 20000000 /dev/zero > /tmp/fill; " +
      "echo status $?; stat -c %s /tmp/fill",
    dir,
    { scratch_bytes: 4 * 1024 ** 2 },
  );
  assert.match(run.stdout, /^small\n/);
  assert.match(run.stderr, /No space left on device/);
  const size = Number(/status 1\n(\d+)\n/.exec(run.stdout)?.[1]);
  assert.ok(size > 3 * 1024 ** 2 && size <= 4 * 1024 ** 2, run.stdout);
});

limitTest("file size: one file in a write root stops at the cap, smaller ones are written", async (dir) => {
  await Deno.mkdir(join(dir, "out"));
  const run = await sandboxed(
    "head -c 1000 /dev/zero > out/ok; head -c 3000000 /dev/zero > out/big; echo status $?",
    dir,
    { write: [join(dir, "out")], limits: { file_size: 1024 ** 2 } },
  );
  assert.equal((await Deno.stat(join(dir, "out/ok"))).size, 1000);
  assert.equal((await Deno.stat(join(dir, "out/big"))).size, 1024 ** 2);
  assert.match(run.stdout, /status (153|1)\n/, run.stderr); // SIGXFSZ (128+25) or EFBIG
});

limitTest("memory: a process cannot take more than its data cap; below it, it runs", async (dir) => {
  const grab = (mib: number) =>
    `perl -e '$x = "x" x (${mib} * 1024 * 1024); print "got ${mib}\\n"' 2>&1 || echo refused ${mib}`;
  const run = await sandboxed(`${grab(16)}; ${grab(400)}`, dir, { limits: { memory: 128 * 1024 ** 2 } });
  assert.match(run.stdout, /got 16\n/);
  assert.match(run.stdout, /Out of memory|refused 400/);
  assert.equal(run.stdout.includes("got 400"), false);
});

limitTest("memory: processes each under the data cap are stopped together at the tree's cap", async (dir) => {
  // Three processes at once, each holding `mib` and waiting until all three hold theirs: each stays under
  // RLIMIT_DATA (the same cap, per process), together they pass it only when 3 × mib is above it.
  const hold = (mib: number) =>
    // The size is an argument: a constant would be folded at compile time and then copied (twice the memory).
    `perl -e 'my $x = "x" x ($ARGV[0] * 1048576); print "held\\n"; sleep 2' ${mib} & kids="$kids $!"`;
  const three = (mib: number) =>
    `for i in 1 2 3; do ${hold(mib)}; done; ` +
    `for p in $kids; do wait $p; echo "exit $?"; done`;
  const cap = { limits: { memory: 96 * 1024 ** 2 } };
  const over = await sandboxed(three(40), dir, cap);
  assert.match(
    over.stdout,
    /exit 137\n/,
    `one was killed (SIGKILL by the cgroup's OOM killer): ${over.stdout}`,
  );
  const under = await sandboxed(three(12), dir, cap);
  assert.equal(under.stdout.match(/held\n/g)?.length, 3, under.stdout + under.stderr);
  assert.equal(under.stdout.match(/exit 0\n/g)?.length, 3, under.stdout + under.stderr);
}, noMemoryCgroup);

limitTest("cgroups: a command cannot leave its cgroups or raise their caps", async (dir) => {
  const cgroups = probe.ok ? probe.cgroups : assert.fail("no sandbox");
  const parents = [cgroups.pids?.parent, cgroups.memory?.parent].filter((p) => p !== undefined);
  // Into the parent (out of the caps), and the caps of every cgroup beside it (its own among them), which
  // the sandbox shows read-only.
  const caps = (parent: string) =>
    ["pids.max", "memory.max", "memory.limit_in_bytes"].map((file) => `${parent}/hermes.*/${file}`).join(" ");
  const script = parents.map((parent) =>
    `echo $$ > ${parent}/cgroup.procs 2>/dev/null && echo "left ${parent}"; ` +
    `for f in ${caps(parent)}; do [ -e "$f" ] || continue; echo seen; ` +
    `{ echo max > "$f" || echo 9223372036854771712 > "$f"; } 2>/dev/null && echo "raised $f"; done; `
  ).join("");
  const run = await sandboxed(script, dir, { limits: { processes: processCap(probe, 40) ?? 512 } });
  assert.match(run.stdout, /^(seen\n)+$/, run.stderr);
}, parentsMissing());

function parentsMissing(): boolean {
  return !probe.ok || (probe.cgroups.pids === null && probe.cgroups.memory === null);
}

/** Every process below `pid` on the host, by walking /proc's parent links. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      parents.set(Number(entry.name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // exited meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, of] of parents) {
      if (of === parent) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}
