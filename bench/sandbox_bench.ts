/**
 * OS sandbox overhead (target: a `shell` tool call inside the sandbox ≤ +10 ms over unsandboxed;
 * plugin start ≤ 80 ms). Spawn → exit of `bash -c true`, plain and through bwrap in both visibility modes
 * (wrapCommand's own path resolution included, as a tool call pays it), and of a `deno` hello-world, plain
 * and in a plugin-style `only_granted` sandbox; and a sandboxed `cat` with the issue-21 mechanisms (the
 * launcher shell's rlimits, pids and memory cgroups where writable, the seccomp filter on fd 3, sized scratch
 * filesystems, .git/config masks) against the same bwrap call without them (bwrap spawned directly, no
 * seccomp), as before; and the same `cat` with net: false, net: true and a host list (bridge and proxy);
 * interleaved A B A B in one run. Given a second checkout (`BASELINE`, e.g. `git archive` of an older main),
 * instead a sandboxed shell call and a host-list call (curl through the bridge and proxy to a granted local
 * server) with that checkout's sandbox code against this one's, interleaved, and the baseline's own times.
 * Run: `deno run -A bench/sandbox_bench.ts [rounds] [BASELINE]`.
 */
import { dirname } from "node:path";
import { probeSandbox } from "../runtime/sandbox/probe.ts";
import { type SandboxPolicy, wrapCommand } from "../runtime/sandbox/sandbox.ts";
import { fmt, interleave, median, report, spread } from "./_stats.ts";
import { testBridge } from "../runtime/sandbox/_testing.ts";

const rounds = Number(Deno.args[0] ?? 40);
const probe = await probeSandbox({ path: Deno.env.get("PATH") ?? "" });
if (!probe.ok) {
  console.error(`sandbox bench skipped: ${probe.reason}; ${probe.hint}`);
  Deno.exit(0);
}
const bwrap = probe;
const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-sandbox-bench-" }));
await Deno.mkdir(`${dir}/out`);
await Deno.writeTextFile(`${dir}/hello.js`, "console.log('hi');\n");
const deno = await Deno.realPath(Deno.execPath());
const env = { PATH: "/usr/local/bin:/usr/bin:/bin" };

