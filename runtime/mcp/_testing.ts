/**
 * The official MCP reference servers for tests, installed once per machine into a cache directory that
 * every test process shares (a `mkdir` lock, so parallel test files never download them twice), and run
 * with the system `node` — inside the sandbox like any stdio server.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";

export const EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31";
export const FILESYSTEM = "@modelcontextprotocol/server-filesystem@2026.8.31";
const CACHE = join(tmpdir(), "hermes-mcp-reference-2026.8.31");
/** A lock older than this is from a killed installer: take it over. */
const STALE_MS = 5 * 60_000;

export interface ReferenceServers {
  /** Absolute path of the `mcp-server-everything` bin. */
  everything: string;
  /** Absolute path of the `mcp-server-filesystem` bin. */
  filesystem: string;
  /** The install directory (node_modules inside), to grant read in a sandbox policy. */
  dir: string;
}

export async function referenceServers(): Promise<ReferenceServers> {
  const bins = {
    everything: join(CACHE, "node_modules", ".bin", "mcp-server-everything"),
    filesystem: join(CACHE, "node_modules", ".bin", "mcp-server-filesystem"),
    dir: CACHE,
  };
  const ready = join(CACHE, "ready");
  const failed = join(tmpdir(), "hermes-mcp-reference.failed");
  const lock = join(tmpdir(), "hermes-mcp-reference.lock");
  for (;;) {
    if (await exists(ready)) return bins;
    // A failed install fails every test file that waited for it at once, not one after another.
    const failure = await Deno.readTextFile(failed).catch(() => null);
    const failedAt = (await Deno.stat(failed).catch(() => null))?.mtime?.getTime() ?? 0;
    if (failure !== null && Date.now() - failedAt < STALE_MS) throw new Error(failure);
    try {
      await Deno.mkdir(lock);
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      const age = Date.now() - ((await Deno.stat(lock).catch(() => null))?.mtime?.getTime() ?? Date.now());
      if (age > STALE_MS) await Deno.remove(lock, { recursive: true }).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    try {
      if (!(await exists(ready))) {
        await Deno.mkdir(CACHE, { recursive: true });
        const out = await installWithin(INSTALL_TIMEOUT_MS, failed, {
          args: [
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--prefix",
            CACHE,
            EVERYTHING,
            FILESYSTEM,
          ],
        });
        if (out.code !== 0) {
          const message = `npm install of the MCP reference servers failed: ${
            new TextDecoder().decode(out.stderr)
          }`;
          await Deno.writeTextFile(failed, message);
          throw new Error(message);
        }
        await Deno.remove(failed).catch(() => {});
        await Deno.writeTextFile(ready, new Date().toISOString());
      }
    } finally {
      await Deno.remove(lock, { recursive: true }).catch(() => {});
    }
  }
}

/**
 * npm retries a registry it cannot reach (or whose certificate it does not trust) for minutes: the install
 * is bounded, so a test that needs the servers fails saying why instead of hanging the suite.
 */
const INSTALL_TIMEOUT_MS = 180_000;

async function installWithin(
  ms: number,
  failed: string,
  { args }: { args: string[] },
): Promise<Deno.CommandOutput> {
  const child = new Deno.Command("npm", { args, stdin: "null", stdout: "piped", stderr: "piped" }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), ms);
  try {
    const out = await child.output();
    if (out.signal === "SIGKILL") {
      const message = `npm install of the MCP reference servers did not finish within ${ms / 1000} s ` +
        "(is the npm registry reachable, and its certificate trusted by this user's npm config?)";
      await Deno.writeTextFile(failed, message);
      throw new Error(message);
    }
    return out;
  } finally {
    clearTimeout(timer);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** `mcp-server-everything streamableHttp` on a free port, until `close`. */
export async function httpEverything(): Promise<{ url: string; close(): Promise<void> }> {
  const { everything } = await referenceServers();
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const child = new Deno.Command(everything, {
    args: ["streamableHttp"],
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/listening/i.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the HTTP server did not start: ${seen}`);
    seen += value;
  }
  const drained = (async () => {
    while (!(await reader.read()).done) { /* keep stderr flowing */ }
  })();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      child.kill("SIGTERM");
      await Promise.all([child.status, drained]);
    },
  };
}
