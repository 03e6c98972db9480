/** Test helper: runs the real CLI (`deno run -A main.ts …`) from the repo root as a subprocess. */
import { type CliResult, ROOT as REPO_ROOT } from "../../tests/_testing/cli.ts";

export { type CliResult, hermes } from "../../tests/_testing/cli.ts";

/** True when util-linux `script` (which gives a child a pseudo-terminal) is installed. */
export function canFakeTerminal(): boolean {
  try {
    return new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

/** Runs the CLI with a pseudo-terminal as stdin and stdout (stderr is merged into stdout by the terminal). */
export async function hermesOnTerminal(args: string[], input = ""): Promise<CliResult> {
  const command = [Deno.execPath(), "run", "-A", "main.ts", ...args].map(shellQuote).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qec", command, "/dev/null"],
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout).replaceAll("\r\n", "\n"), stderr: decoder.decode(stderr) };
}

function shellQuote(arg: string): string {
  return /^[\w./=:-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** A user error: exit 2 and one `hermes: …` line on stderr, no stack trace. */
export function isUserError(result: CliResult): boolean {
  const lines = result.stderr.trimEnd().split("\n");
  return result.code === 2 && lines.length === 1 && /^hermes( [a-z]+)*: /.test(lines[0]!) &&
    !/\bat \S+:\d+/.test(
      result.stderr,
    );
}

/**
 * A stored session of job "release" on the scripted model answering `replies` (written to replies.json in the
 * store's directory), with ten alternating user/assistant messages of `text` plus their index: enough of a
 * middle for `sessions compact` to summarise.
 */
export async function storedRelease(
  fx: { dir: string; store: StoredReleaseStore },
  replies: unknown[],
  options: { text: string; model?: Record<string, unknown> },
): Promise<string> {
  await Deno.writeTextFile(`${fx.dir}/replies.json`, JSON.stringify(replies));
  const spec = {
    name: "release",
    model: { provider: "scripted", script: "replies.json", ...options.model },
    compaction: { protect_first: 1, protect_last: 2 },
  };
  const { id } = await fx.store.createSession({
    job: "release",
    config_json: JSON.stringify({ spec, dir: fx.dir }),
  });
  await fx.store.appendMessages(
    id,
    Array.from({ length: 10 }, (_, i) => ({
      role: i % 2 === 0 ? "user" as const : "assistant" as const,
      content: options.text.replace("{i}", String(i)),
    })),
  );
  return id;
}

interface StoredReleaseStore {
  createSession(input: { job: string; config_json: string }): Promise<{ id: string }>;
  appendMessages(id: string, messages: { role: "user" | "assistant"; content: string }[]): Promise<unknown>;
}
