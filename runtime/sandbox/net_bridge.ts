/**
 * A host list for a sandbox (docs/sandbox.md "Network host lists"): the sandbox keeps its own network
 * namespace (only loopback, no route anywhere), and the one way out is a bridge on 127.0.0.1:3128 inside
 * it that forwards each connection to the filtering proxy (net_proxy.ts) on a unix socket in Hermes's
 * private directory. Programs that honour HTTP(S)_PROXY reach the granted hosts; anything else reaches
 * nothing, whatever it runs.
 *
 * The bridge is started from outside, so neither the seccomp filter (no unix sockets inside) nor the
 * sandbox's mounts apply to it: bwrap gets `--info-fd 4` (it writes the sandbox's pid there) and
 * `--block-fd 5` (it waits before running the command), both FIFOs here that the launcher shell opens.
 * Hermes reads the pid, runs `nsenter --net` (and `--user`, into the user namespace bwrap made) with a
 * small deno forwarder, waits until it listens, then unblocks bwrap. The forwarder exits when its stdin
 * closes (Hermes ends the sandbox or dies); Hermes ends it when the sandbox's pid is gone.
 */
import { join } from "../core/path.ts";
import type { HostRule } from "./net_hosts.ts";
import { type NetProxy, type Refusal, startNetProxy } from "./net_proxy.ts";
import type { WrappedCommand } from "./sandbox.ts";

/** The bridge's port inside the sandbox: a fresh network namespace has every port free. */
export const BRIDGE_PORT = 3128;

/** The programs the bridge needs (`findBridgeTools`). */
export interface BridgeTools {
  nsenter: string;
  mkfifo: string;
  /** The deno that runs the forwarder. */
  deno: string;
}

/** What wrapCommand needs: the FIFOs the launcher opens on fds 4 and 5. */
export interface BridgeFifos {
  info: string;
  block: string;
}

export interface NetBridge {
  fifos: BridgeFifos;
  /** The proxy variables the command gets (both cases, every scheme). */
  env: Record<string, string>;
  /** After the sandbox was spawned: starts the forwarder in its network namespace and lets it run. */
  attach(): Promise<void>;
  /** Ends the forwarder and the proxy and removes the directory; safe at any point, and twice. */
  close(): Promise<void>;
}

const FORWARDER =
  `// Hermes's sandbox bridge: 127.0.0.1:PORT inside the sandbox's network namespace -> the proxy's socket.
const [port, socket] = Deno.args;
let listener;
for (let i = 0; ; i++) {
  try { listener = Deno.listen({ hostname: "127.0.0.1", port: Number(port) }); break; }
  catch (error) { if (i >= 200) throw error; await new Promise((r) => setTimeout(r, 5)); }
}
(async () => { const b = new Uint8Array(64); while ((await Deno.stdin.read(b)) !== null); Deno.exit(0); })();
await Deno.stdout.write(new TextEncoder().encode("ready\\n"));
for await (const conn of listener) {
  Deno.connect({ transport: "unix", path: socket }).then((up) => {
    conn.readable.pipeTo(up.writable).catch(() => {});
    up.readable.pipeTo(conn.writable).catch(() => {});
  }, () => conn.close());
}
`;

/** What the forwarder's deno needs of an environment (a home and cache directory, the PATH). */
export function forwarderEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["HOME", "DENO_DIR", "PATH"]) if (env[name]) out[name] = env[name]!;
  return out;
}

export function findBridgeTools(deno: string | null): BridgeTools | string {
  if (deno === null) return "no deno to run the bridge with was found (set HERMES_DENO or put deno on PATH)";
  const nsenter = firstFile(["/usr/bin/nsenter", "/bin/nsenter", "/usr/sbin/nsenter", "/sbin/nsenter"]);
  if (nsenter === null) return "nsenter (util-linux) is not installed";
  const mkfifo = firstFile(["/usr/bin/mkfifo", "/bin/mkfifo"]);
  if (mkfifo === null) return "mkfifo (coreutils) is not installed";
  return { nsenter, mkfifo, deno };
}

/**
 * Starts the proxy for `rules` and prepares the FIFOs, in a fresh 0700 directory below `privateDir` (the
 * directory of the seccomp filter). `env` is the forwarder deno's environment (HOME, DENO_DIR).
 */
