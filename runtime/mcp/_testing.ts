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
  const lock = join(tmpdir(), "hermes-mcp-reference.lock");
  for (;;) {
    if (await exists(ready)) return bins;
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
        const out = await new Deno.Command("npm", {
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
          stdout: "piped",
          stderr: "piped",
        }).output();
        if (out.code !== 0) {
          throw new Error(
            `npm install of the MCP reference servers failed: ${new TextDecoder().decode(out.stderr)}`,
          );
        }
        await Deno.writeTextFile(ready, new Date().toISOString());
      }
    } finally {
      await Deno.remove(lock, { recursive: true }).catch(() => {});
    }
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
