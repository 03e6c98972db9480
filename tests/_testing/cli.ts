/** Spawns the real CLI (`deno run -A main.ts …`) for tests. */
import { dirname } from "node:path";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
export const MAIN = `${ROOT}/main.ts`;
export { ROOT };

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
  home?: string;
}

export interface SpawnOptions extends Omit<CliOptions, "stdin"> {
  /** A piped stdin the test writes (a protocol server: rpc, acp); default none. */
  stdin?: "piped" | "null";
}

export async function hermes(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const command = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...(options.home ? ["--home", options.home] : []), ...args],
    cwd: options.cwd ?? ROOT,
    env: { NO_COLOR: "1", ...options.env },
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = command.spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** Spawns the CLI without waiting, for signal and kill tests and protocol servers (`stdin: "piped"`). */
export function spawnHermes(args: string[], options: SpawnOptions = {}): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...(options.home ? ["--home", options.home] : []), ...args],
    cwd: options.cwd ?? ROOT,
    env: { NO_COLOR: "1", ...options.env },
    stdin: options.stdin ?? "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

export async function tempDir(prefix = "hermes-test-"): Promise<string> {
  return await Deno.makeTempDir({ prefix });
}

/** Writes files (path → content) under dir; returns dir. */
export async function writeFiles(dir: string, files: Record<string, string>): Promise<string> {
  for (const [path, content] of Object.entries(files)) {
    const full = `${dir}/${path}`;
    await Deno.mkdir(dirname(full), { recursive: true });
    await Deno.writeTextFile(full, content);
  }
  return dir;
}

/** `hermes run job.yaml --output stream-json` inside `dir` (also the home): the exit code and parsed events. */
export async function runEvents(
  dir: string,
  options: { env?: Record<string, string>; args?: string[] } = {},
): Promise<{ code: number; stderr: string; events: Record<string, unknown>[] }> {
  const { code, stdout, stderr } = await hermes(
    ["run", "job.yaml", "--output", "stream-json", ...(options.args ?? [])],
    { cwd: dir, home: dir, ...(options.env ? { env: options.env } : {}) },
  );
  const events = stdout.trim() === "" ? [] : stdout.trim().split("\n").map((line) => JSON.parse(line));
  return { code, stderr, events };
}