export async function openNetBridge(
  rules: readonly HostRule[],
  options: {
    privateDir: string;
    tools: BridgeTools;
    env: Record<string, string>;
    onRefusal?: (refusal: Refusal) => void;
  },
): Promise<NetBridge> {
  const dir = await Deno.makeTempDir({ dir: options.privateDir, prefix: "net-" });
  const fifos = { info: join(dir, "info"), block: join(dir, "block") };
  const { tools } = options;
  let proxy: NetProxy | null = null;
  let forwarder: Deno.ChildProcess | null = null;
  let closed = false;
  let closing: Promise<void> | undefined;
  let watch: ReturnType<typeof setInterval> | undefined;
  /** FIFO ends opened by attach, and the ones it still waits for (opened from here to unstick it on close). */
  const held: Deno.FsFile[] = [];
  const waiting = new Set<{ path: string; other: "read" | "write" }>();
  const openFifo = async (path: string, mode: "read" | "write") => {
    const wait = { path, other: mode === "read" ? "write" as const : "read" as const };
    waiting.add(wait);
    try {
      const file = await Deno.open(path, mode === "read" ? { read: true } : { write: true });
      held.push(file);
      if (closed) throw new Error("Cannot start the sandbox's network bridge: the sandbox was ended");
      return file;
    } finally {
      waiting.delete(wait);
    }
  };
  try {
    const made = await new Deno.Command(tools.mkfifo, { args: ["-m", "600", fifos.info, fifos.block] })
      .output();
    if (!made.success) throw new Error(`Cannot create the sandbox's network FIFOs in ${dir}`);
    const script = join(dir, "forwarder.js");
    await Deno.writeTextFile(script, FORWARDER, { mode: 0o400, createNew: true });
    proxy = startNetProxy(join(dir, "proxy.sock"), rules, options.onRefusal);
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  const url = `http://127.0.0.1:${BRIDGE_PORT}`;
  const env: Record<string, string> = {};
  for (const name of ["http_proxy", "https_proxy", "all_proxy"]) {
    env[name] = url;
    env[name.toUpperCase()] = url;
  }
  env.no_proxy = "";
  env.NO_PROXY = "";
  return {
    fifos,
    env,
    async attach() {
      const info = await openFifo(fifos.info, "read");
      const block = await openFifo(fifos.block, "write");
      const pid = await childPid(info);
      const ownUserNs = await sameUserNamespace(pid);
      if (!ownUserNs) await mapped(pid);
      forwarder = new Deno.Command(tools.nsenter, {
        args: [
          "--target",
          String(pid),
          "--net",
          // bwrap made a user namespace (always as non-root): joining it is what lets us enter its netns.
          ...(ownUserNs ? [] : ["--user", "--preserve-credentials"]),
          "--",
          tools.deno,
          "run",
          "--no-config",
          "--no-lock",
          "--no-prompt",
          `--allow-net=127.0.0.1:${BRIDGE_PORT},unix:${proxy!.path}`,
          `--allow-read=${proxy!.path}`,
          `--allow-write=${proxy!.path}`,
          join(dir, "forwarder.js"),
          String(BRIDGE_PORT),
          proxy!.path,
        ],
        env: { ...options.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const ready = await firstLine(forwarder.stdout);
      if (ready !== "ready") {
        const why = new TextDecoder().decode(await new Response(forwarder.stderr).arrayBuffer()).trim();
        throw new Error(`Cannot start the sandbox's network bridge: ${why || "the forwarder exited"}`);
      }
      forwarder.stderr.cancel().catch(() => {});
      // Ended with the sandbox even when its starter never says so (an MCP server that exits by itself):
      // the sandbox's pid is watched; the forwarder also exits when Hermes dies (its stdin closes).
      const timer = setInterval(() => {
        Deno.stat(`/proc/${pid}`).catch(() => closing ??= end());
      }, 1000);
      Deno.unrefTimer(timer);
      watch = timer;
      await block.write(new Uint8Array([1]));
    },
    close() {
      return closing ??= end();
    },
  };

  async function end(): Promise<void> {
    closed = true;
    clearInterval(watch);
    for (const wait of waiting) {
      // Opening the other end completes the open attach is blocked in.
      await Deno.open(wait.path, wait.other === "read" ? { read: true } : { write: true })
        .then((file) => file.close(), () => {});
    }
    for (const file of held) {
      try {
        file.close();
      } catch {
        // already closed
      }
    }
    const child = forwarder as Deno.ChildProcess | null;
    if (child) {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
      await child.stdin.close().catch(() => {});
      await child.stdout.cancel().catch(() => {});
      await child.stderr.cancel().catch(() => {});
      await child.status;
    }
    proxy?.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Runs a wrapped command to its end, its bridge (if any) attached meanwhile; stdout and stderr piped. */
export async function runBridged(
  wrapped: WrappedCommand,
  bridge: NetBridge | null,
): Promise<Deno.CommandOutput> {
  const child = new Deno.Command(wrapped.cmd, { ...wrapped, stdin: "null", stdout: "piped", stderr: "piped" })
    .spawn();
  const [output] = await Promise.all([child.output(), bridge?.attach()]);
  return output;
}

/** bwrap's `--info-fd` JSON (`{"child-pid": N, …}`), read until it is complete. */
async function childPid(info: Deno.FsFile): Promise<number> {
  let text = "";
  const buffer = new Uint8Array(256);
  while (!text.includes("}")) {
    const n = await info.read(buffer);
    if (n === null) break;
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
  const pid = /"child-pid"\s*:\s*(\d+)/.exec(text)?.[1];
  if (pid === undefined) throw new Error("Cannot start the sandbox's network bridge: bwrap reported no pid");
  return Number(pid);
}

async function sameUserNamespace(pid: number): Promise<boolean> {
  const [theirs, ours] = await Promise.all([
    Deno.readLink(`/proc/${pid}/ns/user`),
    Deno.readLink("/proc/self/ns/user"),
  ]);
  return theirs === ours;
}

/**
 * Waits until bwrap has written the user namespace's uid map: it reports the pid first, and joining the
 * namespace before the map exists leaves nsenter without the right to enter the network namespace (EPERM).
 */
async function mapped(pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await Deno.readTextFile(`/proc/${pid}/uid_map`)).trim() !== "") return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(
    "Cannot start the sandbox's network bridge: bwrap did not map its user namespace within 1s",
  );
}

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string | null> {
  const reader = stream.getReader();
  let text = "";
  try {
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) return null;
      text += new TextDecoder().decode(value);
    }
    return text.slice(0, text.indexOf("\n"));
  } finally {
    reader.releaseLock();
  }
}

function firstFile(paths: readonly string[]): string | null {
  for (const path of paths) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // not here
    }
  }
  return null;
}