async function spawn(cmd: string, args: string[], options: { cwd: string; env: Record<string, string> }) {
  const started = performance.now();
  const out = await new Deno.Command(cmd, { args, ...options, clearEnv: true, stdin: "null", stdout: "null" })
    .output();
  const elapsed = performance.now() - started;
  if (!out.success) throw new Error(`${cmd} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  return elapsed;
}

async function sandboxed(argv: string[], policy: SandboxPolicy, using = bwrap): Promise<number> {
  const started = performance.now();
  const wrapped = wrapCommand(argv, policy, { bwrap: using });
  const out = await new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "null", stdout: "null" }).output();
  const elapsed = performance.now() - started;
  if (!out.success) {
    throw new Error(`sandboxed ${argv[0]} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return elapsed;
}

/** The same call as before the sandbox limits: bwrap spawned directly, without launcher, rlimits, cgroup or seccomp. */
async function withoutV2(argv: string[], policy: SandboxPolicy): Promise<number> {
  const started = performance.now();
  const wrapped = wrapCommand(argv, policy, { bwrap });
  const at = wrapped.args.indexOf(bwrap.path);
  const args = wrapped.args.slice(at + 1);
  const seccomp = args.indexOf("--seccomp");
  if (seccomp >= 0) args.splice(seccomp, 2);
  const out = await new Deno.Command(bwrap.path, { ...wrapped, args, stdin: "null", stdout: "null" })
    .output();
  const elapsed = performance.now() - started;
  if (!out.success) throw new Error(`${argv[0]} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  return elapsed;
}

// PWD set as the shell tool's policy sets it (tools/shell/sandbox.ts); the plugin policy leaves it out.
const shellPolicy: SandboxPolicy = {
  read: [dir],
  write: [`${dir}/out`],
  net: false,
  env: { ...env, PWD: dir },
  cwd: dir,
};
const pluginPolicy: SandboxPolicy = {
  visible: "only_granted",
  read: [dir, dirname(deno)],
  write: [],
  net: false,
  env: { NO_COLOR: "1", DENO_DIR: "/tmp/.deno" }, // as plugins get it
  cwd: dir,
};
const denoArgs = ["run", "--no-prompt", "--no-npm", "--no-remote", "--no-config", "--no-lock", "hello.js"];

/** `+3.10 ms (2.71–4.02)`: the difference of the medians, and the range of the per-round differences. */
function delta(measured: number[], baseline: number[]): string {
  const rounds = measured.map((ms, i) => ms - baseline[i]!);
  const sign = (ms: number) => `${ms < 0 ? "−" : "+"}${fmt(Math.abs(ms))}`;
  return `${sign(median(measured) - median(baseline))} (${sign(Math.min(...rounds))}–${
    sign(Math.max(...rounds))
  })`;
}

try {
  console.log(`bubblewrap ${bwrap.version} at ${bwrap.path}, ${rounds} rounds`);
  if (Deno.args[1]) {
    await againstBaseline(Deno.args[1], shellPolicy);
    await Deno.remove(dir, { recursive: true });
    Deno.exit(0);
  }
  const shell = await interleave({
    plain: () => spawn("bash", ["-c", "true"], { cwd: dir, env }),
    all: () => sandboxed(["bash", "-c", "true"], shellPolicy),
    only_granted: () => sandboxed(["bash", "-c", "true"], { ...shellPolicy, visible: "only_granted" }),
  }, { rounds, warmup: 3 });
  report("bash -c true, plain", spread(shell.plain));
  report("bash -c true, sandboxed (visible: all)", spread(shell.all));
  report("bash -c true, sandboxed (visible: only_granted)", spread(shell.only_granted));
  report("shell call overhead (all)", delta(shell.all, shell.plain), "≤ +10 ms");
  report("shell call overhead (only_granted)", delta(shell.only_granted, shell.plain), "≤ +10 ms");
  const cat = ["bash", "-c", `cat ${dir}/hello.js`];
  const v2 = await interleave({
    before: () => withoutV2(cat, shellPolicy),
    now: () => sandboxed(cat, shellPolicy),
    // What the cgroups cost: the pids one alone, and neither (rlimits only).
    pids_only: () => sandboxed(cat, shellPolicy, { ...bwrap, cgroups: { ...bwrap.cgroups, memory: null } }),
    rlimits_only: () => sandboxed(cat, shellPolicy, { ...bwrap, cgroups: { pids: null, memory: null } }),
  }, { rounds, warmup: 3 });
  const { pids, memory } = bwrap.cgroups;
  const where = (c: typeof pids) => c ? `cgroup v${c.version} in ${c.parent}` : "none";
  console.log(`cgroups: pids ${where(pids)}; memory ${where(memory)}`);
  report("sandboxed cat, without the issue-21 mechanisms", spread(v2.before));
  report("sandboxed cat, with them (limits, cgroups, seccomp)", spread(v2.now));
  report("cost of the issue-21 mechanisms", delta(v2.now, v2.before), "≤ +3 ms");
  if (pids && memory) {
    report("sandboxed cat, with them but only the pids cgroup", spread(v2.pids_only));
    report("cost of the memory cgroup over the pids one", delta(v2.now, v2.pids_only));
  }
  if (pids || memory) {
    report("sandboxed cat, with them but no cgroup", spread(v2.rlimits_only));
    report("cost without the cgroups", delta(v2.rlimits_only, v2.before), "≤ +3 ms");
    report("cost of the cgroups", delta(v2.now, v2.rlimits_only));
  }
  // A host list: the same call with the bridge and proxy (its forwarder is a deno started by nsenter).
  const hostList = ["example.com:443"];
  const listed = async () => {
    const started = performance.now();
    const bridge = await testBridge(bwrap, hostList);
    try {
      const wrapped = wrapCommand(cat, { ...shellPolicy, net: hostList }, { bwrap, bridge });
      const child = new Deno.Command(wrapped.cmd, {
        ...wrapped,
        stdin: "null",
        stdout: "null",
        stderr: "null",
      })
        .spawn();
      const [out] = await Promise.all([child.status, bridge.attach()]);
      if (!out.success) throw new Error(`sandboxed cat with a host list exited ${out.code}`);
    } finally {
      await bridge.close();
    }
    return performance.now() - started;
  };
  const net = await interleave({
    none: () => sandboxed(cat, shellPolicy),
    host: () => sandboxed(cat, { ...shellPolicy, net: true }),
    list: listed,
  }, { rounds: Math.max(5, Math.round(rounds / 2)), warmup: 2 });
  report("sandboxed cat, net: false", spread(net.none));
  report("sandboxed cat, net: true", spread(net.host));
  report("sandboxed cat, net: [host list] (bridge and proxy)", spread(net.list));
  report("cost of a host list over net: false", delta(net.list, net.none));
  const plugin = await interleave({
    plain: () => spawn(deno, denoArgs, { cwd: dir, env: { NO_COLOR: "1" } }),
    sandboxed: () => sandboxed([deno, ...denoArgs], pluginPolicy),
  }, { rounds: Math.max(5, Math.round(rounds / 3)), warmup: 2 });
  report("deno hello.js, plain", spread(plugin.plain));
  report("deno hello.js, sandboxed (plugin policy)", spread(plugin.sandboxed));
  report("deno start overhead in the sandbox", delta(plugin.sandboxed, plugin.plain));
} finally {
  await Deno.remove(dir, { recursive: true });
}

type SandboxModules = {
  wrapCommand: typeof wrapCommand;
  bwrap: typeof bwrap;
  testBridge: typeof testBridge;
};

/** The sandbox code of a checkout at `root` (probe, wrapCommand, the test bridge and proxy), imported as is. */
async function sandboxOf(root: string): Promise<SandboxModules> {
  const url = (path: string) => new URL(path, `file://${root.replace(/\/?$/, "/")}`).href;
  const { probeSandbox } = await import(url("runtime/sandbox/probe.ts"));
  const { wrapCommand } = await import(url("runtime/sandbox/sandbox.ts"));
  const { testBridge } = await import(url("runtime/sandbox/_testing.ts"));
  const probe = await probeSandbox({ path: Deno.env.get("PATH") ?? "" });
  if (!probe.ok) throw new Error(`the sandbox of ${root} does not start: ${probe.reason}`);
  return { wrapCommand, bwrap: probe, testBridge };
}

/** A sandboxed shell call and a host-list call, this checkout's code against the baseline's, interleaved. */
async function againstBaseline(root: string, policy: SandboxPolicy): Promise<void> {
  const [before, after] = [await sandboxOf(root), await sandboxOf(new URL("..", import.meta.url).pathname)];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => new Response("ok\n"));
  const hosts = [`127.0.0.1:${server.addr.port}`];
  const shellCall = (m: SandboxModules) => async () => {
    const started = performance.now();
    const wrapped = m.wrapCommand(["bash", "-c", `cat ${policy.cwd}/hello.js`], policy, { bwrap: m.bwrap });
    const out = await new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "null", stdout: "null" }).output();
    if (!out.success) throw new Error(`sandboxed shell call exited ${out.code}`);
    return performance.now() - started;
  };
  const listCall = (m: SandboxModules) => async () => {
    const started = performance.now();
    const bridge = await m.testBridge(m.bwrap, hosts);
    try {
      const curl = ["curl", "-sS", "-o", "/dev/null", "-m", "10", `http://${hosts[0]}/`];
      const wrapped = m.wrapCommand(curl, { ...policy, net: hosts }, { bwrap: m.bwrap, bridge });
      const child = new Deno.Command(wrapped.cmd, {
        ...wrapped,
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      })
        .spawn();
      const [out] = await Promise.all([child.output(), bridge.attach()]);
      if (!out.success) throw new Error(`host-list call: ${new TextDecoder().decode(out.stderr)}`);
    } finally {
      await bridge.close();
    }
    return performance.now() - started;
  };
  // What a call computes in this process before it spawns (the policy, the filter check, the git config
  // masks), and what the proxy computes per request (the address check): small enough to be lost in the
  // spawn's spread above, so timed on their own, 200 at a time.
  const wrapOnly = (m: SandboxModules) => () => {
    const started = performance.now();
    for (let i = 0; i < 200; i++) m.wrapCommand(["bash", "-c", "true"], policy, { bwrap: m.bwrap });
    return Promise.resolve((performance.now() - started) / 200);
  };
  const url = (path: string) => new URL(path, `file://${root.replace(/\/?$/, "/")}`).href;
  const { isInternalAddress: oldCheck } = await import(url("runtime/sandbox/net_hosts.ts"));
  const { isInternalAddress, ownAddresses } = await import("../runtime/sandbox/ip_address.ts");
  const checkOf = (check: () => boolean) => () => {
    const started = performance.now();
    for (let i = 0; i < 200; i++) check();
    return Promise.resolve((performance.now() - started) / 200);
  };
  try {
    const inProcess = await interleave({
      wrapBefore: wrapOnly(before),
      wrapAfter: wrapOnly(after),
      checkBefore: checkOf(() => oldCheck("93.184.216.34")),
      checkAfter: checkOf(() => isInternalAddress("93.184.216.34", { own: ownAddresses() })),
    }, { rounds, warmup: 3 });
    report("wrapCommand per call, baseline checkout", spread(inProcess.wrapBefore));
    report("wrapCommand per call, this checkout", spread(inProcess.wrapAfter));
    report("this checkout over the baseline (wrapCommand)", delta(inProcess.wrapAfter, inProcess.wrapBefore));
    report("proxy address check per request, baseline", spread(inProcess.checkBefore));
    report("proxy address check per request, this checkout", spread(inProcess.checkAfter));
    report(
      "this checkout over the baseline (address check)",
      delta(inProcess.checkAfter, inProcess.checkBefore),
    );
    const shell = await interleave({ before: shellCall(before), after: shellCall(after) }, {
      rounds,
      warmup: 3,
    });
    report("sandboxed shell call, baseline checkout", spread(shell.before));
    report("sandboxed shell call, this checkout", spread(shell.after));
    report("this checkout over the baseline (shell call)", delta(shell.after, shell.before), "≤ +1 ms");
    const list = await interleave({ before: listCall(before), after: listCall(after) }, {
      rounds: Math.max(5, Math.round(rounds / 2)),
      warmup: 2,
    });
    report("host-list call (curl via proxy), baseline checkout", spread(list.before));
    report("host-list call (curl via proxy), this checkout", spread(list.after));
    report("this checkout over the baseline (host-list call)", delta(list.after, list.before), "≤ +1 ms");
  } finally {
    await server.shutdown();
  }
}
